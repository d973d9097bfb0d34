package trajdb

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// The files of a release directory, as "tracepriv synthesize" and the Beam
// pipeline write it.
const (
	// SeqFile holds the released sequences, one per line (WriteSequences).
	SeqFile = "trajectories.seq"
	// CSVFile holds their cell centres as traces with synthetic times
	// (ToTraces); a symbolic release has none.
	CSVFile = "trajectories.csv"
	// CertificateFile is the Certificate.
	CertificateFile = "release.json"
)

// DefaultNMax is the n-gram tree's height when NGram.NMax is 0.
const DefaultNMax = 5

// DefaultBounds returns the contribution bounds a release uses unless told
// otherwise: each person's first 5 trajectories, each cut to its first 10
// cells. The command line's --max-len and --max-seqs default to them.
func DefaultBounds() Bounds { return Bounds{MaxLen: 10, MaxSeqs: 5} }

// NewMechanism returns the release mechanism called name, MechanismPrefix
// or MechanismNGram (nmax is the n-gram tree's height, 0 for DefaultNMax).
// The negative controls are refused: they are not DP and exist only for
// the audits (NewNegativeControl).
func NewMechanism(name MechanismName, b Bounds, nmax int) (Mechanism, error) {
	if nmax < 0 {
		return nil, fmt.Errorf("trajdb: n-gram height %d: want a positive height (0 for the default %d)", nmax, DefaultNMax)
	}
	switch n := name; n {
	case MechanismPrefix:
		return &Prefix{Contribution: b}, nil
	case MechanismNGram:
		return &NGram{Contribution: b, NMax: nmax}, nil
	default:
		if slices.Contains(NegativeControls(), n) {
			return nil, fmt.Errorf("trajdb: %s is not differentially private (thesis Prop. 3.5); it exists only as a negative control of AuditSupport", n)
		}
	}
	return nil, fmt.Errorf("trajdb: unknown mechanism %q (want %s or %s)", string(name), MechanismPrefix, MechanismNGram)
}

// Certificate is release.json: the public record of a release. Everything
// in it is public (the mechanism's output and its public parameters); what
// the input held (persons, fixes, rows skipped) is not protected and is
// never part of it.
type Certificate struct {
	Version int `json:"version"`
	// Privacy states the guarantee and what it covers.
	Privacy   string        `json:"privacy"`
	Mechanism MechanismName `json:"mechanism"`
	// NMax is the n-gram tree's height: the longest gram counted, NMax
	// capped at the bounds' MaxLen.
	NMax    int     `json:"n_max,omitempty"`
	Epsilon float64 `json:"epsilon"`
	// Universe is the grid of a release of traces (nil for symbols);
	// Alphabet the number of cells or symbols.
	Universe *Grid `json:"universe,omitempty"`
	Alphabet int   `json:"alphabet"`
	// Base is the id of symbol 0 in SeqFile (WriteSynthesis sets it).
	Base   int    `json:"base,omitempty"`
	Bounds Bounds `json:"bounds"`
	// MaxGap and MinLen are the mapping rule of a release of traces.
	MaxGap string `json:"max_gap"`
	MinLen int    `json:"min_len"`
	*Synthetic
	Trajectories int    `json:"trajectories"`
	Randomness   string `json:"randomness"`
}

// NewCertificate describes rel, released by m at epsilon from traces mapped
// onto g with mo, or, with g nil, from a symbolic database over alphabet
// symbols. src is the release's randomness.
func NewCertificate(m Mechanism, rel *Synthetic, epsilon float64, g *Grid, alphabet int, mo MapOptions, src noise.Source) *Certificate {
	c := &Certificate{
		Version: 1, Mechanism: m.Name(), Epsilon: epsilon, Universe: g, Alphabet: alphabet, Bounds: m.Bounds(),
		Synthetic: rel, Trajectories: len(rel.Seqs), Randomness: noise.Describe(src),
		Privacy: fmt.Sprintf("%g-differential privacy at user level, add/remove-one-person: neighbouring inputs differ by one person added or removed, with all of their trajectories (replacing a person's data is two such steps: 2ε); public: the grid, the bounds, the mapping rule and the mechanism", epsilon),
	}
	if g != nil {
		c.Alphabet = g.Size()
		mo, _ = mo.withDefaults()
		c.MaxGap, c.MinLen = mo.MaxGap.String(), mo.MinLen
	} else {
		c.Privacy = fmt.Sprintf("%g-differential privacy at user level, add/remove-one-person: neighbouring inputs differ by one person added or removed, with all of their sequences (a line, or the lines of one id; replacing a person's data is two such steps: 2ε); public: the alphabet, the bounds and the mechanism", epsilon)
	}
	if ng, ok := m.(*NGram); ok {
		c.NMax = ng.height() // the tree's height: NMax capped at MaxLen
	}
	return c
}

// WriteSynthesis writes c's sequences to dir as SeqFile (symbols from base,
// which it records in c.Base), their cell centres as CSVFile when c has a
// grid, and c as CertificateFile, together or not at all, creating dir if
// needed. It returns the paths written; ReadSynthesis reads them back.
func WriteSynthesis(dir string, c *Certificate, base int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c.Base = base
	files := []atomicfile.File{
		{Path: filepath.Join(dir, SeqFile), Perm: 0o644, Fill: func(w io.Writer) error {
			return writeSeqs(w, c.Seqs, c.Alphabet, base)
		}},
		{Path: filepath.Join(dir, CertificateFile), Perm: 0o644, Fill: func(w io.Writer) error { return jsondoc.Write(w, c) }},
	}
	if c.Universe != nil {
		traces, err := ToTraces(c.Universe, c.Seqs)
		if err != nil {
			return nil, err
		}
		files = append(files, atomicfile.File{Path: filepath.Join(dir, CSVFile), Perm: 0o644, Fill: func(w io.Writer) error {
			return trace.Write(w, traces, trace.CSV)
		}})
	}
	if err := atomicfile.WriteGroup(files); err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	return paths, nil
}

// ReadCertificateFile reads a release's CertificateFile, naming path in
// errors. Its Seqs are empty: ReadSynthesis reads them too.
func ReadCertificateFile(path string) (*Certificate, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Certificate
	if err := jsondoc.DecodeVersion(raw, 1, &c); err != nil {
		return nil, fmt.Errorf("%s: release certificate: %w", path, err)
	}
	switch {
	case c.Synthetic == nil || c.Alphabet <= 0:
		return nil, fmt.Errorf("%s: no mechanism record or no alphabet: not a tracepriv synthesize certificate", path)
	case c.Universe != nil && c.Universe.Size() != c.Alphabet:
		return nil, fmt.Errorf("%s: the universe has %d cells but the alphabet %d", path, c.Universe.Size(), c.Alphabet)
	}
	return &c, nil
}

// ReadSynthesis reads the release WriteSynthesis wrote to dir: the
// certificate, with its Seqs read from SeqFile (symbols from c.Base).
func ReadSynthesis(dir string) (*Certificate, error) {
	c, err := ReadCertificateFile(filepath.Join(dir, CertificateFile))
	if err != nil {
		return nil, err
	}
	if c.Seqs, err = readSeqList(filepath.Join(dir, SeqFile), SeqOptions{Size: c.Alphabet, Base: c.Base}); err != nil {
		return nil, err
	}
	if len(c.Seqs) != c.Trajectories {
		return nil, fmt.Errorf("%s: %d sequences, but %s says %d", filepath.Join(dir, SeqFile), len(c.Seqs), CertificateFile, c.Trajectories)
	}
	return c, nil
}

// SameSpace reports whether c was released on grid g or, with g nil, on an
// alphabet of alphabet symbols: whether c's sequences can be compared with
// a database mapped there.
func (c *Certificate) SameSpace(g *Grid, alphabet int) bool {
	if g == nil {
		return c.Universe == nil && c.Alphabet == alphabet
	}
	u := c.Universe
	return u != nil && u.Cols == g.Cols && u.Rows == g.Rows && u.CellM == g.CellM && u.Box == g.Box
}
