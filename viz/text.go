package viz

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// supText is a text handler for tick labels that raises the parts written
// "^{…}" as superscripts, so that a log axis reads 10⁻⁵ rather than 1e-05.
// The Liberation fonts lack most Unicode superscript digits and gonum's
// LaTeX handler has no superscripts yet, hence this small handler. Text
// without "^{" is drawn exactly as text.Plain draws it.
type supText struct {
	text.Plain
}

func newSupText() supText { return supText{text.Plain{Fonts: font.DefaultCache}} }

// supScale and supRise size and raise a superscript relative to the font.
const supScale, supRise = 0.72, 0.42

type textRun struct {
	s   string
	sup bool
}

func splitSup(txt string) []textRun {
	var runs []textRun
	for txt != "" {
		i := strings.Index(txt, "^{")
		if i < 0 {
			runs = append(runs, textRun{s: txt})
			break
		}
		j := strings.Index(txt[i:], "}")
		if j < 0 {
			runs = append(runs, textRun{s: txt})
			break
		}
		if i > 0 {
			runs = append(runs, textRun{s: txt[:i]})
		}
		runs = append(runs, textRun{s: txt[i+2 : i+j], sup: true})
		txt = txt[i+j+1:]
	}
	return runs
}

func supFont(f font.Font) font.Font {
	f.Size = vg.Length(float64(f.Size) * supScale)
	return f
}

// Box implements text.Handler.
func (h supText) Box(txt string, fnt font.Font) (w, ht, d vg.Length) {
	if !strings.Contains(txt, "^{") {
		return h.Plain.Box(txt, fnt)
	}
	ext := h.Extents(fnt)
	ht, d = ext.Ascent, ext.Descent
	for _, r := range splitSup(txt) {
		f := fnt
		if r.sup {
			f = supFont(fnt)
			ht = max(ht, vg.Length(supRise*float64(fnt.Size))+h.Extents(f).Ascent)
		}
		rw, _, _ := h.Plain.Box(r.s, f)
		w += rw
	}
	return w, ht, d
}

// Draw implements text.Handler for single-line, unrotated text with
// superscripts; anything else goes to text.Plain.
func (h supText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	if !strings.Contains(txt, "^{") || sty.Rotation != 0 || strings.Contains(txt, "\n") {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	w, ht, d := h.Box(txt, sty.Font)
	// Baseline: the box spans [baseline-d, baseline+ht]; YAlign 0 puts the
	// box's bottom at pt, -1 its top.
	base := pt.Y + vg.Length(sty.YAlign)*(ht+d) + d
	x := pt.X + vg.Length(sty.XAlign)*w
	c.SetColor(sty.Color)
	for _, r := range splitSup(txt) {
		f, y := sty.Font, base
		if r.sup {
			f, y = supFont(sty.Font), base+vg.Length(supRise*float64(sty.Font.Size))
		}
		face := h.Fonts.Lookup(f, f.Size)
		c.FillString(face, vg.Point{X: x, Y: y}, r.s)
		x += face.Width(r.s)
	}
}

// logTicks labels a logarithmic axis with powers of ten written 10^{k}
// (plain decimals when every label is between 0.001 and 1000), thinning
// the labelled decades to at most about eight, and labels 1, 2 and 5 times
// each power when the axis spans less than two decades (three when the
// labels are plain decimals).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return plot.LogTicks{}.Ticks(math.Max(lo, math.SmallestNonzeroFloat64), math.Max(hi, lo*10))
	}
	klo, khi := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	span := math.Log10(hi / lo)
	inRange := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	var ticks []plot.Tick
	plain125 := klo >= -3 && khi <= 4
	if span < 2 || (span < 3 && plain125) {
		plainOK := plain125
		for k := klo; k <= khi; k++ {
			for m := 1; m <= 9; m++ {
				v := float64(m) * math.Pow10(k)
				if !inRange(v) {
					continue
				}
				t := plot.Tick{Value: v}
				if m == 1 || m == 2 || m == 5 || span < 0.5 {
					t.Label = formatPow(m, k, plainOK)
				}
				ticks = append(ticks, t)
			}
		}
		return ticks
	}
	stride := int(math.Ceil(span / 8))
	plainOK := klo >= -3 && khi <= 3
	for k := klo; k <= khi; k++ {
		v := math.Pow10(k)
		if inRange(v) {
			t := plot.Tick{Value: v}
			if k%stride == 0 {
				t.Label = formatPow(1, k, plainOK)
			}
			ticks = append(ticks, t)
		}
		if span <= 6 {
			for m := 2; m <= 9; m++ {
				if w := float64(m) * v; inRange(w) {
					ticks = append(ticks, plot.Tick{Value: w})
				}
			}
		}
	}
	return ticks
}

// formatPow writes m×10^k, as a decimal when plain is set.
func formatPow(m, k int, plain bool) string {
	if plain {
		return trimFloat(float64(m)*math.Pow10(k), max(0, -k))
	}
	exp := strings.Replace(strconv.Itoa(k), "-", "−", 1)
	if m == 1 {
		return "10^{" + exp + "}"
	}
	return strconv.Itoa(m) + "×10^{" + exp + "}"
}

// niceTicks puts about n labelled ticks at round values (1, 2, 2.5 or 5
// times a power of ten) with unlabelled minor ticks between them: gonum's
// default labels only three or four.
type niceTicks struct{ n int }

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	n := t.n
	if n < 2 {
		n = 6
	}
	raw := (hi - lo) / float64(n)
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	step, minor := 10*e, 5
	for _, c := range []struct {
		m     float64
		minor int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}} {
		if c.m*e >= raw {
			step, minor = c.m*e, c.minor
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if s := step / math.Pow10(-decimals); math.Abs(s-math.Round(s)) > 1e-6 {
		decimals++ // 2.5, 0.25, …
	}
	useExp := math.Max(math.Abs(lo), math.Abs(hi)) >= 1e6 || decimals > 5
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for i := -1; ; i++ {
		major := first + float64(i)*step
		if major > hi+step*1e-9 {
			break
		}
		if major >= lo-step*1e-9 {
			label := trimFloat(major, decimals)
			if useExp {
				label = expLabel(major)
			}
			ticks = append(ticks, plot.Tick{Value: major, Label: label})
		}
		for j := 1; j < minor; j++ {
			if v := major + float64(j)*step/float64(minor); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

func trimFloat(v float64, decimals int) string {
	if math.Abs(v) < 1e-12*math.Max(1, math.Abs(v)) || (decimals < 15 && math.Abs(v) < 0.5*math.Pow10(-decimals)) {
		v = 0
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if s == "-0" {
		s = "0"
	}
	return strings.Replace(s, "-", "−", 1)
}

func expLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	k := int(math.Floor(math.Log10(math.Abs(v))))
	m := v / math.Pow10(k)
	ms := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(m, 'f', 2, 64), "0"), ".")
	s := "10^{" + strings.Replace(strconv.Itoa(k), "-", "−", 1) + "}"
	if ms != "1" {
		s = strings.Replace(ms, "-", "−", 1) + "×" + s
	}
	return s
}

// logAxisLabel draws the label of a logarithmic axis. gonum lays an axis
// label out as centred at the arithmetic middle of the data range, which
// on a log axis sits near its top end, and so shrinks the plot by up to
// half the label's length (a wide empty band under the title). Reporting
// a zero width to the layout, and centring the text itself when drawing,
// keeps the label where gonum draws it without that band.
type logAxisLabel struct {
	text.Plain
}

// Box implements text.Handler.
func (h logAxisLabel) Box(txt string, fnt font.Font) (w, ht, d vg.Length) {
	_, ht, d = h.Plain.Box(txt, fnt)
	return 0, ht, d
}

// Draw implements text.Handler.
func (h logAxisLabel) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	sty.XAlign = text.XCenter
	h.Plain.Draw(c, txt, sty, pt)
}
