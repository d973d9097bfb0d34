package viz

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Band is a shaded x interval of a Histogram: a published range to
// compare the data with, drawn behind the bars.
type Band struct {
	Lo, Hi float64
	Label  string
	// Color is the band's hue (nil: Color(i) for the i-th band); it is
	// drawn translucent, so that overlapping bands both show.
	Color color.Color
}

// Marker is a vertical line of a Histogram at X, drawn over the bars: a
// median, or an end of a chosen range.
type Marker struct {
	X     float64
	Label string
	// Color is the line's colour (nil: black).
	Color color.Color
	// Dashed draws a reference value dashed; Wide draws the line that
	// matters most twice as thick.
	Dashed, Wide bool
}

// HistogramOptions configures Histogram.
type HistogramOptions struct {
	Title, XLabel, YLabel string
	// Label names the bars in the legend ("" for no entry).
	Label string
	// BinWidth is the width of the bins, the first of which starts at
	// Min; the last ends at Max or just after it. Values outside [Min,
	// Max] are counted in the first or last bin, and the title says how
	// many.
	BinWidth, Min, Max float64
	// The legend lists the bars, the markers and then the bands, each in
	// its order (so pairs that go together can share a row when it has
	// two columns); an empty label leaves an entry out (e.g. the second
	// end of a range whose first end is labelled).
	Bands   []Band
	Markers []Marker
}

// histBandAlpha is the opacity of a Band: light enough for two bands, the
// grid and a marker to show through each other.
const histBandAlpha = 0x40

// Histogram draws the counts of values in bins of equal width, with
// shaded bands behind the bars and vertical markers over them. As on a
// Chart, the legend goes where it covers no bar and no marker: inside the
// data area if some place is free, above it otherwise. Values must be
// finite.
func Histogram(values []float64, opt HistogramOptions) (*plot.Plot, error) {
	if !(opt.BinWidth > 0) || math.IsInf(opt.BinWidth, 0) || !(opt.Max > opt.Min) || math.IsInf(opt.Max-opt.Min, 0) {
		return nil, fmt.Errorf("viz: histogram %q: bins of width %v over [%v, %v]: want a positive width and Min < Max", opt.Title, opt.BinWidth, opt.Min, opt.Max)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("viz: histogram %q has no values", opt.Title)
	}
	nb := int(math.Ceil((opt.Max - opt.Min) / opt.BinWidth))
	bins := make([]plotter.HistogramBin, nb)
	for i := range bins {
		bins[i].Min, bins[i].Max = opt.Min+float64(i)*opt.BinWidth, opt.Min+float64(i+1)*opt.BinWidth
	}
	below, above := 0, 0
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("viz: histogram %q: value %v is not finite", opt.Title, v)
		}
		switch {
		case v < opt.Min:
			below++
		case v > opt.Max:
			above++
		}
		i := min(max(int(math.Floor((v-opt.Min)/opt.BinWidth)), 0), nb-1)
		bins[i].Weight++
	}
	top := 0.0
	for _, b := range bins {
		top = math.Max(top, b.Weight)
	}
	top *= 1.05 // the tallest bar clear of the frame

	p := plot.New()
	styleText(p)
	p.Title.Text = opt.Title
	if below > 0 {
		p.Title.Text += fmt.Sprintf(" (%d below %g in the first bin)", below, opt.Min)
	}
	if above > 0 {
		p.Title.Text += fmt.Sprintf(" (%d above %g in the last bin)", above, opt.Max)
	}
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{n: 7}, niceTicks{n: 6}
	ov := &overlay{legend: newLegendBox(), outside: sideAbove, basePad: p.Title.Padding}
	ov.prefs = []anchor{topRight, topLeft, bottomRight, bottomLeft}
	var bands []*plotter.Polygon
	for i, b := range opt.Bands {
		c := b.Color
		if c == nil {
			c = paletteColor(i)
		}
		poly, err := shade(p, b.Lo, b.Hi, 0, top, translucent(c, histBandAlpha))
		if err != nil {
			return nil, fmt.Errorf("viz: histogram %q, band %q: %w", opt.Title, b.Label, err)
		}
		bands = append(bands, poly)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color, grid.Horizontal.Width = color.Gray{Y: 215}, vg.Points(0.5)
	p.Add(grid)
	h := &plotter.Histogram{Bins: bins, Width: opt.BinWidth, FillColor: color.Gray{Y: 165},
		LineStyle: draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.75)}}
	p.Add(h)
	bars := obstacle{filled: true}
	for _, b := range bins {
		if b.Weight > 0 {
			bars.xy = append(bars.xy, plotter.XY{X: b.Min, Y: 0}, plotter.XY{X: b.Max, Y: b.Weight})
		}
	}
	ov.obstacles = append(ov.obstacles, bars)
	if opt.Label != "" {
		ov.legend.add(opt.Label, h)
	}
	for _, m := range opt.Markers {
		ls := draw.LineStyle{Color: m.Color, Width: vg.Points(1.25)}
		if ls.Color == nil {
			ls.Color = color.Black
		}
		if m.Wide {
			ls.Width *= 2
		}
		if m.Dashed {
			ls.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		if err := vline(p, ov, m.X, 0, top, ls, m.Label); err != nil {
			return nil, fmt.Errorf("viz: histogram %q, marker %q: %w", opt.Title, m.Label, err)
		}
	}
	for i, b := range opt.Bands {
		if b.Label != "" {
			ov.legend.add(b.Label, bands[i])
		}
	}
	p.X.Min, p.X.Max = opt.Min, bins[nb-1].Max
	p.Y.Min, p.Y.Max = 0, top
	p.Add(ov)
	register(p, ov)
	ov.fit(p, defaultW-2*saveMargin, defaultH-2*saveMargin)
	return p, nil
}

// shade adds the x interval [lo, hi] from ylo to yhi, filled with c and
// without an outline, to p; the legend may cover it (it is background).
func shade(p *plot.Plot, lo, hi, ylo, yhi float64, c color.Color) (*plotter.Polygon, error) {
	poly, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: ylo}, {X: hi, Y: ylo}, {X: hi, Y: yhi}, {X: lo, Y: yhi}})
	if err != nil {
		return nil, err
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	p.Add(poly)
	return poly, nil
}

// vline adds a vertical line at x from ylo to yhi to p, which the legend
// must not cover, labelled in the legend unless label is empty.
func vline(p *plot.Plot, ov *overlay, x, ylo, yhi float64, ls draw.LineStyle, label string) error {
	xy := plotter.XYs{{X: x, Y: ylo}, {X: x, Y: yhi}}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = ls
	p.Add(l)
	ov.obstacles = append(ov.obstacles, obstacle{xy: xy, joined: true, pad: ls.Width / 2})
	if label != "" {
		ov.legend.add(label, l)
	}
	return nil
}

// translucent returns c with opacity a (0-255).
func translucent(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}
