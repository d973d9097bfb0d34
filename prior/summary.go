package prior

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/tracepriv/tracepriv/trace"
)

// PaperLEffQuartiles are the quartiles of Meehan and Chaudhuri's GeoLife
// l_eff (their saved_data/l_eff_{x,y}.npy), for comparison with a fit by
// FitPaper (the paper's way).
var PaperLEffQuartiles = map[string][3]float64{
	"x": {2.70, 6.27, 8.00},
	"y": {2.59, 5.95, 8.00},
}

// FitSummary is what a fit of a corpus states: the corpus read, the
// fit's Report without the per-window fits, the prior and the files
// written. It is the JSON of "tracepriv fit".
type FitSummary struct {
	Corpus  []string `json:"corpus"`
	Files   int      `json:"files"`
	Ignored []string `json:"ignored_files,omitempty"`
	// Deduplicated and SkippedRecords come from the trace readers: rows
	// merged (exact repeats) and skipped; skipped_rows is their sum.
	Deduplicated   int `json:"deduplicated_points"`
	SkippedRecords int `json:"skipped_records"`
	trace.InputSummary
	*Report
	PaperLEffQuartiles map[string][3]float64 `json:"paper_l_eff_quartiles"`
	Prior              *Prior                `json:"prior"`
	Out                string                `json:"out"`
	// CorpusIndex is the private corpus index written beside Out
	// (CorpusIndexPath), with its number of fixes and persons.
	CorpusIndex        string  `json:"corpus_index,omitempty"`
	CorpusIndexFixes   int     `json:"corpus_index_fixes,omitempty"`
	CorpusIndexPersons int     `json:"corpus_index_persons,omitempty"`
	Plot               string  `json:"plot,omitempty"`
	ElapsedS           float64 `json:"elapsed_s"`
}

// WriteText writes the summary for people: the corpus and the windows
// fitted, the kernels compared (or the paper's l_eff), the family and its
// held-out coverage, warnings, and the files written.
func (r *FitSummary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "corpus: %d files, %d traces, %d points", r.Files, r.Traces, r.Points)
	if r.SkippedRows > 0 {
		fmt.Fprintf(w, " (%d input rows skipped or merged, see stderr)", r.SkippedRows)
	}
	if len(r.SkippedFiles) > 0 {
		fmt.Fprintf(w, "; %d unreadable files skipped", len(r.SkippedFiles))
	}
	fmt.Fprintln(w)
	if len(r.Ignored) > 0 {
		fmt.Fprintf(w, "ignored %d files that are not traces, e.g. %s\n", len(r.Ignored), r.Ignored[0])
	}
	fmt.Fprintf(w, "windows: %d fitted of %d", r.Windows, r.Candidates)
	reasons := make([]string, 0, len(r.Skipped))
	for k := range r.Skipped {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for i, k := range reasons {
		sep := ", "
		if i == 0 {
			sep = "; skipped: "
		}
		fmt.Fprintf(w, "%s%s %d", sep, strings.ReplaceAll(k, "_", " "), r.Skipped[k])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "points: %d fitted, %d thinned out, %d in skipped windows\n", r.PointsFitted, r.PointsThinned, r.PointsSkipped)
	for _, e := range r.FitErrors {
		fmt.Fprintf(w, "  fit failed: %s\n", e)
	}
	q := func(v [3]float64) string { return fmt.Sprintf("%.2f / %.2f / %.2f", v[0], v[1], v[2]) }
	p := r.Prior
	fq := *p.Fit.FamilyQuantiles
	if c := r.Comparison; c != nil {
		fmt.Fprintf(w, "windows: median %.0f min, %.0f points; longest %.0f min\n", c.MedianWindowS/60, c.MedianPoints, c.LongestWindowS/60)
		fmt.Fprintf(w, "%-17s %6s %14s  %-42s %9s\n", "kernel", "won", "gain vs rbf", "lengthscale percentiles 5/25/50/75/95 (s)", "censored")
		pct := func(lp [5]float64) string {
			return fmt.Sprintf("%.0f / %.0f / %.0f / %.0f / %.0f", lp[0], lp[1], lp[2], lp[3], lp[4])
		}
		for _, k := range c.Kernels {
			g := "-"
			if k.MedianGainOverRBF != nil {
				g = fmt.Sprintf("%.1f", *k.MedianGainOverRBF)
			}
			if len(k.Parts) > 0 {
				fmt.Fprintf(w, "%-17s %6d %14s\n", k.Kernel, k.Won, g)
				for _, pt := range k.Parts {
					fmt.Fprintf(w, "  %-15s %6s %14s  %-42s %4d/%d\n", pt.Role+" "+pt.Kernel, "", "", pct(pt.LengthscalePercentilesS), pt.Censored, pt.Fits)
				}
				continue
			}
			fmt.Fprintf(w, "%-17s %6d %14s  %-42s %4d/%d\n", k.Kernel, k.Won, g, pct(k.LengthscalePercentilesS), k.Censored, k.Fits)
		}
		fmt.Fprintf(w, "(won: windows whose held-out likelihood the kernel maximised; gain: median held-out log-likelihood over rbf, nats; family: kernels winning >= %g of windows, "+
			"a winning sum adding each part's range to its kernel's entry)\n", c.MinWinShare)
	} else {
		fmt.Fprintf(w, "l_eff quartiles (samples): %s  (east %s, north %s)\n", q(r.LEffQuartiles), q(r.LEffQuartilesEast), q(r.LEffQuartilesNorth))
		fmt.Fprintf(w, "  paper, GeoLife:            x %s, y %s\n", q(PaperLEffQuartiles["x"]), q(PaperLEffQuartiles["y"]))
		fmt.Fprintf(w, "lengthscale on a fit bound: %d at the lower, %d at the upper (of %d coordinate fits)\n", r.AtLowerBound, r.AtUpperBound, 2*r.Windows)
		fmt.Fprintf(w, "lengthscale quartiles: %s s\n", q(r.LengthscaleQuartiles))
	}
	fmt.Fprintf(w, "sampling period quartiles: %s s; variance quartiles: %.4g / %.4g / %.4g m^2\n", q(r.PeriodQuartiles), r.VarianceQuartiles[0], r.VarianceQuartiles[1], r.VarianceQuartiles[2])
	for i, f := range p.Families().Kernels {
		head := "prior family:"
		if i > 0 {
			head = "        and:"
		}
		fmt.Fprintf(w, "%s %s, lengthscale %.4g-%.4g s, variance >= %.4g m^2\n", head, f.Kernel, f.LengthscaleMin, f.LengthscaleMax, f.Variance)
	}
	fmt.Fprintf(w, "  (quantiles %g-%g; variance quantile %.2g; nominal %s at %.4g s, std %.1f m)\n", fq[0], fq[1], 1-fq[1], p.Kernel, p.Lengthscale, math.Sqrt(p.Variance))
	if c := r.HeldOutCoverage; c != nil {
		fmt.Fprintf(w, "held-out coverage: %.1f %% (%d of %d windows, leaving each of %d persons out, are won by a kernel and lengthscales the family holds or its members' spectral hull dominates)\n",
			100*c.Share, c.Covered, c.Windows, c.Persons)
		for _, u := range c.Uncovered {
			fmt.Fprintf(w, "  not covered: person %s, trace %d from point %d: %s at %.4g / %.4g s\n", u.UID, u.Trace, u.First, u.Kernel, u.LengthscaleS[0], u.LengthscaleS[1])
		}
	} else if r.Comparison != nil {
		fmt.Fprintln(w, "held-out coverage: not measured (it needs windows of at least two persons)")
	}
	if p.Origin != nil {
		fmt.Fprintf(w, "public origin: %.4f, %.4f (%s)\n", p.Origin.Lat, p.Origin.Lon, p.Origin.Note)
	}
	if r.CorpusIndex != "" {
		fmt.Fprintf(w, "private corpus index: %d fixes of %d persons in %s (for sanitize's overlap check; do not publish it)\n", r.CorpusIndexFixes, r.CorpusIndexPersons, r.CorpusIndex)
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	if r.Censored {
		fmt.Fprintf(w, "warning: %d of %d fits ended on the upper lengthscale bound, more than 1 - %g: the family's upper end is that bound, a lower limit on the dependence\n", r.AtUpperBound, 2*r.Windows, fq[1])
	}
	fmt.Fprintf(w, "wrote %s", r.Out)
	if r.CorpusIndex != "" {
		fmt.Fprintf(w, ", %s", r.CorpusIndex)
	}
	if r.Plot != "" {
		fmt.Fprintf(w, " and %s", r.Plot)
	}
	fmt.Fprintf(w, " in %.1f s (%d workers)\n", r.ElapsedS, r.Workers)
	return nil
}
