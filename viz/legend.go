package viz

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendBox is tracepriv's own legend: gonum's plot.Legend can only sit
// in a corner of the data area, whatever it covers, and has one column.
// This one is drawn by the overlay wherever it covers no data, on a
// translucent white ground, in as many columns as fit when it goes
// outside the data area.
type legendBox struct {
	// entries are those shown: all of them, or as many as fit with a
	// summary of the rest (see limit).
	entries, all []legendEntry
	style        text.Style
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
	// keep marks an entry never summarised away (start, end).
	keep bool
}

// Legend geometry.
const (
	legendPad      = vg.Length(4)  // inside the frame
	legendThumbW   = vg.Length(22) // sample line
	legendThumbGap = vg.Length(4)  // sample to text
	legendColGap   = vg.Length(12) // between columns
	legendRowGap   = vg.Length(1.5)
)

func newLegendBox() *legendBox {
	return &legendBox{style: text.Style{Color: color.Black, Font: sans(legendSize), Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}}
}

func (l *legendBox) add(label string, thumbs ...plot.Thumbnailer) {
	l.all = append(l.all, legendEntry{label: label, thumbs: thumbs})
	l.entries = l.all
}

func (l *legendBox) addKept(label string, thumbs ...plot.Thumbnailer) {
	l.all = append(l.all, legendEntry{label: label, thumbs: thumbs, keep: true})
	l.entries = l.all
}

// show shows the first n entries that may be summarised, the kept ones,
// and a line counting the rest (n >= len(all): everything).
func (l *legendBox) show(n int) {
	if n >= len(l.all) {
		l.entries = l.all
		return
	}
	var shown, kept []legendEntry
	hidden := 0
	for _, e := range l.all {
		switch {
		case e.keep:
			kept = append(kept, e)
		case len(shown) < n:
			shown = append(shown, e)
		default:
			hidden++
		}
	}
	if hidden > 0 {
		shown = append(shown, legendEntry{label: fmt.Sprintf("… and %d more", hidden)})
	}
	l.entries = append(shown, kept...)
}

// limit shows as many entries as fit, in the widest layout for width, in
// height, and returns that layout.
func (l *legendBox) limit(width, height vg.Length) legendLayout {
	l.show(len(l.all))
	lay := l.widest(width, len(l.entries))
	if lay.size.Y <= height {
		return lay
	}
	// The fewest entries that do not fit, less one; none fits at all when
	// even the bare summary overflows, and then the summary is shown.
	n := sort.Search(len(l.all), func(k int) bool {
		l.show(k)
		return l.widest(width, len(l.entries)).size.Y > height
	})
	l.show(max(n-1, 0))
	return l.widest(width, len(l.entries))
}

// legendLayout is the legend's grid: entries fill rows left to right.
type legendLayout struct {
	cols, rows int
	colW       []vg.Length
	rowH       vg.Length
	size       vg.Point
}

func (l *legendBox) layout(cols int) legendLayout {
	n := len(l.entries)
	cols = max(1, min(cols, n))
	lay := legendLayout{cols: cols, rows: (n + cols - 1) / cols, colW: make([]vg.Length, cols)}
	for i, e := range l.entries {
		w := legendThumbW + legendThumbGap + l.style.Width(e.label)
		lay.colW[i%cols] = max(lay.colW[i%cols], w)
		lay.rowH = max(lay.rowH, l.style.Height(e.label))
	}
	lay.rowH += legendRowGap
	for i, w := range lay.colW {
		lay.size.X += w
		if i > 0 {
			lay.size.X += legendColGap
		}
	}
	lay.size.X += 2 * legendPad
	lay.size.Y = vg.Length(lay.rows)*lay.rowH + 2*legendPad - legendRowGap
	return lay
}

// widest returns the layout with the most columns (at most maxCols) that
// fits in width, or one column.
func (l *legendBox) widest(width vg.Length, maxCols int) legendLayout {
	best := l.layout(1)
	for c := 2; c <= min(maxCols, len(l.entries)); c++ {
		lay := l.layout(c)
		if lay.size.X > width {
			break
		}
		if lay.rows < best.rows {
			best = lay
		}
	}
	return best
}

// frame draws the translucent ground of a box placed on the plot.
func frame(c draw.Canvas, r vg.Rectangle, border bool) {
	path := vg.Path{}
	path.Move(r.Min)
	path.Line(vg.Point{X: r.Max.X, Y: r.Min.Y})
	path.Line(r.Max)
	path.Line(vg.Point{X: r.Min.X, Y: r.Max.Y})
	path.Close()
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 225})
	c.Fill(path)
	if border {
		c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 170}, Width: vg.Points(0.6)})
		c.Stroke(path)
	}
}

func (l *legendBox) draw(c draw.Canvas, r vg.Rectangle, lay legendLayout) {
	frame(c, r, true)
	for i, e := range l.entries {
		row, col := i/lay.cols, i%lay.cols
		x := r.Min.X + legendPad
		for j := 0; j < col; j++ {
			x += lay.colW[j] + legendColGap
		}
		top := r.Max.Y - legendPad - vg.Length(row)*lay.rowH
		mid := top - (lay.rowH-legendRowGap)/2
		h := (lay.rowH - legendRowGap) * 0.7
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: mid - h/2}, Max: vg.Point{X: x + legendThumbW, Y: mid + h/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(l.style, vg.Point{X: x + legendThumbW + legendThumbGap, Y: mid}, e.label)
	}
}
