package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CSV column roles and the header names accepted for them (any case).
const (
	colUID = iota
	colTime
	colLat
	colLon
	colAlt
	colAttr
)

var csvAliases = map[string]int{
	"uid": colUID, "user": colUID, "user_id": colUID,
	"time": colTime, "t": colTime, "timestamp": colTime, "datetime": colTime,
	"lat": colLat, "latitude": colLat,
	"lon": colLon, "lng": colLon, "long": colLon, "longitude": colLon,
	"alt": colAlt, "altitude": colAlt, "ele": colAlt, "elevation": colAlt,
}

var csvRoleNames = []string{"uid", "time", "lat", "lon", "alt"}

// csvReader streams rows and starts a new trace whenever the uid changes,
// so a uid that comes back after another starts a second trace of that
// uid.
type csvReader struct {
	b      *builder
	in     *tailReader
	cr     *csv.Reader
	header []string
	roles  []int
	idx    [colAttr]int // column of each role, -1 if absent
	cur    *Trace
	done   bool
}

func newCSVReader(r io.Reader, b *builder) *csvReader {
	in := &tailReader{r: &bomSkipper{r: r}}
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1 // we report short rows ourselves, by field
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return &csvReader{b: b, in: in, cr: cr}
}

// tailReader remembers how much was read, whether the input ended, and
// its last byte, so that a last row without a line end can be told.
type tailReader struct {
	r    io.Reader
	n    int64
	eof  bool
	last byte
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.n += int64(n)
		t.last = p[n-1]
	}
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}

// cut reports whether a row ending at offset off is the last of the input
// and has no line end.
func (t *tailReader) cut(off int64) bool {
	return t.eof && off == t.n && t.n > 0 && t.last != '\n'
}

func (r *csvReader) Report() *Report { return r.b.rep }

func (r *csvReader) readHeader() error {
	rec, err := r.cr.Read()
	if err == io.EOF {
		return r.b.fail(1, "", "", fmt.Errorf("%w: no header row (want uid,time,lat,lon)", ErrTruncated))
	}
	if err != nil {
		return r.csvErr(err)
	}
	r.header = slices.Clone(rec)
	r.roles = make([]int, len(rec))
	for i := range r.idx {
		r.idx[i] = -1
	}
	seen := map[string]bool{}
	for i, h := range r.header {
		h = strings.TrimSpace(h)
		r.header[i] = h
		key := strings.ToLower(h)
		if seen[key] {
			return r.b.fail(1, h, "", fmt.Errorf("%w: column appears twice in the header", ErrMalformed))
		}
		seen[key] = true
		role, ok := csvAliases[key]
		if !ok {
			r.roles[i] = colAttr
			continue
		}
		if r.idx[role] >= 0 {
			return r.b.fail(1, h, "", fmt.Errorf("%w: header has both %q and %q", ErrMalformed, r.header[r.idx[role]], h))
		}
		r.roles[i], r.idx[role] = role, i
	}
	for _, role := range []int{colTime, colLat, colLon} {
		if r.idx[role] < 0 {
			return r.b.fail(1, csvRoleNames[role], "", fmt.Errorf("%w from the header (want uid,time,lat,lon)", ErrMissing))
		}
	}
	return nil
}

// csvErr converts an encoding/csv error.
func (r *csvReader) csvErr(err error) *ParseError {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return r.b.fail(pe.Line, "", "", fmt.Errorf("%w: %v", ErrMalformed, pe.Err))
	}
	return r.b.fail(0, "", "", err)
}

func (r *csvReader) Next() (*Trace, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.header == nil {
		if err := r.readHeader(); err != nil {
			r.done = true
			return nil, err
		}
	}
	for {
		rec, err := r.cr.Read()
		if err == io.EOF {
			r.done = true
			if t := r.cur; t != nil {
				r.cur = nil
				return r.b.emit(t), nil
			}
			return nil, io.EOF
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) { // an I/O error: give up
				r.done = true
				return nil, r.csvErr(err)
			}
			if err := r.b.bad(r.csvErr(err), 1); err != nil {
				r.done = true
				return nil, err
			}
			continue
		}
		line, _ := r.cr.FieldPos(0)
		uid, p, raw, perr := r.parse(rec, line)
		if r.in.cut(r.cr.InputOffset()) {
			// A cut last row may still parse, with a cut number.
			perr = r.b.cut(line, perr)
		}
		if perr != nil {
			if err := r.b.bad(perr, 1); err != nil {
				r.done = true
				return nil, err
			}
			continue
		}
		var out *Trace
		if r.cur != nil && r.cur.UID != uid {
			out, r.cur = r.cur, nil
			r.b.carry = nil
		}
		if r.cur == nil {
			r.cur = &Trace{UID: uid}
		}
		if err := r.b.add(r.cur, p, line, raw); err != nil {
			r.done = true
			return nil, err
		}
		if out == nil && r.b.opt.Chunk > 0 && len(r.cur.Points) >= r.b.opt.Chunk {
			// Split the run; the next row is checked against its last point.
			out, r.cur = r.cur, &Trace{UID: uid}
			r.b.carry = &out.Points[len(out.Points)-1]
		}
		if out != nil {
			return r.b.emit(out), nil
		}
	}
}

func (r *csvReader) parse(rec []string, line int) (uid string, p Point, rawTime string, _ *ParseError) {
	if len(rec) < len(r.header) {
		return "", p, "", r.b.fail(line, r.header[len(rec)], "",
			fmt.Errorf("%w (row has %d of %d fields)", ErrMissing, len(rec), len(r.header)))
	}
	if len(rec) > len(r.header) {
		return "", p, "", r.b.fail(line, "", "",
			fmt.Errorf("%w: row has %d fields, header has %d", ErrMalformed, len(rec), len(r.header)))
	}
	uid = r.b.opt.UID
	p.Alt = math.NaN()
	var err error
	for i, v := range rec {
		v = strings.TrimSpace(v)
		switch r.roles[i] {
		case colUID:
			if v != "" {
				uid = v
			}
		case colTime:
			rawTime = v
			p.Time, err = parseTime(v, r.b.opt.loc())
		case colLat:
			if p.Lat, err = parseCoord(v, 90); err != nil {
				return "", Point{}, "", r.b.failCoord(line, r.header[i], v, err)
			}
		case colLon:
			if p.Lon, err = parseCoord(v, 180); err != nil {
				return "", Point{}, "", r.b.failCoord(line, r.header[i], v, err)
			}
		case colAlt:
			p.Alt, err = parseAlt(v)
		case colAttr:
			if v != "" {
				if p.Attrs == nil {
					p.Attrs = map[string]string{}
				}
				p.Attrs[r.header[i]] = v
			}
		}
		if err != nil {
			return "", Point{}, "", r.b.fail(line, r.header[i], v, err)
		}
	}
	return uid, p, rawTime, nil
}

// bomSkipper drops a UTF-8 byte-order mark at the start of the input, as
// spreadsheets write one.
type bomSkipper struct {
	r       io.Reader
	checked bool
	pending []byte
}

func (s *bomSkipper) Read(p []byte) (int, error) {
	if !s.checked {
		s.checked = true
		buf := make([]byte, 3)
		n, err := io.ReadFull(s.r, buf)
		buf = buf[:n]
		if n == 3 && string(buf) == "\ufeff" {
			buf = nil
		}
		s.pending = buf
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return 0, err
		}
	}
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	return s.r.Read(p)
}

// csvWriter writes uid,time,lat,lon,alt and one column per attribute. The
// attribute columns are fixed by the header: those given, or else those of
// the first trace.
type csvWriter struct {
	w      *csv.Writer
	attrs  []string
	fixed  bool
	header bool
	rec    []string
}

func newCSVWriter(w io.Writer, attrs []string) *csvWriter {
	return &csvWriter{w: csv.NewWriter(w), attrs: attrs, fixed: attrs != nil}
}

// attrKeys returns the sorted attribute names used in traces.
func attrKeys(traces ...*Trace) []string {
	set := map[string]bool{}
	for _, t := range traces {
		for _, p := range t.Points {
			for k := range p.Attrs {
				set[k] = true
			}
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (w *csvWriter) Write(t *Trace) error {
	if !w.header {
		if !w.fixed {
			w.attrs = attrKeys(t)
		}
		for _, a := range w.attrs {
			if _, ok := csvAliases[strings.ToLower(strings.TrimSpace(a))]; ok || strings.TrimSpace(a) != a || a == "" {
				return fmt.Errorf("CSV: attribute %q cannot be a column name", a)
			}
		}
		if err := w.w.Write(append(slices.Clone(csvRoleNames), w.attrs...)); err != nil {
			return err
		}
		w.header = true
	}
	known := map[string]bool{}
	for _, a := range w.attrs {
		known[a] = true
	}
	for i, p := range t.Points {
		for k := range p.Attrs {
			if !known[k] {
				return fmt.Errorf("CSV: point %d of trace %q has attribute %q, which is not a column (columns come from the first trace)", i, t.UID, k)
			}
		}
		rec := append(w.rec[:0], t.UID, p.Time.Format(time.RFC3339Nano),
			strconv.FormatFloat(p.Lat, 'f', -1, 64), strconv.FormatFloat(p.Lon, 'f', -1, 64), "")
		if !math.IsNaN(p.Alt) {
			rec[4] = strconv.FormatFloat(p.Alt, 'f', -1, 64)
		}
		for _, a := range w.attrs {
			rec = append(rec, p.Attrs[a])
		}
		w.rec = rec
		if err := w.w.Write(rec); err != nil {
			return err
		}
	}
	w.w.Flush()
	return w.w.Error()
}

func (w *csvWriter) Close() error {
	if !w.header {
		if err := w.w.Write(append(slices.Clone(csvRoleNames), w.attrs...)); err != nil {
			return err
		}
	}
	w.w.Flush()
	return w.w.Error()
}
