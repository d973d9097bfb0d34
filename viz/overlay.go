package viz

import (
	"image/color"
	"runtime"
	"strings"
	"sync"
	"weak"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// side is where a legend that fits nowhere inside the data area goes.
type side int

const (
	sideAbove side = iota // between the title and the data (charts)
	sideBelow             // under the data (maps, whose axes are hidden)
)

// boxInset keeps placed boxes off the edges of the data area, and
// outsideGap separates a legend outside the data area from it.
const (
	boxInset   = vg.Length(4)
	outsideGap = vg.Length(6)
)

// maxOutsideShare is the largest share of the figure's height a legend
// outside the data area may take; entries that do not fit are counted in
// a last line instead ("… and 58 more").
const maxOutsideShare = 0.3

// overlay is the last plotter of every Map and Chart. At draw time it
// projects the data onto the real canvas and puts the legend (and a map's
// scale bar) where they cover no data. Whether the legend needs room
// outside the data area is decided before drawing, by fit, because the
// room must be reserved before gonum lays out the plot.
type overlay struct {
	obstacles []obstacle
	legend    *legendBox
	prefs     []anchor // preferred legend anchors, tried first
	outside   side
	// forceOutside always puts the legend outside the data area.
	forceOutside bool
	// scale draws a scale bar (maps).
	scale      bool
	scaleStyle text.Style
	// aspect is a map's data bounding box (xmin, xmax, ymin, ymax), kept at
	// equal scales on both axes for whatever canvas the map is drawn on.
	aspect *[4]float64

	// Set by fit.
	reserved bool
	basePad  vg.Length // Title.Padding (above) or X.Padding (below) unreserved
	title    string    // the caller's title, before wrapping
	wrapped  string

	// Where the last draw put the legend and the scale bar (tests).
	last struct {
		legend, scale         spot
		legendOutside, placed bool
	}
}

func (o *overlay) hasLegend() bool { return o.legend != nil && len(o.legend.entries) > 0 }

// Plot implements plot.Plotter.
func (o *overlay) Plot(c draw.Canvas, p *plot.Plot) {
	pl := o.place(c, p, project(o.obstacles, c, p))
	o.last.legend, o.last.scale, o.last.legendOutside, o.last.placed = pl.legend, pl.scale, o.reserved && o.hasLegend(), true
	if pl.scale.ok {
		o.drawScale(c, p, pl.scale.rect, pl.length)
	}
	if pl.legend.ok {
		o.legend.draw(c, pl.legend.rect, pl.layout)
	}
}

// placement is where the legend and the scale bar go.
type placement struct {
	legend, scale spot
	layout        legendLayout
	length        float64 // of the scale bar, in metres
}

// glyphPad is the largest glyph radius among the obstacles: gonum shrinks
// the data area by up to that much to keep glyphs inside it.
func (o *overlay) glyphPad() vg.Length {
	var r vg.Length
	for _, ob := range o.obstacles {
		if !ob.joined {
			r = max(r, ob.pad)
		}
	}
	return r
}

var scalePrefs = []anchor{bottomLeft, bottomRight, topLeft, topRight}

// place decides where the legend and the scale bar go on the data canvas
// c: the legend first (outside when room was reserved), at the first of
// its candidate positions where it covers no data and leaves the scale
// bar a free place too; failing that, where it covers the least.
func (o *overlay) place(c draw.Canvas, p *plot.Plot, obs []canvasObstacle) placement {
	var pl placement
	container := inflate(c.Rectangle, -boxInset)
	var scaleSize vg.Point
	if o.scale {
		scaleSize, pl.length = o.scaleSize(c, p)
	}
	scaleAt := func(taken ...vg.Rectangle) spot {
		if !o.scale {
			return spot{free: true}
		}
		return findSpot(container, scaleSize, scalePrefs, obs, taken)
	}
	switch {
	case !o.hasLegend():
		pl.scale = scaleAt()
		return pl
	case o.reserved:
		pl.layout = o.legend.widest(c.Size().X, len(o.legend.entries))
		size := pl.layout.size
		x := max(c.Min.X, c.Min.X+(c.Size().X-size.X)/2)
		y := c.Max.Y + o.glyphPad() + outsideGap
		if o.outside == sideBelow {
			y = c.Min.Y - outsideGap - size.Y
		}
		pl.legend = spot{rect: vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + size.X, Y: y + size.Y}}, free: true, ok: true}
		pl.scale = scaleAt()
		return pl
	}
	layouts := []legendLayout{o.legend.layout(1)}
	if len(o.legend.entries) >= 4 {
		layouts = append(layouts, o.legend.layout(2))
	}
	var fallback *placement // legend free, scale bar not
	for _, lay := range layouts {
		for _, a := range candidates(o.prefs) {
			r, ok := rectAt(container, lay.size, a)
			if !ok || coverage(r, obs, 1) > 0 {
				continue
			}
			cand := placement{legend: spot{rect: r, free: true, ok: true}, scale: scaleAt(r), layout: lay, length: pl.length}
			if cand.scale.free {
				return cand
			}
			if fallback == nil {
				fallback = &cand
			}
		}
	}
	if fallback != nil {
		return *fallback
	}
	pl.layout = layouts[0]
	pl.legend = findSpot(container, pl.layout.size, o.prefs, obs, nil)
	pl.scale = scaleAt(pl.legend.rect)
	return pl
}

// scaleSize is the size of the scale bar's box for the canvas c, and the
// length in metres it shows: a round length near a fifth of the width.
func (o *overlay) scaleSize(c draw.Canvas, p *plot.Plot) (vg.Point, float64) {
	span := p.X.Max - p.X.Min
	length := niceLength(span / 5)
	barW := vg.Length(length/span) * c.Size().X
	label := formatMetres(length)
	w := max(barW, o.scaleStyle.Width(label)) + 2*legendPad
	h := o.scaleStyle.Height(label) + scaleTick + vg.Points(2) + scaleBarW + 2*legendPad
	return vg.Point{X: w, Y: h}, length
}

const (
	scaleTick = vg.Length(3)
	scaleBarW = vg.Length(2)
)

func (o *overlay) drawScale(c draw.Canvas, p *plot.Plot, r vg.Rectangle, length float64) {
	frame(c, r, false)
	barW := vg.Length(length/(p.X.Max-p.X.Min)) * c.Size().X
	cx := (r.Min.X + r.Max.X) / 2
	y := r.Min.Y + legendPad + scaleBarW/2
	ls := draw.LineStyle{Color: color.Black, Width: scaleBarW}
	a, b := cx-barW/2, cx+barW/2
	c.StrokeLine2(ls, a, y, b, y)
	c.StrokeLine2(ls, a, y-scaleBarW/2, a, y+scaleTick)
	c.StrokeLine2(ls, b, y-scaleBarW/2, b, y+scaleTick)
	sty := o.scaleStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	c.FillText(sty, vg.Point{X: cx, Y: y + scaleTick + vg.Points(1)}, formatMetres(length))
}

// fit prepares p to be drawn on a w x h canvas: it wraps a title wider
// than the canvas, keeps a map's scales equal, and reserves room outside
// the data area for the legend when no place inside is free.
func (o *overlay) fit(p *plot.Plot, w, h vg.Length) {
	if p.Title.Text != o.wrapped { // the caller changed it since
		o.title = p.Title.Text
	}
	o.wrapped = wrapText(p.Title.TextStyle, o.title, w)
	o.unreserve(p)
	dc := draw.NewCanvas(&recorder.Canvas{}, w, h) // measures only
	c := o.dataCanvas(p, dc)
	if !o.hasLegend() {
		return
	}
	if !o.forceOutside {
		if o.place(c, p, project(o.obstacles, c, p)).legend.free {
			return
		}
	}
	o.reserve(p, c.Size().X, h)
	o.dataCanvas(p, dc)
}

// dataCanvas returns p's data area on dc, after equalising a map's scales
// for it.
func (o *overlay) dataCanvas(p *plot.Plot, dc draw.Canvas) draw.Canvas {
	c := p.DataCanvas(dc)
	if o.aspect != nil {
		setEqualAspect(p, o.aspect, c.Size())
		c = p.DataCanvas(dc)
	}
	return c
}

func (o *overlay) unreserve(p *plot.Plot) {
	o.reserved = false
	if o.legend != nil {
		o.legend.show(len(o.legend.all))
	}
	p.Title.Text = o.wrapped
	if o.outside == sideBelow {
		p.X.Padding = o.basePad
	} else {
		p.Title.Padding = o.basePad
	}
}

func (o *overlay) reserve(p *plot.Plot, width, height vg.Length) {
	o.reserved = true
	lay := o.legend.limit(width, vg.Length(maxOutsideShare)*height)
	if o.outside == sideBelow {
		p.X.Padding = o.basePad + lay.size.Y + 2*outsideGap
		return
	}
	if p.Title.Text == "" {
		// Title.Padding only counts under a title: an invisible one.
		p.Title.Text = " "
		o.wrapped = " "
	}
	p.Title.Padding = o.basePad + lay.size.Y + 2*outsideGap + o.glyphPad()
}

// aspectFix is the first plotter of a map: it sets the axis ranges for
// equal scales on the canvas actually drawn on, before anything is drawn.
type aspectFix struct{ o *overlay }

func (a aspectFix) Plot(c draw.Canvas, p *plot.Plot) { setEqualAspect(p, a.o.aspect, c.Size()) }

// wrapText breaks txt at spaces into lines no wider than width.
func wrapText(sty text.Style, txt string, width vg.Length) string {
	if txt == "" || strings.Contains(txt, "\n") || sty.Width(txt) <= width {
		return txt
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(txt) {
		if line != "" && sty.Width(line+" "+word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// fitted remembers the overlay of every plot made by this package, so
// that Save can fit the plot to the size it is saved at. Keys are weak:
// an entry goes when its plot is collected.
var fitted = struct {
	sync.Mutex
	m map[weak.Pointer[plot.Plot]]*overlay
}{m: map[weak.Pointer[plot.Plot]]*overlay{}}

func register(p *plot.Plot, o *overlay) {
	k := weak.Make(p)
	fitted.Lock()
	fitted.m[k] = o
	fitted.Unlock()
	runtime.AddCleanup(p, func(k weak.Pointer[plot.Plot]) {
		fitted.Lock()
		delete(fitted.m, k)
		fitted.Unlock()
	}, k)
}

func overlayOf(p *plot.Plot) *overlay {
	fitted.Lock()
	defer fitted.Unlock()
	return fitted.m[weak.Make(p)]
}

// fitPlot fits p to a w x h canvas if Map, Chart, Bars or Histogram made it.
func fitPlot(p *plot.Plot, w, h vg.Length) {
	if o := overlayOf(p); o != nil {
		o.fit(p, w, h)
	}
}
