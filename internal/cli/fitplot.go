package cli

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/viz"
)

// PlotFit draws tracepriv fit's figure of a fit's report: the fitted
// lengthscales of each compared kernel when the fit compared kernels,
// else the histogram of the pooled l_eff.
func PlotFit(path string, rep *prior.Report, p *prior.Prior) error {
	if rep.Comparison != nil {
		return plotLengthscales(path, rep, p)
	}
	return plotLEff(path, rep, p)
}

// plotLengthscales draws, for each compared kernel, the empirical
// distribution of its per-window fitted lengthscales (censored fits at
// their bound) on a log axis, with the nominal kernel's family shaded and
// the longest window marked.
func plotLengthscales(path string, rep *prior.Report, p *prior.Prior) error {
	c := rep.Comparison
	var lines []viz.Line
	line := func(ls []float64, label string) {
		slices.Sort(ls)
		share := make([]float64, len(ls))
		for i := range ls {
			share[i] = float64(i+1) / float64(len(ls))
		}
		lines = append(lines, viz.Line{Label: label, XY: viz.XYs(ls, share)})
	}
	for ki, k := range c.Kernels {
		var ls []float64
		parts := make([][]float64, len(k.Parts))
		for _, f := range rep.Fits {
			kf := f.Kernels[ki]
			for d := range 2 {
				l := kf.LengthscaleS[d]
				if kf.Censored[d] {
					l = kf.BoundS
				}
				ls = append(ls, l)
				for i := range parts {
					l := kf.Parts[i].LengthscaleS[d]
					if kf.Parts[i].Censored[d] {
						l = kf.BoundS
					}
					parts[i] = append(parts[i], l)
				}
			}
		}
		if len(k.Parts) > 0 {
			// A sum: one line per part.
			for i, pt := range k.Parts {
				label := fmt.Sprintf("%s, %s part: won %d of %d windows, %d censored", k.Kernel, pt.Role, k.Won, rep.Windows, pt.Censored)
				if pt.Family != nil {
					label += fmt.Sprintf(", adds %.0f-%.0f s to %s", pt.Family.LengthscaleMin, pt.Family.LengthscaleMax, pt.Kernel)
				}
				line(parts[i], label)
			}
			continue
		}
		label := fmt.Sprintf("%s: won %d of %d windows, %d censored", k.Kernel, k.Won, rep.Windows, k.Censored)
		if k.Family != nil {
			label += fmt.Sprintf(", family %.0f-%.0f s", k.Family.LengthscaleMin, k.Family.LengthscaleMax)
		}
		line(ls, label)
	}
	f := p.Family()
	band := [2]float64{f.LengthscaleMin, f.LengthscaleMax}
	longest := c.LongestWindowS
	ch, err := viz.Chart(lines, viz.ChartOptions{
		Title:  fmt.Sprintf("fitted lengthscales of %d windows per kernel (held-out comparison)", rep.Windows),
		XLabel: "lengthscale (s)", YLabel: "share of coordinate fits at or below",
		LogX: true, Band: &band, BandLabel: fmt.Sprintf("nominal family (%s)", f.Kernel),
		Marker: &longest, MarkerLabel: fmt.Sprintf("longest window, %.0f s", longest),
		LegendOutside: true,
	})
	if err != nil {
		return err
	}
	return viz.Save(ch, path, 20*viz.Centimetre, 15*viz.Centimetre)
}

// plotLEff draws the histogram of the pooled l_eff with the chosen quantile
// and the paper's GeoLife interquartile ranges and medians.
func plotLEff(path string, rep *prior.Report, p *prior.Prior) error {
	leff := rep.LEff()
	fq := *p.Fit.FamilyQuantiles
	famLo, famHi := rep.LEffQuantile(fq[0]), rep.LEffQuantile(fq[1])
	// Bins of 0.5 samples up to a limit that covers the paper's range and
	// most of the data; viz counts the rest in the last bin and says so.
	s := slices.Clone(leff)
	slices.Sort(s)
	hi := math.Max(12, math.Ceil(famHi)+2)
	hi = math.Max(hi, math.Min(40, math.Ceil(s[int(0.95*float64(len(s)-1))])))
	opt := viz.HistogramOptions{
		Title:  fmt.Sprintf("%s fits: l_eff of %d coordinate windows", p.Kernel, len(leff)),
		XLabel: "effective lengthscale l_eff (samples)", YLabel: "windows",
		Label: "this corpus", BinWidth: 0.5, Max: hi,
	}
	// The family's ends first and in black, what the figure is about; the
	// paper's x and y in blue and orange, medians and ranges in pairs.
	opt.Markers = append(opt.Markers,
		viz.Marker{X: famLo, Wide: true, Label: fmt.Sprintf("prior family: l_eff %.2f-%.2f (quantiles %g-%g)", famLo, famHi, fq[0], fq[1])},
		viz.Marker{X: famHi, Wide: true})
	for i, axis := range []string{"x", "y"} {
		pq, c := prior.PaperLEffQuartiles[axis], viz.Color(4*i)
		opt.Markers = append(opt.Markers, viz.Marker{X: pq[1], Color: c, Dashed: true, Label: fmt.Sprintf("paper GeoLife %s: median %.2f", axis, pq[1])})
		opt.Bands = append(opt.Bands, viz.Band{Lo: pq[0], Hi: pq[2], Color: c, Label: fmt.Sprintf("paper GeoLife %s: IQR %.2f-%.2f", axis, pq[0], pq[2])})
	}
	h, err := viz.Histogram(leff, opt)
	if err != nil {
		return err
	}
	return viz.Save(h, path, 20*viz.Centimetre, 13*viz.Centimetre)
}
