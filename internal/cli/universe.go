package cli

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

// UniverseFlags are the public parameters that turn traces into a
// trajectory database: the grid and the mapping rule, and the
// contribution bounds. None may come from the data.
type UniverseFlags struct {
	CellM           float64
	BBox            string
	Alphabet, Base  int
	MaxLen, MaxSeqs int
	MaxGap          time.Duration
	MinLen          int
}

// Add registers the flags on f.
func (u *UniverseFlags) Add(f *pflag.FlagSet) {
	f.Float64Var(&u.CellM, "cell-m", 0, "grid cell size in metres (public)")
	f.StringVar(&u.BBox, "bbox", "", "public bounding box MINLAT,MINLON,MAXLAT,MAXLON of the grid (never taken from the data)")
	f.IntVar(&u.Alphabet, "alphabet", 0, "symbolic input: the input is a sequence file over symbols 0..N-1 (public N) instead of traces on a grid")
	f.IntVar(&u.Base, "base", 0, "symbolic input: the id of the first symbol in the file (1 for MSNBC)")
	def := trajdb.DefaultBounds()
	f.IntVar(&u.MaxLen, "max-len", def.MaxLen, "contribution bound: keep the first L cells of each trajectory")
	f.IntVar(&u.MaxSeqs, "max-seqs", def.MaxSeqs, "contribution bound: keep each person's first K trajectories")
	f.DurationVar(&u.MaxGap, "max-gap", trajdb.DefaultMaxGap, "split a trace where two fixes are further apart in time (negative: never)")
	f.IntVar(&u.MinLen, "min-len", 1, "drop trajectories of fewer cells (after collapsing repeats)")
}

// Grid is the grid of --cell-m and --bbox.
func (u *UniverseFlags) Grid() (*trajdb.Grid, error) {
	if u.BBox == "" {
		return nil, usagef("--bbox is required: give the public box MINLAT,MINLON,MAXLAT,MAXLON of the area released (e.g. 39.75,116.15,40.10,116.60 for Beijing)")
	}
	box, err := trace.ParseBBox(u.BBox)
	if pe := (*param.Error)(nil); errors.As(err, &pe) {
		return nil, usagef("--bbox %q: %s", u.BBox, pe.Why)
	} else if err != nil {
		return nil, fmt.Errorf("--bbox %q: %w", u.BBox, err)
	}
	if !(u.CellM > 0) || math.IsInf(u.CellM, 0) {
		return nil, usagef("--cell-m must be a positive number of metres, got %v", u.CellM)
	}
	g, err := trajdb.NewGrid(box, u.CellM)
	if err != nil {
		return nil, usagef("--cell-m %g --bbox %s: %w", u.CellM, u.BBox, err) // both flags are public choices
	}
	return g, nil
}

// Bounds are the contribution bounds --max-len and --max-seqs.
func (u *UniverseFlags) Bounds() (trajdb.Bounds, error) {
	b := trajdb.Bounds{MaxLen: u.MaxLen, MaxSeqs: u.MaxSeqs}
	if u.MaxLen < 1 {
		return b, usagef("--max-len must be at least 1, got %d", u.MaxLen)
	}
	if u.MaxSeqs < 1 {
		return b, usagef("--max-seqs must be at least 1, got %d", u.MaxSeqs)
	}
	return b, nil
}

// MapOptions are the mapping rule of --max-gap and --min-len.
func (u *UniverseFlags) MapOptions() (trajdb.MapOptions, error) {
	if u.MinLen < 1 {
		return trajdb.MapOptions{}, usagef("--min-len must be at least 1, got %d", u.MinLen)
	}
	gap := u.MaxGap
	if gap == 0 {
		return trajdb.MapOptions{}, usagef("--max-gap 0 would split at every fix; give a duration such as 10m, or -1s to never split")
	}
	return trajdb.MapOptions{MaxGap: gap, MinLen: u.MinLen}, nil
}

// Space is the location universe of a command: a grid for traces, or
// the alphabet of a symbolic sequence file.
type Space struct {
	Grid *trajdb.Grid // nil for symbols
	Size int
	Base int
}

// Space resolves the universe flags: --alphabet for symbolic input, else
// the grid of --cell-m and --bbox.
func (u *UniverseFlags) Space() (*Space, error) {
	if u.Alphabet != 0 {
		if u.BBox != "" || u.CellM != 0 {
			return nil, usagef("--alphabet is for symbolic sequence files; --bbox and --cell-m are for traces: give one or the other")
		}
		if u.Alphabet < 1 || u.Alphabet > trajdb.MaxCells {
			return nil, usagef("--alphabet must be from 1 to %d, got %d", trajdb.MaxCells, u.Alphabet)
		}
		if u.Base < 0 {
			return nil, usagef("--base must be 0 or more, got %d", u.Base)
		}
		return &Space{Size: u.Alphabet, Base: u.Base}, nil
	}
	g, err := u.Grid()
	if err != nil {
		return nil, err
	}
	return &Space{Grid: g, Size: g.Size()}, nil
}

// Read reads a database: a trace directory mapped onto the grid, or a
// symbolic sequence file (then the report is nil).
func (s *Space) Read(env *Env, rf *ReadFlags, u *UniverseFlags, path string) (*trajdb.DB, *trajdb.MapReport, error) {
	if s.Grid != nil {
		return ReadTrajectories(env, rf, u, s.Grid, path)
	}
	db, err := trajdb.ReadSequencesFile(path, trajdb.SeqOptions{Size: s.Size, Base: s.Base})
	return db, nil, err
}

func (s *Space) String() string {
	if s.Grid == nil {
		return fmt.Sprintf("an alphabet of %d symbols", s.Size)
	}
	return s.Grid.String()
}

// ReadTrajectories reads the trace directory in and maps it onto g,
// reporting what reading skipped.
func ReadTrajectories(env *Env, rf *ReadFlags, u *UniverseFlags, g *trajdb.Grid, in string) (*trajdb.DB, *trajdb.MapReport, error) {
	ro, err := rf.Base()
	if err != nil {
		return nil, nil, err
	}
	mo, err := u.MapOptions()
	if err != nil {
		return nil, nil, err
	}
	db, rep, err := trajdb.FromFiles(g, []string{in}, ro, mo)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in, err)
	}
	if rep.Read != nil {
		env.ReportSkipped(rep.Read)
	}
	return db, rep, nil
}
