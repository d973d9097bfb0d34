package viz_test

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// A trace and a release of it on one map: roles fix the colours (the
// original in black, on top), every trace gets start and end markers, and
// the legend and scale bar go where they cover neither.
func ExampleMap() {
	start := geo.Point{Lat: 39.9847, Lon: 116.3184}
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	orig, released := &trace.Trace{UID: "000"}, &trace.Trace{UID: "000"}
	for i := 0; i < 40; i++ {
		p := geo.Destination(start, 60, float64(i)*25)
		q := geo.Destination(p, float64(i*97%360), 40) // stand-in for noise
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		orig.Points = append(orig.Points, trace.Point{Time: at, Lat: p.Lat, Lon: p.Lon})
		released.Points = append(released.Points, trace.Point{Time: at, Lat: q.Lat, Lon: q.Lon})
	}
	p, err := viz.Map([]viz.Series{
		{Label: "original", Trace: orig, Points: true, Role: viz.RoleOriginal},
		{Label: "released", Trace: released, Role: viz.RoleReleased},
	}, viz.MapOptions{Title: "original against released"})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "viz-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	// Save fits the map to the size it is saved at (here the default,
	// 16 cm x 12 cm).
	if err := viz.Save(p, filepath.Join(dir, "map.svg"), 0, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote map.svg")
	// Output: wrote map.svg
}

// A chart on a log axis: ticks at powers of ten, and a legend that moves
// away from the curves (above the data area if no corner is free).
func ExampleChart() {
	var fast, slow plotter.XYs
	for i := 0; i <= 50; i++ {
		x := float64(i) / 5
		fast = append(fast, plotter.XY{X: x, Y: math.Exp(-2 * x)})
		slow = append(slow, plotter.XY{X: x, Y: math.Exp(-x / 2)})
	}
	p, err := viz.Chart([]viz.Line{
		{Label: "fast decay", XY: fast},
		{Label: "slow decay", XY: slow, Dashed: true},
	}, viz.ChartOptions{Title: "Two decays", XLabel: "time (s)", YLabel: "level", LogY: true, LegendAuto: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "viz-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := viz.Save(p, filepath.Join(dir, "decay.png"), 0, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote decay.png")
	// Output: wrote decay.png
}

// Save picks the format from the extension and writes the figure at the
// size asked for; here a 12 cm x 9 cm PNG of a chart with a linear and a
// dashed line, read back to check its pixel size.
func ExampleSave() {
	var up, down plotter.XYs
	for i := 0; i <= 10; i++ {
		up = append(up, plotter.XY{X: float64(i), Y: float64(i)})
		down = append(down, plotter.XY{X: float64(i), Y: float64(10 - i)})
	}
	p, err := viz.Chart([]viz.Line{{Label: "up", XY: up}, {Label: "down", XY: down, Dashed: true}},
		viz.ChartOptions{Title: "Two lines", XLabel: "x", YLabel: "y"})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "viz-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "lines.png")
	if err := viz.Save(p, path, 12*vg.Centimeter, 9*vg.Centimeter); err != nil {
		fmt.Println(err)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PNG of %d x %d pixels\n", cfg.Width, cfg.Height)
	if err := viz.Save(p, filepath.Join(dir, "lines.jpg"), 0, 0); err != nil {
		fmt.Println("other extensions are refused")
	}
	// Output:
	// PNG of 709 x 531 pixels
	// other extensions are refused
}

// A histogram of measurements against a published range: the band shades
// the range, the markers show its median and a chosen threshold, and the
// values beyond the last bin are counted in it and in the title.
func ExampleHistogram() {
	var vs []float64
	for i := 0; i < 500; i++ {
		vs = append(vs, 4+3*math.Sin(float64(i))*math.Cos(float64(3*i)))
	}
	vs = append(vs, 20, 25)
	p, err := viz.Histogram(vs, viz.HistogramOptions{
		Title: "Fitted lengthscales", XLabel: "lengthscale (samples)", YLabel: "windows",
		Label: "this corpus", BinWidth: 0.5, Max: 10,
		Bands:   []viz.Band{{Lo: 2.7, Hi: 8, Label: "published IQR"}},
		Markers: []viz.Marker{{X: 6.3, Label: "published median", Dashed: true}, {X: 5, Label: "threshold", Wide: true}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Title.Text)
	dir, err := os.MkdirTemp("", "viz-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := viz.Save(p, filepath.Join(dir, "hist.svg"), 0, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote hist.svg")
	// Output:
	// Fitted lengthscales (2 above 10 in the last bin)
	// wrote hist.svg
}
