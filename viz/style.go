package viz

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Type sizes, chosen to read at a glance on the default 16 cm x 12 cm
// figure: a sans-serif face, a larger title, and legend and tick labels
// no smaller than 9.5 pt.
const (
	titleSize     = 13
	axisLabelSize = 11
	tickLabelSize = 10
	legendSize    = 10
	noteSize      = 9.5
)

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func sans(size vg.Length) font.Font { return font.From(sansFont, size) }

// palette is a colour-blind-aware qualitative palette (Okabe-Ito, with
// black left for the original trace of a map). Indexed by a series'
// group, never by its position alone.
var palette = []color.NRGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xd5, 0x5e, 0x00, 0xff}, // vermilion
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0x99, 0x66, 0x33, 0xff}, // brown
}

func paletteColor(i int) color.NRGBA { return palette[i%len(palette)] }

// styleText gives every text of p the sans-serif face and the sizes
// above, leaves room under the title, and thins the axes. The title is
// not bold: gonum's PDF backend (vgpdf, v0.17) registers a bold face under
// a name it then cannot find ("undefined font: liberationsans-bold B").
func styleText(p *plot.Plot) {
	p.Title.TextStyle.Font = font.From(sansFont, titleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = sans(axisLabelSize)
		a.Label.Padding = vg.Points(4)
		a.Tick.Label.Font = sans(tickLabelSize)
		a.Tick.Label.Handler = newSupText()
		a.Tick.Length = vg.Points(5)
		a.Tick.Width = vg.Points(0.75)
		a.Width = vg.Points(0.75)
		a.Padding = vg.Points(4)
	}
}
