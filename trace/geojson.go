package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// geojsonReader decodes the whole document, then hands out its traces:
// one per LineString feature (with a "times" property), and one per uid
// for Point features (with a "time" property), in order of appearance.
type geojsonReader struct {
	b      *builder
	r      io.Reader
	lines  lineIndex
	parsed bool
	out    []*Trace
	err    error

	groups map[string]*pointGroup
	order  []any // *Trace or *pointGroup, in order of first appearance
}

type pointGroup struct {
	uid string
	pts []linePoint
}

type linePoint struct {
	p    Point
	line int
	raw  string
}

func newGeoJSONReader(r io.Reader, b *builder) *geojsonReader {
	return &geojsonReader{b: b, r: r, groups: map[string]*pointGroup{}}
}

func (r *geojsonReader) Report() *Report { return r.b.rep }

func (r *geojsonReader) Next() (*Trace, error) {
	if !r.parsed {
		r.parsed = true
		r.err = r.parse()
	}
	if len(r.out) > 0 {
		t := r.out[0]
		r.out = r.out[1:]
		return r.b.emit(t), nil
	}
	if r.err != nil {
		err := r.err
		r.err = io.EOF
		return nil, err
	}
	return nil, io.EOF
}

func (r *geojsonReader) at(v *jvalue) int {
	if v == nil {
		return 0
	}
	return r.lines.line(v.off)
}

func (r *geojsonReader) parse() error {
	buf, err := io.ReadAll(r.r)
	if err != nil {
		return r.b.fail(0, "", "", err)
	}
	r.lines = newLineIndex(buf)
	root, err := parseJSON(buf)
	if err != nil {
		je := err.(*jsonError)
		return r.b.fail(r.lines.line(je.off), "", "", je.err)
	}
	if root.kind != jObject {
		return r.b.fail(r.at(root), "", "", fmt.Errorf("%w: GeoJSON must be an object, not a %v", ErrMalformed, root.kind))
	}
	switch typ := root.get("type"); {
	case typ == nil:
		return r.b.fail(r.at(root), "type", "", ErrMissing)
	case typ.str == "FeatureCollection":
		fs := root.get("features")
		if fs == nil || fs.kind != jArray {
			return r.b.fail(r.at(root), "features", "", fmt.Errorf("%w (want an array of features)", ErrMissing))
		}
		for i, f := range fs.arr {
			if err := r.feature(f, fmt.Sprintf("features[%d].", i)); err != nil {
				return err
			}
		}
	case typ.str == "Feature":
		if err := r.feature(root, ""); err != nil {
			return err
		}
	default:
		return r.b.fail(r.at(typ), "type", typ.text(), fmt.Errorf("%w GeoJSON type (want FeatureCollection or Feature with a times property)", ErrUnsupported))
	}
	return r.finish()
}

// finish turns the collected traces and point groups into the output.
func (r *geojsonReader) finish() error {
	for _, o := range r.order {
		switch o := o.(type) {
		case *Trace:
			r.out = append(r.out, o)
		case *pointGroup:
			// Points of a collection need not be in time order.
			slices.SortStableFunc(o.pts, func(a, b linePoint) int { return a.p.Time.Compare(b.p.Time) })
			t := &Trace{UID: o.uid}
			for _, lp := range o.pts {
				if err := r.b.add(t, lp.p, lp.line, lp.raw); err != nil {
					return err
				}
			}
			r.out = append(r.out, t)
		}
	}
	return nil
}

// feature reads one Feature; pre prefixes field names in errors.
func (r *geojsonReader) feature(f *jvalue, pre string) error {
	if f.kind != jObject || f.get("type") == nil || f.get("type").str != "Feature" {
		return r.b.bad(r.b.fail(r.at(f), pre+"type", "", fmt.Errorf("%w: not a GeoJSON Feature", ErrMalformed)), 1)
	}
	g := f.get("geometry")
	if g.isNull() || g.kind != jObject {
		return r.b.bad(r.b.fail(r.at(f), pre+"geometry", "", ErrMissing), 1)
	}
	props := f.get("properties")
	uid := r.b.opt.UID
	if u := props.get("uid"); !u.isNull() {
		uid = u.text()
	}
	coords := g.get("coordinates")
	switch gt := g.get("type"); {
	case gt != nil && gt.str == "LineString":
		return r.lineString(coords, props, uid, pre)
	case gt != nil && gt.str == "MultiLineString":
		return r.multiLineString(coords, props, uid, pre)
	case gt != nil && gt.str == "Point":
		return r.point(coords, props, uid, pre)
	default:
		n := 1
		if coords != nil && coords.kind == jArray {
			n = max(1, len(coords.arr))
		}
		val := ""
		if gt != nil {
			val = gt.text()
		}
		return r.b.bad(r.b.fail(r.at(g), pre+"geometry.type", val,
			fmt.Errorf("%w geometry (want LineString, MultiLineString or Point)", ErrUnsupported)), n)
	}
}

// timesOf finds a line feature's per-position times: "times" (what
// tracepriv writes), or else "coordinateProperties.times" (togeojson) or
// "coordTimes" (Mapbox's older togeojson), and names the field.
func timesOf(props *jvalue) (*jvalue, string) {
	if t := props.get("coordinateProperties").get("times"); props.get("times").isNull() && !t.isNull() {
		return t, "properties.coordinateProperties.times"
	}
	if t := props.get("coordTimes"); props.get("times").isNull() && !t.isNull() {
		return t, "properties.coordTimes"
	}
	return props.get("times"), "properties.times"
}

// column is a per-position property of a line (times, alts or attrs):
// its values, nil when absent, and the field name of value i.
type column struct {
	vals  []*jvalue
	field func(i int) string
}

func (c column) get(i int) *jvalue {
	if c.vals == nil {
		return nil
	}
	return c.vals[i]
}

// indexed names element i of the array field.
func indexed(field string) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s[%d]", field, i) }
}

func (r *geojsonReader) lineString(coords, props *jvalue, uid, pre string) error {
	if coords == nil || coords.kind != jArray {
		return r.b.bad(r.b.fail(r.at(coords), pre+"geometry.coordinates", "", fmt.Errorf("%w (want an array of positions)", ErrMissing)), 1)
	}
	n := len(coords.arr)
	times, tname := timesOf(props)
	if times == nil || times.kind != jArray || len(times.arr) != n {
		err := fmt.Errorf("%w (want an array of %d RFC 3339 times, one per position)", ErrMissing, n)
		if times != nil && times.kind == jArray {
			err = fmt.Errorf("%w: %d times for %d positions", ErrMalformed, len(times.arr), n)
		}
		return r.b.bad(r.b.fail(r.at(times), pre+tname, "", err), max(n, 1))
	}
	cols := [3]column{{times.arr, indexed(pre + tname)}}
	for k, name := range []string{"alts", "attrs"} {
		v := props.get(name)
		if v.isNull() {
			cols[k+1].field = indexed(pre + "properties." + name)
			continue
		}
		if v.kind != jArray || len(v.arr) != n {
			return r.b.bad(r.b.fail(r.at(v), pre+"properties."+name, "",
				fmt.Errorf("%w: want an array of %d values, one per position", ErrMalformed, n)), max(n, 1))
		}
		cols[k+1] = column{v.arr, indexed(pre + "properties." + name)}
	}
	return r.line(coords.arr, indexed(pre+"geometry.coordinates"), cols, uid)
}

// multiLineString reads a MultiLineString feature: each line is a
// segment of the trace, returned as a trace of its own with the feature's
// uid, as GPX's track segments are. Its per-position properties are
// arrays of one array per line (as togeojson writes them), or flat arrays
// of one value per position over all the lines.
func (r *geojsonReader) multiLineString(coords, props *jvalue, uid, pre string) error {
	cf := pre + "geometry.coordinates"
	if coords == nil || coords.kind != jArray {
		return r.b.bad(r.b.fail(r.at(coords), cf, "", fmt.Errorf("%w (want an array of lines, each an array of positions)", ErrMissing)), 1)
	}
	total := 0
	for k, l := range coords.arr {
		if l.kind != jArray {
			return r.b.bad(r.b.fail(r.at(l), fmt.Sprintf("%s[%d]", cf, k), l.text(),
				fmt.Errorf("%w: want a line, an array of positions", ErrMalformed)), max(len(coords.arr), 1))
		}
		total += len(l.arr)
	}
	times, tname := timesOf(props)
	named := [3]struct {
		v    *jvalue
		name string
	}{{times, tname}, {props.get("alts"), "properties.alts"}, {props.get("attrs"), "properties.attrs"}}
	split := make([][3]column, len(coords.arr))
	for c, nv := range named {
		field := pre + nv.name
		if nv.v.isNull() && c > 0 {
			for k := range split {
				split[k][c].field = indexed(fmt.Sprintf("%s[%d]", field, k))
			}
			continue
		}
		lines, ok := splitByLine(nv.v, coords.arr)
		if !ok {
			err := fmt.Errorf("%w: want one array per line (%d lines) or one value per position (%d positions)", ErrMalformed, len(coords.arr), total)
			if nv.v.isNull() {
				err = fmt.Errorf("%w (want one array of RFC 3339 times per line, %d lines, or one time per position, %d positions)", ErrMissing, len(coords.arr), total)
			}
			return r.b.bad(r.b.fail(r.at(nv.v), field, "", err), max(total, 1))
		}
		for k, l := range lines {
			split[k][c] = l
			if l.field == nil {
				split[k][c].field = indexed(fmt.Sprintf("%s[%d]", field, k))
			} else {
				split[k][c].field = func(i int) string { return fmt.Sprintf("%s%s", field, l.field(i)) }
			}
		}
	}
	for k, l := range coords.arr {
		if len(l.arr) == 0 {
			continue // an empty line holds no fix
		}
		if err := r.line(l.arr, indexed(fmt.Sprintf("%s[%d]", cf, k)), split[k], uid); err != nil {
			return err
		}
	}
	return nil
}

// splitByLine splits a MultiLineString's per-position property v into one
// column per line: v is an array of one array per line, or a flat array
// of one value per position. A split column's field is nil when nested
// (the caller names element i of line k "[k][i]"), or gives the suffix
// "[offset+i]" when flat.
func splitByLine(v *jvalue, lines []*jvalue) ([]column, bool) {
	if v == nil || v.kind != jArray {
		return nil, false
	}
	out := make([]column, len(lines))
	nested, flat, total := len(v.arr) == len(lines), true, 0
	for k, l := range lines {
		nested = nested && v.arr[k].kind == jArray && len(v.arr[k].arr) == len(l.arr)
		total += len(l.arr)
	}
	for _, e := range v.arr {
		flat = flat && e.kind != jArray
	}
	switch {
	case nested:
		for k := range lines {
			out[k] = column{vals: v.arr[k].arr}
		}
	case flat && len(v.arr) == total:
		off := 0
		for k, l := range lines {
			o := off
			out[k] = column{vals: v.arr[o : o+len(l.arr)], field: func(i int) string { return fmt.Sprintf("[%d]", o+i) }}
			off += len(l.arr)
		}
	default:
		return nil, false
	}
	return out, true
}

// line reads the positions of one line, with their times, altitudes and
// attributes (cols), as one trace of uid. Free-text properties (a name, a
// description) are not read: tracepriv never carries them.
func (r *geojsonReader) line(coords []*jvalue, coordField func(int) string, cols [3]column, uid string) error {
	times, alts, attrs := cols[0], cols[1], cols[2]
	t := &Trace{UID: uid}
	for i, c := range coords {
		p, perr := r.position(c, coordField(i))
		tv := times.get(i)
		if perr == nil {
			p.Time, perr = r.time(tv, times.field(i))
		}
		if a := alts.get(i); perr == nil && !a.isNull() {
			v, err := r.number(a)
			if err != nil {
				perr = r.b.fail(r.at(a), alts.field(i), a.text(), err)
			}
			p.Alt = v
		}
		if perr == nil && attrs.vals != nil {
			p.Attrs, perr = r.attrs(attrs.get(i), attrs.field(i))
		}
		if perr != nil {
			if err := r.b.bad(perr, 1); err != nil {
				return err
			}
			continue
		}
		if err := r.b.add(t, p, r.at(c), tv.text()); err != nil {
			return err
		}
	}
	r.order = append(r.order, t)
	return nil
}

func (r *geojsonReader) point(coords, props *jvalue, uid, pre string) error {
	p, perr := r.position(coords, pre+"geometry.coordinates")
	tv := props.get("time")
	if perr == nil {
		p.Time, perr = r.time(tv, pre+"properties.time")
	}
	if perr == nil && props != nil && props.kind == jObject {
		for i, k := range props.keys {
			v := props.vals[i]
			if k == "uid" || k == "time" || v.isNull() || (k == "alt" && v.kind == jNumber) {
				continue
			}
			if p.Attrs == nil {
				p.Attrs = map[string]string{}
			}
			p.Attrs[k] = v.text()
		}
		if a := props.get("alt"); a != nil && a.kind == jNumber && math.IsNaN(p.Alt) {
			p.Alt, _ = r.number(a)
		}
	}
	if perr != nil {
		return r.b.bad(perr, 1)
	}
	g, ok := r.groups[uid]
	if !ok {
		g = &pointGroup{uid: uid}
		r.groups[uid] = g
		r.order = append(r.order, g)
	}
	g.pts = append(g.pts, linePoint{p, r.at(coords), tv.text()})
	return nil
}

// position reads [lon, lat] or [lon, lat, alt].
func (r *geojsonReader) position(c *jvalue, field string) (Point, *ParseError) {
	if c == nil || c.kind != jArray || len(c.arr) < 2 {
		return Point{}, r.b.fail(r.at(c), field, "", fmt.Errorf("%w (want [lon, lat] or [lon, lat, alt])", ErrMissing))
	}
	p := Point{Alt: math.NaN()}
	for j, dst := range []*float64{&p.Lon, &p.Lat, &p.Alt} {
		if j >= len(c.arr) {
			break
		}
		v := c.arr[j]
		var err error
		if v.kind != jNumber {
			err = ErrNotNumber
		} else if j == 2 {
			*dst, err = parseNumber(v.str)
		} else {
			*dst, err = parseCoord(v.str, [2]float64{180, 90}[j])
		}
		if err != nil && j < 2 {
			return Point{}, r.b.failCoord(r.at(v), fmt.Sprintf("%s[%d]", field, j), v.text(), err)
		}
		if err != nil {
			return Point{}, r.b.fail(r.at(v), fmt.Sprintf("%s[%d]", field, j), v.text(), err)
		}
	}
	return p, nil
}

// time reads an RFC 3339 string or Unix seconds.
func (r *geojsonReader) time(v *jvalue, field string) (time.Time, *ParseError) {
	if v.isNull() {
		return time.Time{}, r.b.fail(r.at(v), field, "", ErrMissing)
	}
	if v.kind != jString && v.kind != jNumber {
		return time.Time{}, r.b.fail(r.at(v), field, v.text(), ErrBadTime)
	}
	t, err := parseTime(v.str, r.b.opt.loc())
	if err != nil {
		return time.Time{}, r.b.fail(r.at(v), field, v.text(), err)
	}
	return t, nil
}

func (r *geojsonReader) number(v *jvalue) (float64, error) {
	if v.kind != jNumber {
		return 0, ErrNotNumber
	}
	return parseNumber(v.str)
}

// attrs reads one point's attribute object (or null).
func (r *geojsonReader) attrs(v *jvalue, field string) (map[string]string, *ParseError) {
	if v.isNull() {
		return nil, nil
	}
	if v.kind != jObject {
		return nil, r.b.fail(r.at(v), field, v.text(), fmt.Errorf("%w: want an object of attributes", ErrMalformed))
	}
	var m map[string]string
	for i, k := range v.keys {
		if v.vals[i].isNull() {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v.vals[i].text()
	}
	return m, nil
}

// geojsonWriter writes a FeatureCollection with one LineString Feature per
// trace. Positions carry the altitude when every point has one; when only
// some do, an "alts" property holds them (null when unknown). Point
// attributes go in an "attrs" property, one object per point. The trace's
// Name is not written.
type geojsonWriter struct {
	w     io.Writer
	count int
}

type gjFeature struct {
	Type       string     `json:"type"`
	Geometry   gjGeometry `json:"geometry"`
	Properties gjProps    `json:"properties"`
}

type gjGeometry struct {
	Type        string      `json:"type"`
	Coordinates [][]float64 `json:"coordinates"`
}

// gjProps are the properties written: the uid and per-position values,
// never free text (Trace.Name is not written).
type gjProps struct {
	UID   string              `json:"uid,omitempty"`
	Times []string            `json:"times"`
	Alts  []*float64          `json:"alts,omitempty"`
	Attrs []map[string]string `json:"attrs,omitempty"`
}

func (w *geojsonWriter) Write(t *Trace) error {
	f := gjFeature{
		Type:       "Feature",
		Geometry:   gjGeometry{Type: "LineString", Coordinates: make([][]float64, len(t.Points))},
		Properties: gjProps{UID: t.UID, Times: make([]string, len(t.Points))},
	}
	known, attrs := 0, false
	for _, p := range t.Points {
		if !math.IsNaN(p.Alt) {
			known++
		}
		attrs = attrs || len(p.Attrs) > 0
	}
	all := known == len(t.Points) && known > 0
	if known > 0 && !all {
		f.Properties.Alts = make([]*float64, len(t.Points))
	}
	if attrs {
		f.Properties.Attrs = make([]map[string]string, len(t.Points))
	}
	for i, p := range t.Points {
		c := []float64{p.Lon, p.Lat}
		if all {
			c = append(c, p.Alt)
		} else if f.Properties.Alts != nil && !math.IsNaN(p.Alt) {
			a := p.Alt
			f.Properties.Alts[i] = &a
		}
		f.Geometry.Coordinates[i] = c
		f.Properties.Times[i] = p.Time.Format(time.RFC3339Nano)
		if attrs {
			f.Properties.Attrs[i] = p.Attrs
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	sep := ",\n"
	if w.count == 0 {
		sep = `{"type":"FeatureCollection","features":[` + "\n"
	}
	w.count++
	if _, err := io.WriteString(w.w, sep); err != nil {
		return err
	}
	_, err = w.w.Write(b)
	return err
}

func (w *geojsonWriter) Close() error {
	end := "\n]}\n"
	if w.count == 0 {
		end = `{"type":"FeatureCollection","features":[]}` + "\n"
	}
	_, err := io.WriteString(w.w, end)
	return err
}
