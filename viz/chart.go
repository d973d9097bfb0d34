package viz

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Line is one curve of a Chart.
type Line struct {
	Label string
	XY    plotter.XYs
	// Dashed draws the line dashed, for a reference or derived curve.
	Dashed bool
	// Points marks the data points too.
	Points bool
}

// ChartOptions configures Chart.
type ChartOptions struct {
	Title, XLabel, YLabel string
	// LogY and LogX use logarithmic axes.
	LogY, LogX bool
	// Band shades the x interval [Band[0], Band[1]] (e.g. an
	// interquartile range of the data the x axis describes), labelled
	// BandLabel in the legend; nil for none.
	Band      *[2]float64
	BandLabel string
	// Marker draws a dotted vertical line at this x (e.g. a median),
	// labelled MarkerLabel; nil for none.
	Marker      *float64
	MarkerLabel string
	// LegendLeft puts the legend on the left, LegendBottom at the bottom
	// (default: top right); LegendAuto picks the corner that covers the
	// fewest data points instead.
	LegendLeft, LegendBottom, LegendAuto bool
}

// Chart draws lines against a shared x axis, with an optional shaded x
// band and vertical marker: the figures of the reproductions.
func Chart(lines []Line, opt ChartOptions) (*plot.Plot, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("viz: chart %q has no lines", opt.Title)
	}
	p := plot.New()
	p.Title.Text = opt.Title
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	p.Legend.Top, p.Legend.Left = !opt.LegendBottom, opt.LegendLeft
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	}
	if opt.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{}
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
	if opt.LegendAuto {
		opt.LegendLeft, opt.LegendBottom = emptiestCorner(lines, ylo, yhi, opt.LogX, opt.LogY)
	}
	// The band and the marker go first so that the curves draw over them.
	if opt.Band != nil {
		poly, err := plotter.NewPolygon(plotter.XYs{
			{X: opt.Band[0], Y: ylo}, {X: opt.Band[1], Y: ylo},
			{X: opt.Band[1], Y: yhi}, {X: opt.Band[0], Y: yhi},
		})
		if err != nil {
			return nil, err
		}
		poly.Color = color.Gray{Y: 225}
		poly.LineStyle.Width = 0
		p.Add(poly)
		if opt.BandLabel != "" {
			p.Legend.Add(opt.BandLabel, poly)
		}
	}
	if opt.Marker != nil {
		m, err := plotter.NewLine(plotter.XYs{{X: *opt.Marker, Y: ylo}, {X: *opt.Marker, Y: yhi}})
		if err != nil {
			return nil, err
		}
		m.Color = color.Black
		m.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(m)
		if opt.MarkerLabel != "" {
			p.Legend.Add(opt.MarkerLabel, m)
		}
	}
	for i, l := range lines {
		ln, err := plotter.NewLine(l.XY)
		if err != nil {
			return nil, fmt.Errorf("viz: chart %q, line %q: %w", opt.Title, l.Label, err)
		}
		ln.Color = plotutil.Color(i)
		ln.Width = vg.Points(1.5)
		if l.Dashed {
			ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(ln)
		if l.Points {
			sc, err := plotter.NewScatter(l.XY)
			if err != nil {
				return nil, err
			}
			sc.Color = plotutil.Color(i)
			sc.Shape = plotutil.Shape(i)
			p.Add(sc)
			p.Legend.Add(l.Label, ln, sc)
		} else {
			p.Legend.Add(l.Label, ln)
		}
	}
	return p, nil
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
