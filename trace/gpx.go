package trace

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// tpNS is the namespace of tracepriv's GPX extensions: a track's user id
// (<tp:uid>) and point attributes (<tp:attr name="k">v</tp:attr>).
const tpNS = "https://github.com/tracepriv/tracepriv/gpx/1"

// gpxReader streams tokens with encoding/xml and returns a trace at the end
// of every track segment. Elements other than tracks (metadata, waypoints,
// routes) are skipped, and so is every free-text element (a track's name,
// description, comment, link): tracepriv never carries them. Any GPX
// version is accepted: elements are matched by local name.
type gpxReader struct {
	b       *builder
	d       *xml.Decoder
	sawRoot bool
	inTrk   bool
	done    bool
	cut     bool // the document ended early; what came before was kept

	trkUID string
}

func newGPXReader(r io.Reader, b *builder) *gpxReader {
	return &gpxReader{b: b, d: xml.NewDecoder(r)}
}

func (r *gpxReader) Report() *Report { return r.b.rep }

// token returns the next token and the line it starts on.
func (r *gpxReader) token() (xml.Token, int, error) {
	line, _ := r.d.InputPos()
	tok, err := r.d.Token()
	if err == nil {
		return tok, line, nil
	}
	if err == io.EOF {
		return nil, line, io.EOF
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Msg, "unexpected EOF") {
			return nil, se.Line, r.b.fail(se.Line, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		return nil, se.Line, r.b.fail(se.Line, "", "", fmt.Errorf("%w: %s", ErrMalformed, se.Msg))
	}
	l, _ := r.d.InputPos()
	return nil, l, r.b.fail(l, "", "", fmt.Errorf("%w: %v", ErrMalformed, err))
}

func (r *gpxReader) Next() (*Trace, error) {
	if r.done {
		return nil, io.EOF
	}
	t, err := r.next()
	if err != nil {
		r.done = true
		if err != io.EOF && r.salvage(err, 0) {
			return nil, io.EOF
		}
		return nil, err
	}
	r.done = r.cut
	return r.b.emit(t), nil
}

// salvage handles a document that ends early, as a logger whose battery
// died leaves it: in lenient mode the fixes read before the cut are kept,
// the cut is recorded (n fixes lost with it) and reading ends. It reports
// whether err was handled so.
func (r *gpxReader) salvage(err error, n int) bool {
	var pe *ParseError
	if !r.sawRoot || !errors.As(err, &pe) || !errors.Is(err, ErrTruncated) {
		return false
	}
	if r.b.opt.Strict {
		pe.row = true // lenient reading would have kept what came before
		return false
	}
	pe.reason = ReasonTruncated
	pe.Err = fmt.Errorf("%w (the fixes before the cut are kept)", pe.Err)
	r.b.rep.record(pe, n)
	r.cut = true
	return true
}

func (r *gpxReader) next() (*Trace, error) {
	for {
		tok, line, err := r.token()
		if err == io.EOF {
			if !r.sawRoot {
				return nil, r.b.fail(line, "", "", fmt.Errorf("%w: no <gpx> element", ErrTruncated))
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if ee, ok := tok.(xml.EndElement); ok && ee.Name.Local == "trk" {
			r.inTrk, r.trkUID = false, ""
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch name := se.Name.Local; {
		case !r.sawRoot:
			if name != "gpx" {
				return nil, r.b.fail(line, "", "", fmt.Errorf("%w: root element is <%s>, want <gpx>", ErrMalformed, name))
			}
			r.sawRoot = true
		case name == "gpx":
			return nil, r.b.fail(line, "", "", fmt.Errorf("%w: a second <gpx> element", ErrMalformed))
		case name == "trk" && !r.inTrk:
			r.inTrk, r.trkUID = true, ""
		case r.inTrk && name == "extensions":
			ext, err := r.leaves()
			if err != nil {
				return nil, err
			}
			if u, ok := ext["uid"]; ok {
				r.trkUID = u
			}
		case r.inTrk && name == "trkseg":
			return r.segment()
		default: // metadata, waypoints, routes, the track's name and other fields
			if err := r.skip(); err != nil {
				return nil, err
			}
		}
	}
}

func (r *gpxReader) skip() error {
	// Skip via tokens so errors keep their line numbers.
	for depth := 1; depth > 0; {
		tok, _, err := r.token()
		if err == io.EOF {
			l, _ := r.d.InputPos()
			return r.b.fail(l, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// text reads character data up to the end of the current element.
func (r *gpxReader) text() (string, int, error) {
	var b strings.Builder
	first := 0
	for {
		tok, line, err := r.token()
		if err == io.EOF {
			return "", line, r.b.fail(line, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		if err != nil {
			return "", line, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if first == 0 {
				first = line
			}
			b.Write(t)
		case xml.StartElement:
			return "", line, r.b.fail(line, t.Name.Local, "", fmt.Errorf("%w: unexpected element in text", ErrMalformed))
		case xml.EndElement:
			if first == 0 {
				first = line
			}
			return strings.TrimSpace(b.String()), first, nil
		}
	}
}

// leaves flattens an <extensions> element: each leaf element's text under
// its local name, or under its name attribute for <tp:attr name="k">.
func (r *gpxReader) leaves() (map[string]string, error) {
	var m map[string]string
	var key string
	var text strings.Builder
	for depth := 1; ; {
		tok, line, err := r.token()
		if err == io.EOF {
			return nil, r.b.fail(line, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			key = t.Name.Local
			if t.Name.Space == tpNS && key == "attr" {
				for _, a := range t.Attr {
					if a.Name.Local == "name" {
						key = a.Value
					}
				}
			}
			text.Reset()
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			depth--
			if depth == 0 {
				return m, nil
			}
			if key != "" {
				if m == nil {
					m = map[string]string{}
				}
				m[key] = strings.TrimSpace(text.String())
			}
			key = "" // a parent's end: not a leaf
		}
	}
}

func (r *gpxReader) segment() (*Trace, error) {
	t := &Trace{UID: r.b.opt.UID}
	if r.trkUID != "" {
		t.UID = r.trkUID
	}
	// fail ends the segment on a document error, keeping its fixes when
	// the document was cut short (lost fixes in it).
	fail := func(err error, lost int) (*Trace, error) {
		if r.salvage(err, lost) {
			return t, nil
		}
		return nil, err
	}
	for {
		tok, line, err := r.token()
		if err == io.EOF {
			err = r.b.fail(line, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		if err != nil {
			return fail(err, 0)
		}
		switch el := tok.(type) {
		case xml.EndElement:
			return t, nil // </trkseg>
		case xml.StartElement:
			if el.Name.Local != "trkpt" {
				if err := r.skip(); err != nil {
					return fail(err, 0)
				}
				continue
			}
			p, raw, perr, err := r.trkpt(el, line)
			if err != nil {
				return fail(err, 1)
			}
			if perr != nil {
				if err := r.b.bad(perr, 1); err != nil {
					return nil, err
				}
				continue
			}
			if err := r.b.add(t, p, line, raw); err != nil {
				return nil, err
			}
		}
	}
}

// trkpt reads one point. perr is a bad value (a skippable record); err is
// a document error.
func (r *gpxReader) trkpt(el xml.StartElement, line int) (p Point, rawTime string, perr *ParseError, err error) {
	p.Alt = math.NaN()
	var lat, lon *string
	for _, a := range el.Attr {
		v := strings.TrimSpace(a.Value)
		switch a.Name.Local {
		case "lat":
			lat = &v
		case "lon":
			lon = &v
		}
	}
	for _, c := range []struct {
		s     *string
		name  string
		limit float64
		dst   *float64
	}{{lat, "lat", 90, &p.Lat}, {lon, "lon", 180, &p.Lon}} {
		if perr != nil {
			break
		}
		if c.s == nil {
			perr = r.b.fail(line, c.name, "", ErrMissing)
			continue
		}
		var e error
		if *c.dst, e = parseCoord(*c.s, c.limit); e != nil {
			perr = r.b.failCoord(line, c.name, *c.s, e)
		}
	}
	timeLine, hasTime := line, false
	for {
		tok, l, err := r.token()
		if err == io.EOF {
			return p, "", nil, r.b.fail(l, "", "", fmt.Errorf("%w: GPX document ends early", ErrTruncated))
		}
		if err != nil {
			return p, "", nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement: // </trkpt>
			if perr == nil && !hasTime {
				perr = r.b.fail(timeLine, "time", "", ErrMissing)
			}
			return p, rawTime, perr, nil
		case xml.StartElement:
			switch t.Name.Local {
			case "ele":
				s, tl, err := r.text()
				if err != nil {
					return p, "", nil, err
				}
				v, e := parseAlt(s)
				if e != nil && perr == nil {
					perr = r.b.fail(tl, "ele", s, e)
				}
				p.Alt = v
			case "time":
				s, tl, err := r.text()
				if err != nil {
					return p, "", nil, err
				}
				rawTime, timeLine, hasTime = s, tl, true
				var e error
				if p.Time, e = parseTime(s, time.UTC); e != nil && perr == nil {
					perr = r.b.fail(tl, "time", s, e)
				}
			case "extensions":
				if p.Attrs, err = r.leaves(); err != nil {
					return p, "", nil, err
				}
			default:
				if err := r.skip(); err != nil {
					return p, "", nil, err
				}
			}
		}
	}
}

// gpxWriter writes GPX 1.1: one <trk> per trace with a single <trkseg>,
// times in UTC, the uid and point attributes as tracepriv extensions, and
// longitude 180 as -180 (the same meridian), as the schema requires. It
// writes no <name> (nor any other free text).
type gpxWriter struct {
	w      io.Writer
	opened bool
	buf    []byte
}

const gpxHead = `<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="tracepriv" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:tp="` + tpNS + `" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
`

func (w *gpxWriter) open() error {
	if w.opened {
		return nil
	}
	w.opened = true
	_, err := io.WriteString(w.w, gpxHead)
	return err
}

func (w *gpxWriter) Write(t *Trace) error {
	if err := w.open(); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("  <trk>\n")
	if t.UID != "" {
		b.WriteString("    <extensions><tp:uid>" + xmlEscape(t.UID) + "</tp:uid></extensions>\n")
	}
	b.WriteString("    <trkseg>\n")
	if _, err := io.WriteString(w.w, b.String()); err != nil {
		return err
	}
	for _, p := range t.Points {
		b.Reset()
		lon := p.Lon
		if lon == 180 { // the schema's longitudeType is [-180, 180)
			lon = -180
		}
		b.WriteString(`      <trkpt lat="` + strconvFloat(p.Lat) + `" lon="` + strconvFloat(lon) + `">`)
		if !math.IsNaN(p.Alt) {
			b.WriteString("<ele>" + strconvFloat(p.Alt) + "</ele>")
		}
		b.WriteString("<time>" + p.Time.UTC().Format(time.RFC3339Nano) + "</time>")
		if len(p.Attrs) > 0 {
			b.WriteString("<extensions>")
			for _, k := range sortedKeys(p.Attrs) {
				b.WriteString(`<tp:attr name="` + xmlEscape(k) + `">` + xmlEscape(p.Attrs[k]) + "</tp:attr>")
			}
			b.WriteString("</extensions>")
		}
		b.WriteString("</trkpt>\n")
		if _, err := io.WriteString(w.w, b.String()); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w.w, "    </trkseg>\n  </trk>\n")
	return err
}

func (w *gpxWriter) Close() error {
	if err := w.open(); err != nil {
		return err
	}
	_, err := io.WriteString(w.w, "</gpx>\n")
	return err
}

func xmlEscape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
