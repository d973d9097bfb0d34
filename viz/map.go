package viz

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
)

// Series is one trace to draw, with its legend label.
type Series struct {
	Label string
	Trace *trace.Trace
	// Points marks every fix with a dot as well as joining them.
	Points bool
}

// MapOptions controls a trace map.
type MapOptions struct {
	Title string
	// Width and Height of the figure; zero means 16 cm x 12 cm.
	Width, Height vg.Length
	// Origin of the projection; zero means the centre of the bounding box of
	// all points.
	Origin *geo.Point
}

func (o MapOptions) size() (w, h vg.Length) {
	w, h = o.Width, o.Height
	if w == 0 {
		w = 16 * vg.Centimeter
	}
	if h == 0 {
		h = 12 * vg.Centimeter
	}
	return w, h
}

// Map draws traces on a local east-north plane in metres, with equal scales
// on both axes and a scale bar instead of axes.
func Map(series []Series, opt MapOptions) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("viz: no traces to draw")
	}
	origin, err := centre(series, opt.Origin)
	if err != nil {
		return nil, err
	}
	enu := geo.NewENU(origin)
	p := plot.New()
	p.Title.Text = opt.Title
	p.HideAxes()
	p.Legend.Top = true
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Trace.Points))
		for j, pt := range s.Trace.Points {
			xy[j].X, xy[j].Y = enu.Forward(pt.Geo())
			xmin, xmax = math.Min(xmin, xy[j].X), math.Max(xmax, xy[j].X)
			ymin, ymax = math.Min(ymin, xy[j].Y), math.Max(ymax, xy[j].Y)
		}
		col := plotutil.Color(i)
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("viz: trace %q: %w", s.Label, err)
		}
		l.Color = col
		l.Width = vg.Points(1.2)
		p.Add(l)
		thumbs := []plot.Thumbnailer{l}
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, fmt.Errorf("viz: trace %q: %w", s.Label, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if s.Label != "" {
			p.Legend.Add(s.Label, thumbs...)
		}
	}
	w, h := opt.size()
	setEqualAspect(p, xmin, xmax, ymin, ymax, float64(w)/float64(h))
	p.Add(&scaleBar{})
	return p, nil
}

func centre(series []Series, o *geo.Point) (geo.Point, error) {
	if o != nil {
		return *o, o.Validate()
	}
	minLat, maxLat, minLon, maxLon := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	n := 0
	for _, s := range series {
		if s.Trace == nil {
			return geo.Point{}, fmt.Errorf("viz: series %q has no trace", s.Label)
		}
		for _, pt := range s.Trace.Points {
			minLat, maxLat = math.Min(minLat, pt.Lat), math.Max(maxLat, pt.Lat)
			minLon, maxLon = math.Min(minLon, pt.Lon), math.Max(maxLon, pt.Lon)
			n++
		}
	}
	if n == 0 {
		return geo.Point{}, errors.New("viz: the traces have no points")
	}
	return geo.Point{Lat: (minLat + maxLat) / 2, Lon: (minLon + maxLon) / 2}, nil
}

// setEqualAspect pads the data range so one metre has the same length on
// both axes for a figure of the given width/height ratio.
func setEqualAspect(p *plot.Plot, xmin, xmax, ymin, ymax, aspect float64) {
	dx, dy := xmax-xmin, ymax-ymin
	cx, cy := (xmin+xmax)/2, (ymin+ymax)/2
	wx, wy := math.Max(dx*1.08, 1), math.Max(dy*1.08, 1)
	if wx/wy < aspect {
		wx = wy * aspect
	} else {
		wy = wx / aspect
	}
	p.X.Min, p.X.Max = cx-wx/2, cx+wx/2
	p.Y.Min, p.Y.Max = cy-wy/2, cy+wy/2
}

// scaleBar draws a bar of a round length in the lower left corner.
type scaleBar struct{}

func (scaleBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	length := niceLength((p.X.Max - p.X.Min) / 5)
	x0 := p.X.Min + (p.X.Max-p.X.Min)*0.04
	y0 := p.Y.Min + (p.Y.Max-p.Y.Min)*0.05
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(2)}
	a, b := vg.Point{X: trX(x0), Y: trY(y0)}, vg.Point{X: trX(x0 + length), Y: trY(y0)}
	c.StrokeLine2(ls, a.X, a.Y, b.X, b.Y)
	tick := vg.Points(3)
	c.StrokeLine2(ls, a.X, a.Y-tick, a.X, a.Y+tick)
	c.StrokeLine2(ls, b.X, b.Y-tick, b.X, b.Y+tick)
	ts := p.Title.TextStyle
	ts.Font.Size = vg.Points(9)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YBottom
	c.FillText(ts, vg.Point{X: (a.X + b.X) / 2, Y: a.Y + tick}, formatMetres(length))
}

// niceLength rounds x down to 1, 2 or 5 times a power of ten.
func niceLength(x float64) float64 {
	if x <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(x)))
	switch m := x / e; {
	case m >= 5:
		return 5 * e
	case m >= 2:
		return 2 * e
	default:
		return e
	}
}

func formatMetres(m float64) string {
	if m >= 1000 {
		return fmt.Sprintf("%g km", m/1000)
	}
	if m >= 1 {
		return fmt.Sprintf("%g m", m)
	}
	return fmt.Sprintf("%g cm", m*100)
}
