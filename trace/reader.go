package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Reader reads traces one at a time, in the shape of encoding/csv: Next
// returns the next trace, and io.EOF once the input is exhausted. One file
// may hold several traces.
//
// In strict mode (the default) the first bad record ends reading with a
// *ParseError. In lenient mode bad records are skipped and described in
// Report. Either way, a point that exactly repeats the previous one is
// dropped and counted in Report().Deduplicated, and a point with the
// previous point's timestamp but a different position is a bad record
// (ErrTimeConflict): tracepriv never merges such points silently.
type Reader interface {
	Next() (*Trace, error)
	// Report accounts for what has been read so far.
	Report() *Report
}

// ReadOptions configures a Reader.
type ReadOptions struct {
	// Name is the file name used in errors.
	Name string
	// UID is the user id of traces whose format does not carry one (PLT,
	// GPX without a tracepriv uid, CSV without a uid column).
	UID string
	// Lenient skips bad records and reports them instead of failing.
	Lenient bool
	// Location is the time zone of times written without one (PLT's local
	// date and time columns, zone-less CSV times). Nil means UTC.
	Location *time.Location
	// Format overrides the format ReadFile infers from the extension.
	Format Format
}

func (o ReadOptions) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// NewReader returns a Reader of format f over r. PLT and CSV are read line
// by line and GPX token by token; GeoJSON is decoded as one document.
func NewReader(r io.Reader, f Format, opt ReadOptions) (Reader, error) {
	b := &builder{opt: opt, rep: &Report{}}
	switch f {
	case PLT:
		return newPLTReader(r, b), nil
	case CSV:
		return newCSVReader(r, b), nil
	case GeoJSON:
		return newGeoJSONReader(r, b), nil
	case GPX:
		return newGPXReader(r, b), nil
	}
	return nil, fmt.Errorf("unknown trace format %q", f)
}

// ReadAll reads every trace from r.
func ReadAll(r Reader) ([]*Trace, error) {
	var out []*Trace
	for {
		t, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
}

// ReadFile reads every trace in the file at path, in the format given by
// opt.Format or else by the extension. PLT traces are named after the file
// and, unless opt.UID is set, take the GeoLife user id from the directory
// (".../000/Trajectory/x.plt" or ".../000/x.plt" give "000"). On error the
// report still describes what was read.
func ReadFile(path string, opt ReadOptions) ([]*Trace, *Report, error) {
	f := opt.Format
	if f == "" {
		var err error
		if f, err = FormatFromPath(path); err != nil {
			return nil, &Report{}, err
		}
	}
	if opt.Name == "" {
		opt.Name = path
	}
	if f == PLT && opt.UID == "" {
		opt.UID = geolifeUser(path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, &Report{}, err
	}
	defer fh.Close()
	r, err := NewReader(fh, f, opt)
	if err != nil {
		return nil, &Report{}, err
	}
	traces, err := ReadAll(r)
	if f == PLT {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		for _, t := range traces {
			if t.Name == "" {
				t.Name = name
			}
		}
	}
	if err != nil {
		return nil, r.Report(), err
	}
	return traces, r.Report(), nil
}

// geolifeUser returns the user directory of a GeoLife PLT path.
func geolifeUser(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "Trajectory" {
		dir = filepath.Dir(dir)
	}
	if b := filepath.Base(dir); b != "." && b != string(filepath.Separator) {
		return b
	}
	return ""
}

// builder is the bookkeeping every reader shares: strict or lenient
// handling of bad records, de-duplication and the report.
type builder struct {
	opt      ReadOptions
	rep      *Report
	prevLine int // line of the last point added to the current trace
}

// fail builds a ParseError for the current file.
func (b *builder) fail(line int, field, value string, err error) *ParseError {
	return &ParseError{File: b.opt.Name, Line: line, Field: field, Value: value, Err: err}
}

// bad handles a bad record covering n points: it returns e in strict mode,
// or records it and returns nil in lenient mode.
func (b *builder) bad(e *ParseError, n int) error {
	if !b.opt.Lenient {
		return e
	}
	b.rep.record(e, n)
	return nil
}

// add appends p (read at line; rawTime is its time as written) to t,
// dropping an exact repeat of the previous point and rejecting a different
// point at the same time.
func (b *builder) add(t *Trace, p Point, line int, rawTime string) error {
	if n := len(t.Points); n > 0 && t.Points[n-1].Time.Equal(p.Time) {
		if samePoint(t.Points[n-1], p) {
			b.rep.Deduplicated++
			return nil
		}
		return b.bad(b.fail(line, "time", rawTime,
			fmt.Errorf("%w (line %d)", ErrTimeConflict, b.prevLine)), 1)
	}
	t.Points = append(t.Points, p)
	b.prevLine = line
	b.rep.Read++
	return nil
}

// emit counts a finished trace.
func (b *builder) emit(t *Trace) *Trace {
	b.rep.Traces++
	return t
}

// samePoint reports whether a and b are identical (NaN altitudes match).
func samePoint(a, b Point) bool {
	return a.Time.Equal(b.Time) && a.Lat == b.Lat && a.Lon == b.Lon &&
		(a.Alt == b.Alt || math.IsNaN(a.Alt) && math.IsNaN(b.Alt)) &&
		maps.Equal(a.Attrs, b.Attrs)
}

// parseNumber parses a finite decimal number.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ErrNotNumber
	}
	return v, nil
}

// parseCoord parses a latitude (limit 90) or longitude (limit 180).
func parseCoord(s string, limit float64) (float64, error) {
	if s == "" {
		return 0, ErrMissing
	}
	v, err := parseNumber(s)
	if err != nil {
		return 0, err
	}
	if v < -limit || v > limit {
		return 0, fmt.Errorf("%w [%g, %g]", ErrOutOfRange, -limit, limit)
	}
	return v, nil
}

// parseAlt parses an altitude in metres; empty means unknown (NaN).
func parseAlt(s string) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	return parseNumber(s)
}

// zonelessLayouts are accepted after RFC 3339, in loc.
var zonelessLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
}

// parseTime parses an RFC 3339 time (a space may replace the T; a time
// without a zone is in loc) or Unix seconds, integer or fractional, to the
// nanosecond.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, ErrMissing
	}
	t, err := parseAnyTime(s, loc)
	if err != nil {
		return t, err
	}
	return t, checkYear(t)
}

func parseAnyTime(s string, loc *time.Location) (time.Time, error) {
	if t, ok := parseUnix(s); ok {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if len(s) > 10 && s[10] == ' ' {
		if t, err := time.Parse(time.RFC3339Nano, s[:10]+"T"+s[11:]); err == nil {
			return t, nil
		}
	}
	for _, l := range zonelessLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, ErrBadTime
}

// checkYear keeps times within the four-digit years every format (and
// RFC 3339) can write.
func checkYear(t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w (years 0001 to 9999 in UTC)", ErrOutOfRange)
	}
	return nil
}

// parseUnix parses [-]digits[.digits] as Unix seconds exactly (no float
// rounding), truncating beyond nanoseconds.
func parseUnix(s string) (time.Time, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	ip, fp, hasDot := strings.Cut(body, ".")
	if ip == "" || len(ip) > 12 || !allDigits(ip) || (hasDot && (fp == "" || !allDigits(fp))) {
		return time.Time{}, false
	}
	sec, _ := strconv.ParseInt(ip, 10, 64)
	var ns int64
	if fp != "" {
		fp = (fp + "000000000")[:9]
		ns, _ = strconv.ParseInt(fp, 10, 64)
	}
	if neg {
		sec, ns = -sec, -ns
	}
	return time.Unix(sec, ns).UTC(), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lineScanner reads lines, stripping "\r\n", with a bound on line length.
type lineScanner struct {
	sc   *bufio.Scanner
	line int
}

const maxLine = 1 << 20

func newLineScanner(r io.Reader) *lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &lineScanner{sc: sc}
}

// next returns the next line, or ok=false at the end; err is set if the
// input could not be read.
func (s *lineScanner) next() (text string, ok bool, err error) {
	if !s.sc.Scan() {
		err := s.sc.Err()
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: line longer than %d bytes", ErrMalformed, maxLine)
		}
		return "", false, err
	}
	s.line++
	return strings.TrimSuffix(s.sc.Text(), "\r"), true, nil
}
