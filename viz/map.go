package viz

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
)

// Role says what a trace is, which fixes its colour and drawing order on a
// map, whatever its position among the series: the same role looks the
// same on every map of every command.
type Role int

const (
	// RoleAuto colours a trace by its label: traces with the same label
	// share a colour and one legend entry.
	RoleAuto Role = iota
	// RoleOriginal is the true trace: black, drawn over the others.
	RoleOriginal
	// RoleReleased is a sanitised or released trace: vermilion, drawn
	// first and slightly translucent so the original shows through.
	RoleReleased
	// RoleReconstruction is an adversary's estimate of the original: blue.
	RoleReconstruction
)

// Series is one trace to draw, with its legend label.
type Series struct {
	Label string
	Trace *trace.Trace
	// Points marks every fix with a dot as well as joining them.
	Points bool
	// Role fixes the colour and drawing order; see Role.
	Role Role
}

// MapOptions controls a trace map.
type MapOptions struct {
	Title string
	// Width and Height of the figure; zero means 16 cm x 12 cm. Save
	// fits the map again to the size it is saved at.
	Width, Height vg.Length
	// Origin of the projection; zero means the centre of the bounding box of
	// all points.
	Origin *geo.Point
	// NoEndpoints leaves out the start and end markers of each trace.
	NoEndpoints bool
	// LegendOutside always puts the legend under the map; by default it
	// goes there only when no place on the map is free of data.
	LegendOutside bool
}

// traceStyle is how a trace is drawn.
type traceStyle struct {
	color  color.Color
	width  vg.Length // line
	radius vg.Length // dots at the fixes
	z      int       // drawing order: higher on top
	dashes []vg.Length
}

func roleStyle(r Role) (traceStyle, bool) {
	switch r {
	case RoleOriginal:
		return traceStyle{color: color.NRGBA{0x1a, 0x1a, 0x1a, 0xff}, width: vg.Points(1.5), radius: vg.Points(1.7), z: 3}, true
	case RoleReleased:
		return traceStyle{color: color.NRGBA{0xd5, 0x5e, 0x00, 0xc8}, width: vg.Points(1.1), radius: vg.Points(1.6), z: 0}, true
	case RoleReconstruction:
		return traceStyle{color: color.NRGBA{0x00, 0x72, 0xb2, 0xff}, width: vg.Points(1.6), radius: vg.Points(1.7), z: 2}, true
	}
	return traceStyle{width: vg.Points(1.4), radius: vg.Points(1.6), z: 1}, false
}

// Marker sizes.
const (
	endpointRadius = vg.Length(4.5)
)

// endpointGlyph marks where a trace starts (a triangle) or ends (a square),
// filled in the trace's colour with a white edge that keeps it visible on
// top of lines.
type endpointGlyph struct{ start bool }

func (g endpointGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var path vg.Path
	if g.start {
		path.Move(vg.Point{X: pt.X, Y: pt.Y + 1.3*r})
		path.Line(vg.Point{X: pt.X - 1.15*r, Y: pt.Y - 0.7*r})
		path.Line(vg.Point{X: pt.X + 1.15*r, Y: pt.Y - 0.7*r})
	} else {
		d := 0.85 * r
		path.Move(vg.Point{X: pt.X - d, Y: pt.Y - d})
		path.Line(vg.Point{X: pt.X + d, Y: pt.Y - d})
		path.Line(vg.Point{X: pt.X + d, Y: pt.Y + d})
		path.Line(vg.Point{X: pt.X - d, Y: pt.Y + d})
	}
	path.Close()
	c.SetColor(sty.Color)
	c.Fill(path)
	c.SetLineStyle(draw.LineStyle{Color: color.White, Width: vg.Points(1)})
	c.Stroke(path)
}

// Map draws traces on a local east-north plane in metres, with equal scales
// on both axes and a scale bar instead of axes. Each trace gets start (▲)
// and end (■) markers; traces are coloured by role, or by label. The
// legend and the scale bar go where they cover no trace, the legend under
// the map when no place on it is free.
func Map(series []Series, opt MapOptions) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("viz: no traces to draw")
	}
	for _, s := range series {
		if s.Trace == nil {
			return nil, fmt.Errorf("viz: series %q has no trace", s.Label)
		}
	}
	origin, err := centre(series, opt.Origin)
	if err != nil {
		return nil, err
	}
	enu := geo.NewENU(origin)
	p := plot.New()
	styleText(p)
	p.Title.Text = opt.Title
	p.HideAxes()
	p.X.Padding, p.Y.Padding = 0, 0

	groups, groupOf := mapGroups(series)
	xys, bbox, err := projectSeries(series, enu)
	if err != nil {
		return nil, err
	}

	ov := &overlay{
		legend:       newLegendBox(),
		prefs:        []anchor{topRight, topLeft, bottomRight, bottomLeft},
		outside:      sideBelow,
		forceOutside: opt.LegendOutside,
		scale:        true,
		scaleStyle:   text.Style{Color: color.Black, Font: sans(noteSize), Handler: plot.DefaultTextHandler},
		aspect:       &bbox,
		basePad:      p.X.Padding,
	}
	p.Add(aspectFix{ov})

	order := make([]int, len(series))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return groupOf[order[a]].style.z < groupOf[order[b]].style.z })
	for _, i := range order {
		s, g, xy := series[i], groupOf[i], xys[i]
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("viz: trace %q: %w", s.Label, err)
		}
		l.Color, l.Width, l.Dashes = g.style.color, g.style.width, g.style.dashes
		p.Add(l)
		ov.obstacles = append(ov.obstacles, obstacle{xy: xy, joined: true, pad: l.Width / 2})
		if g.thumbs == nil {
			g.thumbs = []plot.Thumbnailer{l}
		}
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, fmt.Errorf("viz: trace %q: %w", s.Label, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: g.style.color, Radius: g.style.radius, Shape: draw.CircleGlyph{}}
			p.Add(sc)
			ov.obstacles = append(ov.obstacles, obstacle{xy: xy, pad: sc.Radius})
			if len(g.thumbs) == 1 {
				g.thumbs = append(g.thumbs, sc)
			}
		}
	}
	// Markers over every line, so that no trace hides another's start.
	if !opt.NoEndpoints {
		for _, i := range order {
			xy := xys[i]
			if len(xy) == 0 {
				continue
			}
			ends := plotter.XYs{xy[0], xy[len(xy)-1]}
			for k, start := range []bool{true, false} {
				sc, err := plotter.NewScatter(ends[k : k+1])
				if err != nil {
					return nil, fmt.Errorf("viz: trace %q: %w", series[i].Label, err)
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: groupOf[i].style.color, Radius: endpointRadius, Shape: endpointGlyph{start: start}}
				p.Add(sc)
				ov.obstacles = append(ov.obstacles, obstacle{xy: ends[k : k+1], pad: 1.3 * endpointRadius})
			}
		}
	}
	for _, g := range groups {
		if g.label != "" {
			ov.legend.add(g.label, g.thumbs...)
		}
	}
	if !opt.NoEndpoints {
		grey := color.NRGBA{0x55, 0x55, 0x55, 0xff}
		for _, e := range []struct {
			label string
			start bool
		}{{"start", true}, {"end", false}} {
			ov.legend.addKept(e.label, &glyphThumb{draw.GlyphStyle{Color: grey, Radius: endpointRadius, Shape: endpointGlyph{start: e.start}}})
		}
	}
	p.Add(ov)
	register(p, ov)
	w, h := defaultSize(opt.Width, opt.Height)
	ov.fit(p, w-2*saveMargin, h-2*saveMargin)
	return p, nil
}

// mapGroup is the style and legend entry that series of one role, or one
// label for RoleAuto, share.
type mapGroup struct {
	style  traceStyle
	label  string
	thumbs []plot.Thumbnailer
}

// mapGroups styles the series by group: a role, or a label for RoleAuto
// (unlabelled traces each on their own), in order of first appearance. It
// returns the groups and each series' group.
func mapGroups(series []Series) (groups []*mapGroup, groupOf []*mapGroup) {
	byKey := map[string]*mapGroup{}
	used := map[color.NRGBA]bool{}
	for _, s := range series {
		if st, ok := roleStyle(s.Role); ok {
			used[opaque(st.color)] = true
		}
	}
	nextAuto := 0
	groupOf = make([]*mapGroup, len(series))
	for i, s := range series {
		key := fmt.Sprintf("%d\x00%s", s.Role, s.Label)
		if s.Label == "" {
			key = fmt.Sprintf("#%d", i)
		}
		g := byKey[key]
		if g == nil {
			st, ok := roleStyle(s.Role)
			if !ok {
				c := paletteColor(nextAuto)
				for n := 0; used[c] && n < len(palette); n++ {
					nextAuto++
					c = paletteColor(nextAuto)
				}
				if nextAuto >= len(palette) { // colours repeat: dash the repeats
					st.dashes = []vg.Length{vg.Points(5), vg.Points(2.5)}
				}
				nextAuto++
				st.color = c
			}
			g = &mapGroup{style: st, label: s.Label}
			byKey[key] = g
			groups = append(groups, g)
		}
		groupOf[i] = g
	}
	return groups, groupOf
}

// projectSeries maps every series' points to the plane of enu (metres east
// and north of the map's centre) and returns them with their bounding box
// (min x, max x, min y, max y).
func projectSeries(series []Series, enu *geo.ENU) ([]plotter.XYs, [4]float64, error) {
	bbox := [4]float64{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	xys := make([]plotter.XYs, len(series))
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Trace.Points))
		for j, pt := range s.Trace.Points {
			xy[j].X, xy[j].Y = enu.Forward(pt.Geo())
			bbox[0], bbox[1] = math.Min(bbox[0], xy[j].X), math.Max(bbox[1], xy[j].X)
			bbox[2], bbox[3] = math.Min(bbox[2], xy[j].Y), math.Max(bbox[3], xy[j].Y)
		}
		xys[i] = xy
	}
	if math.IsInf(bbox[0], 0) {
		return nil, bbox, errors.New("viz: the traces have no points")
	}
	return xys, bbox, nil
}

// glyphThumb is a legend sample of a single glyph.
type glyphThumb struct{ sty draw.GlyphStyle }

func (g *glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.sty, c.Center()) }

func opaque(c color.Color) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = 0xff
	return n
}

func centre(series []Series, o *geo.Point) (geo.Point, error) {
	if o != nil {
		return *o, o.Validate()
	}
	minLat, maxLat, minLon, maxLon := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	n := 0
	for _, s := range series {
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

// setEqualAspect pads the data range bbox (xmin, xmax, ymin, ymax) so one
// metre has the same length on both axes of a data area of the given size.
func setEqualAspect(p *plot.Plot, bbox *[4]float64, size vg.Point) {
	if size.X <= 0 || size.Y <= 0 {
		return
	}
	aspect := float64(size.X / size.Y)
	xmin, xmax, ymin, ymax := bbox[0], bbox[1], bbox[2], bbox[3]
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
