package trace

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
)

// Writer writes traces in one format. Close finishes the document (the
// closing bracket of a GeoJSON collection, </gpx>) but does not close the
// underlying io.Writer.
type Writer interface {
	Write(*Trace) error
	Close() error
}

// NewWriter returns a Writer of format f on w. A PLT file holds exactly one
// trace; CSV takes its attribute columns from the first trace written (use
// WriteFile to cover all traces).
func NewWriter(w io.Writer, f Format) (Writer, error) {
	return newWriter(w, f, nil)
}

func newWriter(w io.Writer, f Format, csvAttrs []string) (Writer, error) {
	switch f {
	case PLT:
		return &pltWriter{w: w}, nil
	case CSV:
		return newCSVWriter(w, csvAttrs), nil
	case GeoJSON:
		return &geojsonWriter{w: w}, nil
	case GPX:
		return &gpxWriter{w: w}, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownFormat, f)
}

// WriteFile atomically writes traces to path in format f, or in the format
// of path's extension if f is empty. Readers of path never see a partial
// file.
func WriteFile(path string, traces []*Trace, f Format) error {
	if f == "" {
		var err error
		if f, err = FormatFromPath(path); err != nil {
			return err
		}
	}
	if f == PLT && len(traces) != 1 {
		return fmt.Errorf("%s: PLT holds one trace per file, have %d", path, len(traces))
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if err := Write(w, traces, f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

// Write writes traces to w in format f as one document (for a file, see
// WriteFile). CSV attribute columns cover every trace.
func Write(w io.Writer, traces []*Trace, f Format) error {
	if f == PLT && len(traces) != 1 {
		return fmt.Errorf("PLT holds one trace per file, have %d", len(traces))
	}
	tw, err := newWriter(w, f, attrKeys(traces...))
	if err != nil {
		return err
	}
	for _, t := range traces {
		if err := tw.Write(t); err != nil {
			return err
		}
	}
	return tw.Close()
}

// CheckFinite reports the first point of traces that could not be read
// back once written: a coordinate that is not a finite WGS84 position, or
// an infinite altitude (a NaN altitude means none and is fine). The error
// names the trace (1-based, with its name or else its uid) and the point
// (1-based). Call it before WriteFile to refuse such traces.
func CheckFinite(traces []*Trace) error {
	for i, t := range traces {
		for j, p := range t.Points {
			err := p.Geo().Validate()
			if err == nil && math.IsInf(p.Alt, 0) {
				err = fmt.Errorf("altitude %v is not finite", p.Alt)
			}
			if err != nil {
				name := t.Name
				if name == "" {
					name = t.UID
				}
				return fmt.Errorf("trace %d (%s), point %d: %w", i+1, name, j+1, err)
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// strconvFloat formats v in the shortest form that parses back to v.
func strconvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
