package device

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// releaseOptions is the JSON of a release's options: the command line's
// flags of "tracepriv sanitize" under their certificate names.
type releaseOptions struct {
	Epsilon float64 `json:"epsilon"`
	Lambda  float64 `json:"lambda"`
	RadiusM float64 `json:"radius_m"`
	// Output is the released trace's format (default: the input's).
	Output string `json:"output,omitempty"`
	// UID is the person of traces whose data names none (PLT, GPX).
	UID string `json:"uid,omitempty"`
	// PointsOnly and PlacesEveryLength are sanitize.Options'.
	PointsOnly        bool `json:"points_only,omitempty"`
	PlacesEveryLength bool `json:"places_every_length,omitempty"`
	// Ledger is what the certificate states of the ledger the release was
	// charged in (the service's charge, say); a seeded release states
	// budget.Seeded whatever is given.
	Ledger string `json:"ledger,omitempty"`
	// Prior is a public prior family (prior.Prior JSON, as "tracepriv fit"
	// writes it); absent means the bundled family (package sample).
	Prior json.RawMessage `json:"prior,omitempty"`
}

// released is the JSON a Release returns.
type released struct {
	// Format and Trace are the released traces as one file's text.
	Format string `json:"format"`
	Trace  string `json:"trace"`
	// Certificate is the sanitize.Certificate document exactly as
	// sanitize.WriteCertificate writes it (a string, so that its bytes
	// survive), and CertificateSHA256 the SHA-256 of those bytes: what the
	// device names when it charges the release.
	Certificate       string  `json:"certificate"`
	CertificateSHA256 string  `json:"certificate_sha256"`
	EpsilonMax        float64 `json:"epsilon_max"`
	// Seconds is the time the release took. It is kept out of the
	// certificate (whose "seconds" is 0 in a device's release), so that the
	// certificate, and with it its digest, is known before the draw:
	// PlanRelease.
	Seconds     float64 `json:"seconds"`
	Points      int     `json:"points"`
	SkippedRows int     `json:"skipped_rows"`
	Randomness  string  `json:"randomness"`
	Private     bool    `json:"private"`
}

// Release sanitises a recorded trace on the device with conditional
// inferential privacy (sanitize.Release: every point, place and the
// route, one person) and returns the released trace and its certificate as
// one JSON document, so that they travel together. traceData is a file in
// format ("plt", "csv", "geojson" or "gpx"); optionsJSON holds "epsilon",
// "lambda", "radius_m" and optionally "output", "uid", "points_only",
// "places_every_length", "ledger" and "prior". Noise comes from
// crypto/rand.
func Release(traceData []byte, format, optionsJSON string) ([]byte, error) {
	in, err := parseRelease(traceData, format, optionsJSON)
	if err != nil {
		return nil, err
	}
	return in.run(noise.Secure())
}

// ReleaseSeeded is Release drawing from noise.Seeded(seed), for tests
// only: the certificate says "private": false and the randomness.
func ReleaseSeeded(traceData []byte, format, optionsJSON string, seed int64) ([]byte, error) {
	src, err := seeded(seed)
	if err != nil {
		return nil, err
	}
	in, err := parseRelease(traceData, format, optionsJSON)
	if err != nil {
		return nil, err
	}
	return in.run(src)
}

// releaseInput is a parsed release: the person's traces, what reading
// them skipped, the options and the output format.
type releaseInput struct {
	traces []*trace.Trace
	report *trace.Report
	points int
	out    trace.Format
	opt    sanitize.Options // without Source and Ledger
	ledger string
}

func parseRelease(data []byte, format, optionsJSON string) (*releaseInput, error) {
	var o releaseOptions
	if err := decode(optionsJSON, &o, "release options"); err != nil {
		return nil, err
	}
	in, err := trace.ParseFormat(format)
	if err != nil {
		return nil, fmt.Errorf("device: format: %w", err)
	}
	out := in
	if o.Output != "" {
		if out, err = trace.ParseFormat(o.Output); err != nil {
			return nil, fmt.Errorf("device: release options \"output\": %w", err)
		}
	}
	var pr *prior.Prior
	if len(o.Prior) > 0 {
		pr, err = prior.Read(bytes.NewReader(o.Prior))
	} else {
		pr, err = sample.Prior()
	}
	if err != nil {
		return nil, fmt.Errorf("device: release options \"prior\": %w", err)
	}
	uid := o.UID
	if uid == "" {
		uid = "device"
	}
	rd, err := trace.NewReader(bytes.NewReader(data), in, trace.ReadOptions{Name: "trace." + string(in), UID: uid})
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	all, err := trace.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("device: reading the trace: %w", err)
	}
	r := &releaseInput{report: rd.Report(), out: out, ledger: o.Ledger}
	for _, t := range all {
		if t.Len() > 0 {
			r.traces = append(r.traces, t)
			r.points += t.Len()
		}
	}
	if len(r.traces) == 0 {
		return nil, fmt.Errorf("device: the %s trace holds no point (%d rows skipped)", in, rd.Report().SkippedRows())
	}
	// A device releases its own person's traces: one privacy unit, whatever
	// uids the data carries (the service's upload rule, trace.OnePerson).
	trace.OnePerson(uid, "trace", r.traces)
	r.opt = sanitize.Options{Prior: pr, Epsilon: o.Epsilon, Lambda: o.Lambda, Radius: o.RadiusM,
		PointsOnly: o.PointsOnly, PlacesEveryLength: o.PlacesEveryLength}
	return r, nil
}

// options are the release's sanitize.Options with noise from src.
func (r *releaseInput) options(src noise.Source) sanitize.Options {
	opt := r.opt
	opt.Source, opt.Ledger = src, r.ledger
	if !noise.IsSecure(src) {
		opt.Ledger = budget.Seeded
	}
	return opt
}

// run releases the input's traces with noise from src and returns the
// answer's JSON.
func (r *releaseInput) run(src noise.Source) ([]byte, error) {
	outs, cert, err := sanitize.Release(r.traces, r.options(src))
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	doc, digest, seconds, err := r.certificate(cert)
	if err != nil {
		return nil, err
	}
	return r.answer(outs, cert, doc, digest, seconds)
}

// certificate completes cert with what reading the input skipped and
// returns its document (sanitize.WriteCertificate's bytes), their SHA-256
// in hex and the time the release took. The time travels beside the
// certificate, not in it ("seconds" 0): the certificate is then a
// function of public inputs alone, its digest known before anything is
// drawn (PlanRelease).
func (r *releaseInput) certificate(cert *sanitize.Certificate) (doc, digest string, seconds float64, err error) {
	cert.RecordInput(r.report)
	seconds = cert.Seconds
	cert.Seconds = 0
	var cb bytes.Buffer
	if err := sanitize.WriteCertificate(&cb, cert); err != nil {
		return "", "", 0, fmt.Errorf("device: writing the certificate: %w", err)
	}
	sum := sha256.Sum256(cb.Bytes())
	return cb.String(), hex.EncodeToString(sum[:]), seconds, nil
}

// answer is the JSON of a release: the released traces outs and the
// certificate cert as its document doc with digest.
func (r *releaseInput) answer(outs []*trace.Trace, cert *sanitize.Certificate, doc, digest string, seconds float64) ([]byte, error) {
	var tb bytes.Buffer
	if err := trace.Write(&tb, outs, r.out); err != nil {
		return nil, fmt.Errorf("device: writing the released trace: %w", err)
	}
	return json.Marshal(released{
		Format: string(r.out), Trace: tb.String(), Certificate: doc, CertificateSHA256: digest,
		EpsilonMax: cert.EpsilonMax, Seconds: seconds, Points: r.points, SkippedRows: cert.SkippedRows,
		Randomness: cert.Randomness, Private: cert.Private,
	})
}
