package viz

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Line is one curve of a Chart.
type Line struct {
	Label string
	XY    plotter.XYs
	// Dashed draws the line dashed, for a reference or derived curve.
	Dashed bool
	// Points marks the data points too.
	Points bool
	// PointsOnly marks the data points without joining them (measured
	// values beside a theoretical curve).
	PointsOnly bool
	// Color overrides the colour, by default Color(i) for the i-th line
	// (pass the same colour to pair a curve with its measurements).
	Color color.Color
}

// Color is the i-th colour of the palette Chart and Map use: a
// colour-blind-aware qualitative palette (Okabe-Ito).
func Color(i int) color.Color { return paletteColor(i) }

// ChartOptions configures Chart.
type ChartOptions struct {
	Title, XLabel, YLabel string
	// LogY and LogX use logarithmic axes.
	LogY, LogX bool
	// XTicks fixes the ticks of the x axis (e.g. to label a
	// transformed axis in its own units); nil for round ones.
	XTicks []plot.Tick
	// Band shades the x interval [Band[0], Band[1]] (e.g. an
	// interquartile range of the data the x axis describes), labelled
	// BandLabel in the legend; nil for none.
	Band      *[2]float64
	BandLabel string
	// Marker draws a dotted vertical line at this x (e.g. a median),
	// labelled MarkerLabel; nil for none.
	Marker      *float64
	MarkerLabel string
	// LegendLeft and LegendBottom choose the corner the legend prefers
	// (default: top right); LegendAuto prefers the corner with the fewest
	// data points instead. Wherever it prefers, the legend never covers a
	// line, a point or the marker: it moves to the first free place along
	// the edges of the data area, and above the data area, under the
	// title, when there is none.
	LegendLeft, LegendBottom, LegendAuto bool
	// LegendOutside always puts the legend above the data area.
	LegendOutside bool
}

// Chart line and glyph sizes.
const (
	chartLineWidth = vg.Length(1.75)
	chartGlyph     = vg.Length(2.75)
)

// Chart draws lines against a shared x axis, with an optional shaded x
// band and vertical marker: the figures of the reproductions. Axes have
// round ticks (powers of ten on log axes), light grid lines, and the
// legend is placed where it covers no data (see ChartOptions).
func Chart(lines []Line, opt ChartOptions) (*plot.Plot, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("viz: chart %q has no lines", opt.Title)
	}
	p := plot.New()
	styleText(p)
	p.Title.Text = opt.Title
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{n: 7}, niceTicks{n: 6}
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Label.TextStyle.Handler = logAxisLabel{text.Plain{Fonts: font.DefaultCache}}
	}
	if opt.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Label.TextStyle.Handler = logAxisLabel{text.Plain{Fonts: font.DefaultCache}}
	}
	if opt.XTicks != nil {
		p.X.Tick.Marker = plot.ConstantTicks(opt.XTicks)
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, q := range l.XY {
			ylo, yhi = math.Min(ylo, q.Y), math.Max(yhi, q.Y)
		}
	}
	if !(yhi >= ylo) {
		return nil, fmt.Errorf("viz: chart %q has no points", opt.Title)
	}
	if !opt.LogY {
		ylo = math.Min(ylo, 0)
	}
	ov := &overlay{
		legend:       newLegendBox(),
		outside:      sideAbove,
		forceOutside: opt.LegendOutside,
		basePad:      p.Title.Padding,
	}
	first := anchor{1, 1}
	if opt.LegendAuto {
		opt.LegendLeft, opt.LegendBottom = emptiestCorner(lines, ylo, yhi, opt.LogX, opt.LogY)
	}
	if opt.LegendLeft {
		first.fx = 0
	}
	if opt.LegendBottom {
		first.fy = 0
	}
	ov.prefs = []anchor{first, topRight, topLeft, bottomRight, bottomLeft}
	// The band, grid and marker go first so that the curves draw over them.
	if opt.Band != nil {
		poly, err := shade(p, opt.Band[0], opt.Band[1], ylo, yhi, color.Gray{Y: 228})
		if err != nil {
			return nil, err
		}
		if opt.BandLabel != "" {
			ov.legend.add(opt.BandLabel, poly)
		}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 215}, color.Gray{Y: 215}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(grid)
	if opt.Marker != nil {
		dotted := draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		if err := vline(p, ov, *opt.Marker, ylo, yhi, dotted, opt.MarkerLabel); err != nil {
			return nil, err
		}
	}
	for i, l := range lines {
		col := l.Color
		if col == nil {
			col = paletteColor(i)
		}
		var thumbs []plot.Thumbnailer
		if !l.PointsOnly {
			ln, err := plotter.NewLine(l.XY)
			if err != nil {
				return nil, fmt.Errorf("viz: chart %q, line %q: %w", opt.Title, l.Label, err)
			}
			ln.Color = col
			ln.Width = chartLineWidth
			switch {
			case l.Dashed:
				ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			case i >= len(palette): // colours repeat: tell the repeats apart
				ln.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			}
			p.Add(ln)
			ov.obstacles = append(ov.obstacles, obstacle{xy: ln.XYs, joined: true, pad: ln.Width / 2})
			thumbs = append(thumbs, ln)
		}
		if l.Points || l.PointsOnly {
			sc, err := plotter.NewScatter(l.XY)
			if err != nil {
				return nil, fmt.Errorf("viz: chart %q, line %q: %w", opt.Title, l.Label, err)
			}
			sc.Color = col
			sc.Shape = plotutil.Shape(i)
			sc.Radius = chartGlyph
			p.Add(sc)
			ov.obstacles = append(ov.obstacles, obstacle{xy: sc.XYs, pad: sc.Radius})
			thumbs = append(thumbs, sc)
		}
		if l.Label != "" {
			ov.legend.add(l.Label, thumbs...)
		}
	}
	widenDegenerate(&p.X, opt.LogX)
	widenDegenerate(&p.Y, opt.LogY)
	p.Add(ov)
	register(p, ov)
	ov.fit(p, defaultW-2*saveMargin, defaultH-2*saveMargin)
	return p, nil
}

// widenDegenerate gives an axis whose data is one value a range around it
// (a factor 2 either side on a log axis), which gonum cannot scale.
func widenDegenerate(a *plot.Axis, log bool) {
	if a.Min != a.Max {
		return
	}
	switch v := a.Min; {
	case log && v > 0:
		a.Min, a.Max = v/2, v*2
	case v == 0:
		a.Min, a.Max = -1, 1
	default:
		a.Min, a.Max = v-math.Abs(v)/2, v+math.Abs(v)/2
	}
}

// emptiestCorner returns the corner (left?, bottom?) whose box of 45 % of
// the width and 40 % of the height holds the fewest data points, the
// legend's place; ties go to top right, then top left.
func emptiestCorner(lines []Line, ylo, yhi float64, logX, logY bool) (left, bottom bool) {
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, q := range l.XY {
			xlo, xhi = math.Min(xlo, q.X), math.Max(xhi, q.X)
		}
	}
	fx := func(x float64) float64 {
		if logX {
			return (math.Log(x) - math.Log(xlo)) / (math.Log(xhi) - math.Log(xlo))
		}
		return (x - xlo) / (xhi - xlo)
	}
	fy := func(y float64) float64 {
		if logY {
			return (math.Log(y) - math.Log(ylo)) / (math.Log(yhi) - math.Log(ylo))
		}
		return (y - ylo) / (yhi - ylo)
	}
	best := -1
	for _, c := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		count := 0
		for _, l := range lines {
			for _, q := range l.XY {
				x, y := fx(q.X), fy(q.Y)
				inX := (c[0] && x <= 0.45) || (!c[0] && x >= 0.55)
				inY := (c[1] && y <= 0.4) || (!c[1] && y >= 0.6)
				if inX && inY {
					count++
				}
			}
		}
		if best < 0 || count < best {
			best, left, bottom = count, c[0], c[1]
		}
	}
	return left, bottom
}
