package viz

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
	// LogY draws the value axis on a log scale, for values that span
	// decades (a baseline far above the rest would flatten them on a linear
	// axis). Bars rise from a floor a decade below the smallest positive
	// value; a zero is a stub at the floor, labelled 0.
	LogY bool
	// ValueLabels writes each bar's value above it.
	ValueLabels bool
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
	lo, hi := math.Inf(1), 0.0 // smallest positive and largest value
	for _, s := range series {
		if len(s.Values) != len(groups) {
			return nil, fmt.Errorf("viz: bar chart %q, series %q: %d values for %d groups", opt.Title, s.Label, len(s.Values), len(groups))
		}
		for j, v := range s.Values {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("viz: bar chart %q, series %q, group %q: value %v is not finite and non-negative", opt.Title, s.Label, groups[j], v)
			}
			if v > 0 {
				lo = math.Min(lo, v)
			}
			hi = math.Max(hi, v)
		}
	}
	floor := 0.0
	if opt.LogY {
		if hi == 0 {
			lo, hi = 1, 1 // all zero: one decade, stubs only
		}
		floor = math.Pow(10, math.Floor(math.Log10(lo))-1)
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Label.TextStyle.Handler = logAxisLabel{text.Plain{Fonts: font.DefaultCache}}
	}
	for i, s := range series {
		b := &bars{values: s.Values, floor: floor, width: width, color: paletteColor(i),
			offset: width * vg.Length(float64(i)-float64(len(series)-1)/2)}
		p.Add(b)
		if opt.ValueLabels {
			p.Add(&barLabels{bars: b, style: text.Style{Color: color.Black, Font: sans(legendSize * 0.75), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}})
		}
		if s.Label != "" {
			ov.legend.add(s.Label, b)
		}
	}
	// Half a group of room on either side, so that offset bars stay inside.
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.Y.Min = floor
	if opt.LogY {
		// Room above the tallest bar for its label: a fifth of a decade
		// more per decade shown, at least a factor 2.
		p.Y.Max = hi * math.Max(2, math.Pow(hi/floor, 0.12))
	} else if opt.ValueLabels {
		p.Y.Max = hi * 1.12
	}
	if opt.YMax > 0 {
		p.Y.Max = opt.YMax
	}
	p.Add(ov)
	register(p, ov)
	ov.fit(p, defaultW-2*saveMargin, defaultH-2*saveMargin)
	return p, nil
}

// bars is one series of Bars: a bar per group from floor (0 on a linear
// axis, below every positive value on a log one) to its value, drawn here
// rather than by plotter.BarChart, which starts every bar at 0 (minus
// infinity on a log axis).
type bars struct {
	values        []float64
	floor         float64
	width, offset vg.Length
	color         color.Color
}

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for j, v := range b.values {
		x := trX(float64(j)) + b.offset
		top := trY(math.Max(v, b.floor))
		if v <= b.floor && b.floor > 0 {
			top = trY(b.floor) + vg.Points(1.5) // a zero: a stub at the floor
		}
		x0, x1, y0 := x-b.width/2, x+b.width/2, trY(b.floor)
		c.FillPolygon(b.color, c.ClipPolygonY([]vg.Point{{X: x0, Y: y0}, {X: x0, Y: top}, {X: x1, Y: top}, {X: x1, Y: y0}}))
	}
}

// DataRange spans the groups and the floor to the tallest bar.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = b.floor, b.floor
	for _, v := range b.values {
		ymax = math.Max(ymax, v)
	}
	return 0, float64(len(b.values) - 1), ymin, ymax
}

// Thumbnail draws the series' colour in the legend.
func (b *bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.color, c.ClipPolygonY(pts))
}

// barLabels writes each bar's value just above it.
type barLabels struct {
	bars  *bars
	style text.Style
}

func (l *barLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for j, v := range l.bars.values {
		x := trX(float64(j)) + l.bars.offset
		y := trY(math.Max(v, l.bars.floor)) + vg.Points(2)
		c.FillText(l.style, vg.Point{X: x, Y: y}, barValue(v))
	}
}

// barValue formats a bar's value in two significant digits (the axis carries the rest).
func barValue(v float64) string {
	if v == 0 {
		return "0"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}
