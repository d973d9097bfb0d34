package viz

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
)

// The checks here look at what was drawn, independently of the placement
// code: data segments are sampled every quarter point on the canvas, and
// no sample may fall in the legend's box.

var testOrigin = geo.Point{Lat: 39.98, Lon: 116.32}

// pathTrace makes a trace through points given in metres east and north
// of testOrigin.
func pathTrace(en [][2]float64) *trace.Trace {
	enu := geo.NewENU(testOrigin)
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	tr := &trace.Trace{UID: "t"}
	for i, q := range en {
		p := enu.Inverse(q[0], q[1])
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * time.Second), Lat: p.Lat, Lon: p.Lon})
	}
	return tr
}

func enuXY(tr *trace.Trace) plotter.XYs {
	enu := geo.NewENU(testOrigin)
	xy := make(plotter.XYs, len(tr.Points))
	for i, p := range tr.Points {
		xy[i].X, xy[i].Y = enu.Forward(p.Geo())
	}
	return xy
}

// drawing is a plot rendered as Save renders it, on a recorder.
type drawing struct {
	o    *overlay
	full vg.Rectangle
	data draw.Canvas
	rec  *recorder.Canvas
}

func drawPlot(t *testing.T, p *plot.Plot, w, h vg.Length) drawing {
	t.Helper()
	rec := &recorder.Canvas{}
	full := draw.NewCanvas(rec, w, h)
	render(p, full)
	inner := draw.Crop(full, saveMargin, -saveMargin, saveMargin, -saveMargin)
	o := overlayOf(p)
	if o == nil || !o.last.placed {
		t.Fatal("the plot has no overlay, or it was not drawn")
	}
	return drawing{o: o, full: full.Rectangle, data: p.DataCanvas(inner), rec: rec}
}

// inkIn reports whether any line of xys, drawn halfWidth wide, or any of
// its points, reaches into r.
func (d drawing) inkIn(p *plot.Plot, r vg.Rectangle, halfWidth vg.Length, xys ...plotter.XYs) bool {
	trX, trY := p.Transforms(&d.data)
	r = inflate(r, halfWidth)
	for _, xy := range xys {
		for i := range xy {
			a := vg.Point{X: trX(xy[i].X), Y: trY(xy[i].Y)}
			if inside(a, r) {
				return true
			}
			if i == 0 {
				continue
			}
			b := vg.Point{X: trX(xy[i-1].X), Y: trY(xy[i-1].Y)}
			n := int(math.Hypot(float64(b.X-a.X), float64(b.Y-a.Y))*4) + 1
			for k := 1; k < n; k++ {
				f := vg.Length(float64(k) / float64(n))
				if inside(vg.Point{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y)}, r) {
					return true
				}
			}
		}
	}
	return false
}

func within(inner, outer vg.Rectangle) bool {
	return inner.Min.X >= outer.Min.X && inner.Min.Y >= outer.Min.Y && inner.Max.X <= outer.Max.X && inner.Max.Y <= outer.Max.Y
}

// cornerBox is where a legend of the given size sits in a corner of the
// data area, as the old placement (gonum's legend) put it.
func cornerBox(d drawing, size vg.Point, left, top bool) vg.Rectangle {
	c := d.data.Rectangle
	r := vg.Rectangle{Min: vg.Point{X: c.Max.X - size.X, Y: c.Max.Y - size.Y}, Max: c.Max}
	if left {
		r.Min.X, r.Max.X = c.Min.X, c.Min.X+size.X
	}
	if !top {
		r.Min.Y, r.Max.Y = c.Min.Y, c.Min.Y+size.Y
	}
	return r
}

func TestMapLegendAvoidsTraces(t *testing.T) {
	// Two walks from the south-west corner to the north-east one: the old
	// legend, top right, sat on their ends.
	var a, b [][2]float64
	for i := 0; i <= 60; i++ {
		a = append(a, [2]float64{float64(i) * 20, float64(i) * 15})
		b = append(b, [2]float64{float64(i)*20 + 30, float64(i)*15 - 40})
	}
	ta, tb := pathTrace(a), pathTrace(b)
	p, err := Map([]Series{
		{Label: "original, a trace with a long label", Trace: ta, Points: true, Role: RoleOriginal},
		{Label: "released", Trace: tb, Role: RoleReleased},
	}, MapOptions{Title: "diagonal", Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	d := drawPlot(t, p, defaultW, defaultH)
	ls := d.o.last.legend
	if !ls.ok || !ls.free {
		t.Fatalf("legend not placed on free ground: %+v", ls)
	}
	xys := []plotter.XYs{enuXY(ta), enuXY(tb)}
	if !d.inkIn(p, cornerBox(d, ls.rect.Size(), false, true), 0, xys...) {
		t.Fatal("test data does not reach the old top-right legend; the test proves nothing")
	}
	if d.inkIn(p, ls.rect, vg.Points(1.5)+endpointRadius, xys...) {
		t.Errorf("legend at %v covers a trace", ls.rect)
	}
	if !within(ls.rect, d.data.Rectangle) {
		t.Errorf("legend %v should fit inside the map %v here", ls.rect, d.data.Rectangle)
	}
	if ss := d.o.last.scale; !ss.ok || !ss.free || overlaps(ss.rect, ls.rect) || d.inkIn(p, ss.rect, vg.Points(1.5), xys...) {
		t.Errorf("scale bar at %+v covers data or the legend", ss)
	}
}

// lawnmower sweeps a w x h metre rectangle in rows step metres apart: no
// legend fits anywhere on it.
func lawnmower(w, h, step float64) [][2]float64 {
	var en [][2]float64
	for y, row := 0.0, 0; y <= h; y, row = y+step, row+1 {
		if row%2 == 0 {
			en = append(en, [2]float64{0, y}, [2]float64{w, y})
		} else {
			en = append(en, [2]float64{w, y}, [2]float64{0, y})
		}
	}
	return en
}

func TestMapLegendGoesBelowWhenNothingIsFree(t *testing.T) {
	tr := pathTrace(lawnmower(1600, 1200, 40))
	p, err := Map([]Series{{Label: "survey", Trace: tr}}, MapOptions{Title: "full", Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]vg.Length{{defaultW, defaultH}, {10 * vg.Centimeter, 7 * vg.Centimeter}} {
		d := drawPlot(t, p, size[0], size[1])
		ls := d.o.last.legend
		if !d.o.last.legendOutside {
			t.Fatalf("%v: legend stayed on the map", size)
		}
		if ls.rect.Max.Y > d.data.Min.Y || !within(ls.rect, d.full) {
			t.Errorf("%v: legend %v not between the map (from y=%v) and the bottom edge", size, ls.rect, d.data.Min.Y)
		}
		if d.inkIn(p, ls.rect, vg.Points(1.4), enuXY(tr)) {
			t.Errorf("%v: legend covers the trace", size)
		}
		// Equal scales on the canvas it was drawn on.
		sx := float64(d.data.Size().X) / (p.X.Max - p.X.Min)
		sy := float64(d.data.Size().Y) / (p.Y.Max - p.Y.Min)
		if math.Abs(sx/sy-1) > 0.01 {
			t.Errorf("%v: scales differ: %g vs %g pt/m", size, sx, sy)
		}
	}
}

func TestMapMarkersAndRoles(t *testing.T) {
	var series []Series
	var starts, ends []plotter.XY
	for k := 0; k < 3; k++ {
		var a, b, c [][2]float64
		for i := 0; i < 20; i++ {
			x, y := float64(k)*300+float64(i)*10, float64(i)*25
			a = append(a, [2]float64{x, y})
			b = append(b, [2]float64{x + 20, y + 5})
			c = append(c, [2]float64{x + 8, y - 6})
		}
		for _, s := range []Series{
			{Label: "original", Trace: pathTrace(a), Role: RoleOriginal},
			{Label: "released", Trace: pathTrace(b), Role: RoleReleased},
			{Label: "reconstruction", Trace: pathTrace(c), Role: RoleReconstruction},
		} {
			series = append(series, s)
			xy := enuXY(s.Trace)
			starts, ends = append(starts, xy[0]), append(ends, xy[len(xy)-1])
		}
	}
	p, err := Map(series, MapOptions{Title: "nine traces", Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	o := overlayOf(p)
	var labels []string
	for _, e := range o.legend.entries {
		labels = append(labels, e.label)
	}
	if got, want := strings.Join(labels, "|"), "original|released|reconstruction|start|end"; got != want {
		t.Errorf("legend entries %q, want %q (one per role, markers once)", got, want)
	}
	// Glyph boxes of the size of an endpoint marker, at every start and end.
	var markers []plot.GlyphBox
	for _, b := range p.GlyphBoxes(p) {
		if s := b.Rectangle.Size(); math.Abs(float64(s.X-2*endpointRadius)) < 1e-9 {
			markers = append(markers, b)
		}
	}
	if len(markers) != 2*len(series) {
		t.Fatalf("%d endpoint markers for %d traces", len(markers), len(series))
	}
	for i, pt := range append(starts, ends...) {
		nx, ny := p.X.Norm(pt.X), p.Y.Norm(pt.Y)
		found := false
		for _, m := range markers {
			found = found || (math.Abs(m.X-nx) < 1e-9 && math.Abs(m.Y-ny) < 1e-9)
		}
		if !found {
			t.Errorf("no marker at endpoint %d (%g, %g)", i, pt.X, pt.Y)
		}
	}
	// One colour per role whatever the trace's index.
	st := map[Role]traceStyle{}
	for _, r := range []Role{RoleOriginal, RoleReleased, RoleReconstruction} {
		st[r], _ = roleStyle(r)
	}
	if opaque(st[RoleOriginal].color) == opaque(st[RoleReleased].color) || opaque(st[RoleReleased].color) == opaque(st[RoleReconstruction].color) {
		t.Error("roles share a colour")
	}

	q, err := Map(series[:2], MapOptions{NoEndpoints: true, Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range q.GlyphBoxes(q) {
		if b.Rectangle.Size().X == 2*endpointRadius {
			t.Fatal("NoEndpoints still draws markers")
		}
	}
}

func TestMapAutoColoursByLabel(t *testing.T) {
	a, b := pathTrace([][2]float64{{0, 0}, {100, 50}}), pathTrace([][2]float64{{0, 30}, {100, 80}})
	p, err := Map([]Series{{Label: "x", Trace: a}, {Label: "y", Trace: b}, {Label: "x", Trace: b}}, MapOptions{Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(overlayOf(p).legend.entries); n != 4 { // x, y, start, end
		t.Errorf("%d legend entries, want 4", n)
	}
}

// titleLines returns the strings drawn in the title's font, and their
// boxes.
func titleBoxes(d drawing) (lines []string, boxes []vg.Rectangle) {
	sty := text.Style{Font: sans(titleSize), Handler: plot.DefaultTextHandler}
	ext := sty.FontExtents()
	for _, a := range d.rec.Actions {
		fs, ok := a.(*recorder.FillString)
		if !ok || fs.Size != titleSize {
			continue
		}
		lines = append(lines, fs.String)
		boxes = append(boxes, vg.Rectangle{
			Min: vg.Point{X: fs.Point.X, Y: fs.Point.Y - ext.Descent},
			Max: vg.Point{X: fs.Point.X + sty.Width(fs.String), Y: fs.Point.Y + ext.Ascent},
		})
	}
	return lines, boxes
}

func TestTitleInsideCanvas(t *testing.T) {
	long := "A very long title that certainly does not fit on one line of a small figure, so it must wrap"
	for _, title := range []string{"short title", long} {
		p, err := Map([]Series{{Label: "walk", Trace: walk(30, 45)}}, MapOptions{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []vg.Length{defaultW, 8 * vg.Centimeter} {
			d := drawPlot(t, p, w, 6*vg.Centimeter)
			lines, boxes := titleBoxes(d)
			if got := strings.Join(lines, " "); got != title {
				t.Fatalf("title drawn as %q, want %q", got, title)
			}
			const room = 4 // points between the title and the edges, at least
			for _, b := range boxes {
				if !within(b, inflate(d.full, -room)) {
					t.Errorf("width %v: title line at %v reaches the edge of %v", w, b, d.full)
				}
				if b.Min.Y < d.data.Max.Y {
					t.Errorf("width %v: title line at %v runs into the data area (top %v)", w, b, d.data.Max.Y)
				}
			}
		}
	}
}

func TestChartLegendAvoidsLines(t *testing.T) {
	// Points in every corner's 45 % x 40 % box, the emptiest (top right)
	// still holding a line right through its corner: the old LegendAuto
	// covered it.
	var rising, falling, flat plotter.XYs
	for i := 0; i <= 40; i++ {
		x := float64(i) / 4
		rising = append(rising, plotter.XY{X: x, Y: x})
		falling = append(falling, plotter.XY{X: x, Y: 10 - x})
		flat = append(flat, plotter.XY{X: x, Y: 5 + 0.3*math.Sin(x)})
	}
	lines := []Line{{Label: "rising", XY: rising, Points: true}, {Label: "falling", XY: falling}, {Label: "flat", XY: flat, Dashed: true}}
	p, err := Chart(lines, ChartOptions{Title: "crossing", XLabel: "x", YLabel: "y", LegendAuto: true})
	if err != nil {
		t.Fatal(err)
	}
	d := drawPlot(t, p, defaultW, defaultH)
	ls := d.o.last.legend
	left, bottom := emptiestCorner(lines, 0, 10, false, false)
	if !d.inkIn(p, cornerBox(d, ls.rect.Size(), left, !bottom), 0, rising, falling, flat) {
		t.Fatal("the old corner is free: the test proves nothing")
	}
	if !ls.free || d.inkIn(p, ls.rect, chartGlyph, rising, falling, flat) {
		t.Errorf("legend at %v covers a line", ls.rect)
	}
	if !within(ls.rect, d.full) {
		t.Errorf("legend %v is off the canvas %v", ls.rect, d.full)
	}
}

func TestChartLegendGoesAboveWhenNothingIsFree(t *testing.T) {
	// A fast oscillation fills the whole data area.
	var wave plotter.XYs
	for i := 0; i <= 400; i++ {
		x := float64(i) / 40
		wave = append(wave, plotter.XY{X: x, Y: 0.5 + 0.5*math.Sin(x*9)})
	}
	var decay plotter.XYs
	for i := 1; i <= 50; i++ {
		decay = append(decay, plotter.XY{X: float64(i) / 5, Y: math.Exp(-float64(i) / 5)})
	}
	for _, logY := range []bool{false, true} {
		lines := []Line{{Label: "wave", XY: wave}, {Label: "decay", XY: decay, Points: true}}
		if logY { // the same, filling the log axis
			wave := append(plotter.XYs(nil), wave...)
			for i := range wave {
				wave[i].Y = math.Pow(10, 4*wave[i].Y-2)
			}
			decay := append(plotter.XYs(nil), decay...)
			for i := range decay {
				decay[i].Y = math.Pow(10, 2-0.4*decay[i].X)
			}
			lines[0].XY, lines[1].XY = wave, decay
		}
		p, err := Chart(lines, ChartOptions{Title: "busy", XLabel: "x", YLabel: "y", LogY: logY})
		if err != nil {
			t.Fatal(err)
		}
		d := drawPlot(t, p, defaultW, defaultH)
		ls := d.o.last.legend
		if !d.o.last.legendOutside {
			t.Fatalf("logY=%v: legend stayed inside a full data area", logY)
		}
		if ls.rect.Min.Y < d.data.Max.Y || !within(ls.rect, d.full) {
			t.Errorf("logY=%v: legend %v not between the data (top %v) and the canvas top", logY, ls.rect, d.data.Max.Y)
		}
		if d.inkIn(p, ls.rect, chartGlyph, lines[0].XY, lines[1].XY) {
			t.Errorf("logY=%v: legend covers a line", logY)
		}
		_, boxes := titleBoxes(d)
		for _, b := range boxes {
			if overlaps(b, ls.rect) {
				t.Errorf("logY=%v: legend %v overlaps the title %v", logY, ls.rect, b)
			}
		}
	}
}

func TestSaveRefitsToItsSize(t *testing.T) {
	t.Parallel()
	// A corner is free at 16 x 12 cm but not at 6 x 5 cm, where the
	// legend is as large as the data area.
	var xy plotter.XYs
	for i := 0; i <= 20; i++ {
		xy = append(xy, plotter.XY{X: float64(i), Y: float64(i * i)})
	}
	lines := []Line{{Label: "a square, labelled at some length", XY: xy, Points: true}, {Label: "another label", XY: plotter.XYs{{X: 0, Y: 200}, {X: 20, Y: 200}}}}
	p, err := Chart(lines, ChartOptions{Title: "sizes"})
	if err != nil {
		t.Fatal(err)
	}
	if overlayOf(p).reserved {
		t.Fatal("legend reserved room outside at the default size")
	}
	d := drawPlot(t, p, 6*vg.Centimeter, 5*vg.Centimeter)
	if d.inkIn(p, d.o.last.legend.rect, chartGlyph, xy, lines[1].XY) {
		t.Errorf("small figure: legend at %v covers a line", d.o.last.legend.rect)
	}
	d = drawPlot(t, p, defaultW, defaultH)
	if d.o.last.legendOutside || d.inkIn(p, d.o.last.legend.rect, chartGlyph, xy, lines[1].XY) {
		t.Errorf("default figure after a small one: legend %+v", d.o.last.legend)
	}
	for _, name := range []string{"c.svg", "c.pdf"} {
		if err := Save(p, filepath.Join(t.TempDir(), name), 6*vg.Centimeter, 5*vg.Centimeter); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSaveTiles(t *testing.T) {
	t.Parallel()
	var xy plotter.XYs
	for i := 0; i <= 10; i++ {
		xy = append(xy, plotter.XY{X: float64(i), Y: float64(i % 3)})
	}
	a, err := Chart([]Line{{Label: "a", XY: xy, Points: true}}, ChartOptions{Title: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Chart([]Line{{Label: "b", XY: xy}}, ChartOptions{Title: "b", LogX: false})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := SaveTiles(filepath.Join(dir, "t.png"), [][]*plot.Plot{{a, b}}, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := SaveTiles(filepath.Join(dir, "t.png"), [][]*plot.Plot{{a, b}, {a}}, 0, 0); err == nil {
		t.Error("ragged rows accepted")
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	wide := labels(1e-10, 35)
	if len(wide) < 4 || len(wide) > 9 {
		t.Errorf("1e-10..35: %d labels %q, want 4-9", len(wide), wide)
	}
	for _, l := range wide {
		if !strings.HasPrefix(l, "10^{") {
			t.Errorf("1e-10..35: label %q is not a power of ten", l)
		}
	}
	if got := strings.Join(labels(1, 1000), " "); got != "1 10 100 1000" {
		t.Errorf("1..1000: %q", got)
	}
	if got := labels(0.3, 0.9); len(got) < 2 {
		t.Errorf("0.3..0.9: labels %q, want at least two", got)
	}
	if got := strings.Join(labels(2e-6, 9e-5), " "); got != "2×10^{−6} 5×10^{−6} 10^{−5} 2×10^{−5} 5×10^{−5}" {
		t.Errorf("2e-6..9e-5: %q", got)
	}
}

func TestNiceTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var out []string
		for _, tk := range (niceTicks{n: 6}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 10, "0 2 4 6 8 10"},
		{0, 0.997, "0.0 0.2 0.4 0.6 0.8"},
		{-1, 1, "−1.0 −0.5 0.0 0.5 1.0"},
		{2.8, 3.3, "2.8 2.9 3.0 3.1 3.2 3.3"},
		{0, 2.5e7, "0 5×10^{6} 10^{7} 1.5×10^{7} 2×10^{7} 2.5×10^{7}"},
	} {
		t.Run(fmt.Sprintf("%g..%g", c.lo, c.hi), func(t *testing.T) {
			if got := labels(c.lo, c.hi); got != c.want {
				t.Errorf("%g..%g: %q, want %q", c.lo, c.hi, got, c.want)
			}
		})
	}
}

func TestSupTextBox(t *testing.T) {
	h := newSupText()
	f := sans(10)
	wp, hp, _ := h.Plain.Box("10", f)
	ws, hs, _ := h.Box("10^{−5}", f)
	if ws <= wp || hs <= hp {
		t.Errorf("superscript box %v x %v not larger than the base's %v x %v", ws, hs, wp, hp)
	}
	if w, _, _ := h.Box("plain", f); w != func() vg.Length { w, _, _ := h.Plain.Box("plain", f); return w }() {
		t.Error("plain text measured differently")
	}
}

func TestMapManyTracesKeepTheMapLarge(t *testing.T) {
	// 80 labelled traces over the whole map: the legend goes below, in
	// columns, and summarises what does not fit in its share of the height.
	var series []Series
	for k := 0; k < 80; k++ {
		var en [][2]float64
		for i := 0; i <= 40; i++ {
			en = append(en, [2]float64{float64(i) * 40, float64(k)*20 + 200*math.Sin(float64(i)/4)})
		}
		series = append(series, Series{Label: "2008102302530" + strconv.Itoa(k) + strings.Repeat("x", k%5), Trace: pathTrace(en)})
	}
	p, err := Map(series, MapOptions{Title: "eighty", Origin: &testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	d := drawPlot(t, p, defaultW, defaultH)
	ls := d.o.last.legend
	if !d.o.last.legendOutside {
		t.Fatal("legend stayed on a full map")
	}
	if h := ls.rect.Size().Y; h > maxOutsideShare*d.full.Size().Y {
		t.Errorf("legend %v tall on a %v figure", h, d.full.Size().Y)
	}
	if d.data.Size().Y < 0.5*d.full.Size().Y {
		t.Errorf("map squeezed to %v of %v", d.data.Size().Y, d.full.Size().Y)
	}
	entries := d.o.legend.entries
	n := len(entries)
	if n < 5 || entries[n-2].label != "start" || entries[n-1].label != "end" || !strings.HasPrefix(entries[n-3].label, "… and ") {
		var labels []string
		for _, e := range entries {
			labels = append(labels, e.label)
		}
		t.Errorf("legend entries %q: want some traces, a count of the rest, start and end", labels)
	}
	if want := "… and " + strconv.Itoa(80-(n-3)) + " more"; entries[n-3].label != want {
		t.Errorf("summary %q, want %q", entries[n-3].label, want)
	}
	var xys []plotter.XYs
	for _, s := range series {
		xys = append(xys, enuXY(s.Trace))
	}
	if d.inkIn(p, ls.rect, vg.Points(1.4), xys...) {
		t.Error("legend covers a trace")
	}
}
