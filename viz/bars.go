package viz

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// BarSeries is one series of a grouped bar chart: one value per group.
type BarSeries struct {
	Label  string
	Values []float64
}

// BarOptions configures Bars.
type BarOptions struct {
	Title, YLabel string
	// YMax fixes the top of the value axis (e.g. 1 for scores in [0, 1]);
	// zero fits the data.
	YMax float64
}

// Bars draws a grouped bar chart: one group of bars per entry of groups
// (named on the x axis), one bar per series in each group, coloured by
// series with a legend above the data so that it never hides a bar.
// Values must be finite and non-negative.
func Bars(groups []string, series []BarSeries, opt BarOptions) (*plot.Plot, error) {
	if len(groups) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("viz: bar chart %q has no bars", opt.Title)
	}
	p := plot.New()
	styleText(p)
	p.Title.Text = opt.Title
	p.Y.Label.Text = opt.YLabel
	p.Y.Tick.Marker = niceTicks{n: 6}
	p.NominalX(groups...)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color, grid.Horizontal.Width = color.Gray{Y: 215}, vg.Points(0.5)
	p.Add(grid)
	ov := &overlay{legend: newLegendBox(), outside: sideAbove, forceOutside: true, basePad: p.Title.Padding}
	// Bars of a group share 80 % of the space of one group.
	width := vg.Points(math.Max(4, 260/float64(len(groups)*len(series))))
	for i, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("viz: bar chart %q, series %q: %d values for %d groups", opt.Title, s.Label, len(s.Values), len(groups))
		}
		for j, v := range s.Values {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("viz: bar chart %q, series %q, group %q: value %v is not finite and non-negative", opt.Title, s.Label, groups[j], v)
			}
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Values), width)
		if err != nil {
			return nil, fmt.Errorf("viz: bar chart %q, series %q: %w", opt.Title, s.Label, err)
		}
		b.Color = paletteColor(i)
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(b)
		if s.Label != "" {
			ov.legend.add(s.Label, b)
		}
	}
	// Half a group of room on either side, so that offset bars stay inside.
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.Y.Min = 0
	if opt.YMax > 0 {
		p.Y.Max = opt.YMax
	}
	p.Add(ov)
	register(p, ov)
	ov.fit(p, defaultW-2*saveMargin, defaultH-2*saveMargin)
	return p, nil
}
