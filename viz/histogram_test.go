package viz

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestHistogram(t *testing.T) {
	// Values piled up on the left, and the tallest bar in the top right
	// corner (the legend's first choice): the legend goes between it and
	// the marker, covering neither.
	var vs []float64
	for i := 0; i < 400; i++ {
		vs = append(vs, 1+3*math.Abs(math.Sin(float64(i))))
	}
	for i := 0; i < 300; i++ {
		vs = append(vs, 30) // above Max: counted in the last bin
	}
	p, err := Histogram(vs, HistogramOptions{
		Title: "piles", Label: "data", BinWidth: 0.5, Max: 12,
		Bands:   []Band{{Lo: 2, Hi: 3, Label: "band"}},
		Markers: []Marker{{X: 6, Label: "marker", Dashed: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "(300 above 12 in the last bin)") {
		t.Errorf("title %q does not count the values above Max", p.Title.Text)
	}
	d := drawPlot(t, p, defaultW, defaultH)
	ls := d.o.last.legend
	trX, trY := p.Transforms(&d.data)
	// The last bin holds the 300 values above Max: the bar at x 11.5-12.
	tall := vg.Rectangle{Min: vg.Point{X: trX(11.5), Y: trY(0)}, Max: vg.Point{X: trX(12), Y: trY(300)}}
	if !ls.ok || !ls.free || overlaps(inflate(ls.rect, clearance), tall) || d.inkIn(p, ls.rect, 1, d.o.obstacles[1].xy) {
		t.Errorf("legend at %v (free %v) covers the last bar %v or the marker", ls.rect, ls.free, tall)
	}
	// Every bar: none under the legend.
	bars := d.o.obstacles[0].xy
	for i := 1; i < len(bars); i += 2 {
		r := vg.Rectangle{Min: vg.Point{X: trX(bars[i-1].X), Y: trY(bars[i-1].Y)}, Max: vg.Point{X: trX(bars[i].X), Y: trY(bars[i].Y)}}
		if overlaps(ls.rect, r) {
			t.Errorf("legend %v covers the bar %v", ls.rect, r)
		}
	}
	if d.o.last.legendOutside {
		t.Error("legend went outside although the top middle of the data area is free")
	}
	for _, bad := range []HistogramOptions{{BinWidth: 0, Max: 1}, {BinWidth: 1, Min: 2, Max: 1}} {
		if _, err := Histogram(vs, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := Histogram([]float64{1, math.NaN()}, HistogramOptions{BinWidth: 1, Max: 2}); err == nil {
		t.Error("NaN accepted")
	}
}

// TestHistogramBarsAreObstacles is the negative control of the above: a
// legend box in the middle of a tall wide bar meets none of its edges,
// and must still count as covering it.
func TestHistogramBarsAreObstacles(t *testing.T) {
	vs := make([]float64, 100)
	for i := range vs {
		vs[i] = 5.5
	}
	p, err := Histogram(vs, HistogramOptions{Title: "one bar", Label: "data", BinWidth: 10, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	d := drawPlot(t, p, defaultW, defaultH)
	c := d.data.Rectangle
	mid := vg.Rectangle{Min: vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}}
	mid.Max = vg.Point{X: mid.Min.X + 10, Y: mid.Min.Y + 10}
	if n := coverage(mid, project(d.o.obstacles, d.data, p), 0); n == 0 {
		t.Error("a box inside a bar does not cover it")
	}
	if !d.o.last.legendOutside {
		t.Errorf("legend inside a data area filled by one bar: %+v", d.o.last.legend)
	}
}
