package geoind

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// CertificateVersion is the version of the Certificate layout.
const CertificateVersion = 1

// Certificate is the public record of a release of whole traces
// (SanitizeByPerson): the configuration every person's session ran with,
// what each person's release spent, and the randomness. Everything in it
// is public: the configuration was chosen from public inputs, and a
// person's spending and coverage follow from the released points and
// their public timestamps.
type Certificate struct {
	Version int `json:"version"`
	// Privacy states the guarantee and what it covers.
	Privacy string `json:"privacy"`
	// EpsilonPerMetre is ε, each person's budget (Config.Params.Epsilon).
	EpsilonPerMetre float64 `json:"epsilon_per_metre"`
	// TailProb is τ of the additive term of the grid bound (package doc).
	TailProb float64         `json:"tail_prob"`
	Config   Config          `json:"config"`
	People   []PersonRelease `json:"people"`
	// Randomness is "crypto", or "seeded:N" for a seeded run, which
	// carries no guarantee against anyone who knows the seed.
	Randomness string `json:"randomness"`
	// ThinEvery, when set, is the period (a Go duration such as "1m0s")
	// the input was thinned to before release (trace.Thin): each person's
	// points are the fixes kept, chosen by their timestamps alone, and the
	// guarantee, stated over the released points, also holds with d_inf
	// over all the input's fixes (a subset's d_inf is at most the whole's).
	ThinEvery string `json:"thin_every,omitempty"`
	// Ledger names the budget ledger the release was charged in (its base
	// name; docs/ledger.md), or says it was not: "off" (--no-ledger) or
	// "not charged: seeded, not private".
	Ledger string `json:"ledger,omitempty"`
}

// NewCertificate describes a release made by SanitizeByPerson with cfg
// and src.
func NewCertificate(cfg Config, people []PersonRelease, src noise.Source) *Certificate {
	eps := cfg.Params.Epsilon
	return &Certificate{
		Version: CertificateVersion, EpsilonPerMetre: eps, TailProb: TailProb, Config: cfg, People: people,
		Randomness: noise.Describe(src),
		Privacy: fmt.Sprintf("geo-indistinguishability per person: for any two sets of positions of one person at the same public timestamps, "+
			"the probability of any release differs by at most a factor e^(%.6g d_inf) (d_inf the largest distance in metres between corresponding positions, "+
			"each snapped to the %g m grid of the tangent plane at the public origin), up to an additive tail_prob (1 + e^(%.6g d_inf)) per noise draw; "+
			"all traces of a person in this release share the budget, and another release of the same person adds its own ε; public: the origin, the grid, the timestamps, the configuration and the number of points", eps, cfg.Noise.Grid, eps),
	}
}

// WriteCertificate encodes c as indented JSON.
func WriteCertificate(w io.Writer, c *Certificate) error { return jsondoc.Write(w, c) }

// ReadCertificate decodes a certificate written by WriteCertificate,
// refusing other versions, unknown fields and a configuration that does
// not validate.
func ReadCertificate(r io.Reader) (*Certificate, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var c Certificate
	if err := jsondoc.DecodeVersion(b, CertificateVersion, &c); err != nil {
		return nil, fmt.Errorf("geoind certificate: %w", err)
	}
	if err := c.Config.template().Validate(); err != nil {
		return nil, fmt.Errorf("geoind certificate: config: %w", err)
	}
	if c.Config.Manager == ManagerPlanned {
		// Each person's session planned for their points.
		for _, p := range c.People {
			pc := c.Config
			pc.Queries = max(p.Points, 1)
			if err := pc.Validate(); err != nil {
				return nil, fmt.Errorf("geoind certificate: person %s: %d points: config: %w", p.Person, p.Points, err)
			}
		}
	}
	if c.ThinEvery != "" {
		if d, err := time.ParseDuration(c.ThinEvery); err != nil || d <= 0 {
			return nil, fmt.Errorf("geoind certificate: thin_every %q: want a positive Go duration such as \"1m0s\"", c.ThinEvery)
		}
	}
	if c.EpsilonPerMetre != c.Config.Params.Epsilon {
		return nil, fmt.Errorf("geoind certificate: epsilon_per_metre %g differs from the configuration's %g", c.EpsilonPerMetre, c.Config.Params.Epsilon)
	}
	return &c, nil
}

// ReadCertificateFile reads a certificate file, naming it in errors.
func ReadCertificateFile(path string) (*Certificate, error) {
	return jsondoc.ReadFile(path, ReadCertificate)
}

// Files is where a release of traces goes: the released traces, in
// Format, and their certificate, written together or not at all.
type Files struct {
	Traces      string
	Format      trace.Format
	Certificate string
}

// Write writes released and c.
func (f Files) Write(released []*trace.Trace, c *Certificate) error {
	if f.Traces == "" || f.Certificate == "" {
		return errors.New("geoind: a release needs a traces file and a certificate file")
	}
	return atomicfile.WriteGroup([]atomicfile.File{
		{Path: f.Traces, Perm: 0o644, Fill: func(w io.Writer) error { return trace.Write(w, released, f.Format) }},
		{Path: f.Certificate, Perm: 0o644, Fill: func(w io.Writer) error { return WriteCertificate(w, c) }},
	})
}
