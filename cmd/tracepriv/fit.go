package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// paperLEff are the quartiles of Meehan and Chaudhuri's GeoLife l_eff
// (their saved_data/l_eff_{x,y}.npy), printed and shaded for comparison.
var paperLEff = map[string][3]float64{
	"x": {2.70, 6.27, 8.00},
	"y": {2.59, 5.95, 8.00},
}

type fitOutput struct {
	Corpus  []string `json:"corpus"`
	Files   int      `json:"files"`
	Ignored []string `json:"ignored_files,omitempty"`
	// Deduplicated and SkippedRecords come from the trace readers: rows
	// merged (exact repeats) and skipped; skipped_rows is their sum.
	Deduplicated   int `json:"deduplicated_points"`
	SkippedRecords int `json:"skipped_records"`
	trace.InputSummary
	// The fit's report, without the per-window fits.
	*prior.Report
	PaperLEffQuartiles map[string][3]float64 `json:"paper_l_eff_quartiles"`
	Prior              *prior.Prior          `json:"prior"`
	Out                string                `json:"out"`
	// CorpusIndex is the private corpus index written beside Out
	// (prior.CorpusIndexPath), with its number of fixes and persons.
	CorpusIndex        string  `json:"corpus_index,omitempty"`
	CorpusIndexFixes   int     `json:"corpus_index_fixes,omitempty"`
	CorpusIndexPersons int     `json:"corpus_index_persons,omitempty"`
	Plot               string  `json:"plot,omitempty"`
	ElapsedS           float64 `json:"elapsed_s"`
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			ins        []string
			out, plt   string
			rf         readFlags
			opt        prior.Options
			minD, maxD time.Duration
			family     []float64
			force      bool
		)
		cmd := &cobra.Command{
			Use:   "fit --in CORPUS --out PRIOR.json",
			Short: "Fit a Gaussian-process prior class on a corpus of traces",
			Long: `Fit a GP prior family (PRIOR.json, version 4, read by sanitize) on a corpus of
traces. CORPUS is a trace file or a directory searched recursively for .plt,
.csv, .geojson, .json and .gpx files (other files are listed as ignored); --in
may be repeated. Use a corpus separate from the traces the prior will protect:
beside PRIOR.json, fit writes PRIOR.corpus.private.json, a hashed key of every
fix of the corpus (mode 0600; keep it private, never publish it), and sanitize
refuses to release a trace that shares a fix with the corpus (docs/fit.md).
PRIOR.json itself holds nothing of any one trace.

Who the persons are follows the one person rule (docs/input.md): each --in is
one person unless --corpus declares it a corpus (each immediate child folder,
or each uid of a file's uid column, one person; --in Data --corpus on GeoLife
gives one person per <uid>). The prior is fitted on every window of every
person either way; the persons label the windows in the report.

Dirty rows are repaired or skipped as docs/input.md says, and a file that
cannot be read at all is skipped, so that one bad file does not stop a run
over a corpus; both are reported on stderr and in --json (skipped_rows,
skipped_files). --strict stops at the first instead.

By default fit compares kernels (--kernels, default rbf, matern12, matern32,
matern52) by held-out likelihood (docs/fit.md). Each trace is cut into
consecutive windows of 20 min to 2 h, thinned to fixes at least 10 s apart
and at most 200 points. For each window, coordinate (east, north in metres)
and kernel, the variance, the lengthscale (from 1 s to 100 times the
window's duration: no cap) and a GPS nugget are fitted by maximum likelihood
on the even-numbered fixes, and the kernel is scored by the log-likelihood
of the odd-numbered fixes given those. A fit whose lengthscale is on the
bound, or cannot be told from it, is censored: the data only says it is
long. A corpus with more than --max-windows windows is subsampled evenly.

The family lists every kernel that wins at least 5% of the windows, each
with lengthscales from the fixes' spacing (2 x --min-spacing: no fit
resolves a shorter one) to the HI --family quantile (default 0.95) of its
per-window fits (censored fits counted at the longest bound, fits below the
spacing at it), reaching at least the longest window; its variance is the
1 - HI quantile of the fitted variances. With two persons or more, fit
measures the family's held-out coverage leaving one person out: the share
of each person's windows whose own winning kernel and lengthscales the
family fitted on the others holds (or its spectral hull dominates); the
prior records it as family.held_out_coverage (docs/fit.md). The nominal member is the kernel that won most windows, at its
median lengthscale. The file also records a public origin for sanitize's
tangent plane: the median position of the corpus.

--kernel K fits one kernel the way Meehan and Chaudhuri fit theirs instead:
240-320 s windows of at most 50 points, variance normalised to 1,
lengthscale in [1, 40] s, nugget 0.0025, family between the --family
quantiles (default 0.25,0.75). Its lengthscales are capped by the 40 s
bound; use it to reproduce the paper. --paper-windows (with it) cuts only
the first 320 s of each trace, thinned by the authors' index rule.

Rejected windows are counted by reason. --plot draws the distribution of
each kernel's fitted lengthscales with the family (comparison), or the l_eff
histogram with the paper's GeoLife interquartile ranges (--kernel). The
prior and the plot are written together or not at all, never over a corpus
file, and over existing files only with --force.`,
			Example: `  tracepriv fit --in internal/sample/synth-1/commute.plt --out prior.json --plot lengthscales.svg
  tracepriv fit --in internal/sample/synth-1/commute.plt --kernels matern32,matern52 --family 0.1,0.9 --out prior3252.json --json
  tracepriv fit --in internal/sample/synth-1/commute.plt --kernel rbf --out prior-paper.json --plot leff.svg
  # on a corpus of other people's traces, e.g. GeoLife users: tracepriv fit --in CORPUS_DIR --out prior.json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				start := time.Now()
				if len(ins) == 0 || out == "" {
					return usageErrorf("fit: --in and --out are required")
				}
				fl := cmd.Flags()
				switch {
				case fl.Changed("family") && (len(family) != 2 || !(family[0] > 0 && family[0] <= family[1] && family[1] < 1)):
					return usageErrorf("fit: --family %v: give two quantiles LO,HI with 0 < LO <= HI < 1, e.g. 0.05,0.95", family)
				case fl.Changed("max-duration") && maxD <= 0:
					return usageErrorf("fit: --max-duration %v must be positive", maxD)
				case fl.Changed("max-points") && opt.MaxPoints <= 0, fl.Changed("min-points") && opt.MinPoints <= 0:
					return usageErrorf("fit: --max-points %d and --min-points %d must be positive", opt.MaxPoints, opt.MinPoints)
				case fl.Changed("min-spacing") && opt.MinSpacing <= 0:
					return usageErrorf("fit: --min-spacing %v must be positive", opt.MinSpacing)
				case fl.Changed("max-windows") && opt.MaxWindows == 0:
					return usageErrorf("fit: --max-windows 0: give a positive number, or -1 for no bound")
				case fl.Changed("kernel") && fl.Changed("kernels"):
					return usageErrorf("fit: give --kernel (one kernel, the paper's way) or --kernels (compared), not both")
				}
				if plt != "" {
					switch strings.ToLower(filepath.Ext(plt)) {
					case ".svg", ".png", ".pdf":
					default:
						return usageErrorf("fit: --plot %s: use a .svg, .png or .pdf file", plt)
					}
				}
				idxPath := prior.CorpusIndexPath(out)
				if err := checkOutputs(ins, force, map[string]string{"--out": out, "--plot": plt, "--out's corpus index": idxPath}); err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				files, ignored, err := trace.Files(ins...)
				if err != nil {
					return fmt.Errorf("fit: --in: %w", err)
				}
				res := fitOutput{Corpus: ins, Files: len(files), Ignored: ignored, Out: out, Plot: plt}
				var traces []*trace.Trace
				// A Ticker, not a bar alone: off a terminal (a log, a
				// pipe) it still prints a line every 10 s, so that a
				// corpus fit of minutes is never silent. Like attack's,
				// it is silent with --json (and --quiet).
				penv := *env
				penv.Quiet = env.Quiet || env.JSON
				read := penv.Ticker(len(files), "fit: reading")
				nread := 0
				// The directories as given, so that the one person rule
				// (trace.PersonRule) sees each input, a corpus with --corpus.
				irep, err := rf.readEach(ins, func(_ string, ts []*trace.Trace) {
					traces = append(traces, ts...)
					nread++
					read.Set(min(nread, len(files)), "files")
				})
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				reportSkipped(env, irep)
				// The prior records its persons, and sanitize refuses a
				// person it was fitted on: say when folders were merged.
				hintCorpus(env, &rf, ins...)
				res.Deduplicated, res.SkippedRecords, res.InputSummary = irep.Deduplicated, irep.Skipped, irep.Summary()

				// Zero options mean the library's defaults for the mode; a
				// flag the user gives is theirs (--min-duration 0: none).
				if fl.Changed("min-duration") {
					opt.MinDuration = max(minD, time.Nanosecond)
				}
				if fl.Changed("max-duration") {
					opt.MaxDuration = maxD
				}
				// The prior is published: it names its corpus without the
				// machine's absolute paths (infile.PublicName).
				names := make([]string, len(ins))
				for i, in := range ins {
					names[i] = infile.PublicName(in)
				}
				opt.Corpus = strings.Join(names, ", ")
				if fl.Changed("family") {
					opt.Family = [2]float64{family[0], family[1]}
				}
				// The number of windows is known once Fit has cut them.
				var tick *cli.Ticker
				opt.Progress = func(done, total int) {
					if tick == nil {
						tick = penv.Ticker(total, "fit: fitting windows")
					}
					tick.Set(done, "windows")
				}
				p, rep, err := prior.Fit(traces, opt)
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				summary := *rep
				summary.Fits = nil
				res.Report, res.PaperLEffQuartiles, res.Prior = &summary, paperLEff, p

				// The prior, its private corpus index and its plot land
				// together or not at all.
				group := []atomicfile.File{{Path: out, Perm: 0o644, Fill: p.Write}}
				if x := rep.CorpusIndex; x != nil {
					group = append(group, atomicfile.File{Path: idxPath, Perm: 0o600, Fill: x.Write})
					res.CorpusIndex, res.CorpusIndexFixes, res.CorpusIndexPersons = idxPath, x.Fixes, len(x.Persons)
				}
				if plt != "" {
					draw := func(tmp string) error { return plotLEff(tmp, rep, p) }
					if rep.Comparison != nil {
						draw = func(tmp string) error { return plotLengthscales(tmp, rep, p) }
					}
					img, err := renderToBytes(plt, draw)
					if err != nil {
						return fmt.Errorf("fit: --plot %s: %w; nothing written", plt, err)
					}
					group = append(group, atomicfile.File{Path: plt, Perm: 0o644, Fill: func(w io.Writer) error {
						_, err := w.Write(img)
						return err
					}})
				}
				if err := atomicfile.WriteGroup(group); err != nil {
					return fmt.Errorf("fit: nothing written: %w", err)
				}
				res.ElapsedS = time.Since(start).Seconds()
				return env.Emit(res, func(w io.Writer) error { return fitText(w, res) })
			},
		}
		f := cmd.Flags()
		f.StringArrayVar(&ins, "in", nil, "corpus: a trace file or a directory (searched recursively); repeatable")
		f.StringVarP(&out, "out", "o", "", "prior file to write (JSON)")
		f.StringVar(&plt, "plot", "", "histogram of l_eff to draw: .svg, .png or .pdf")
		f.BoolVar(&force, "force", false, "replace --out and --plot if they exist")
		f.StringVar(&opt.Kernel, "kernel", "", "fit this one kernel the paper's way (rbf, matern32, matern52; 240-320 s windows, lengthscale <= 40 s) instead of comparing kernels")
		f.StringSliceVar(&opt.Kernels, "kernels", slices.Clone(prior.CompareKernels), "kernels compared by held-out likelihood; sums of a short and a long kernel on request: matern32+matern32, matern12+matern32 (docs/fit.md)")
		f.Float64SliceVar(&family, "family", nil, "quantiles LO,HI of the per-window lengthscales that bound the prior family (1 - HI for the variance); default 0.05,0.95 (0.25,0.75 with --kernel)")
		f.DurationVar(&minD, "min-duration", 0, "shortest window (default 20m, 4m with --kernel)")
		f.DurationVar(&maxD, "max-duration", 0, "longest window (default 2h, 5m20s with --kernel)")
		f.IntVar(&opt.MaxPoints, "max-points", 0, "most points fitted per window, denser windows are thinned (default 200, 50 with --kernel)")
		f.IntVar(&opt.MinPoints, "min-points", 0, "fewest points fitted per window (default 20, 10 with --kernel)")
		f.DurationVar(&opt.MinSpacing, "min-spacing", 0, "least time between fitted fixes when comparing kernels (default 10s)")
		f.IntVar(&opt.MaxWindows, "max-windows", 0, "most windows fitted when comparing kernels, a larger corpus is subsampled evenly (default 240; -1 for all)")
		f.IntVar(&opt.Workers, "workers", 0, "windows fitted in parallel (default: all cores)")
		f.BoolVar(&opt.PaperWindows, "paper-windows", false, "cut as the authors' code: only the first window of each trace (for reproducing the paper)")
		rf.add(cmd)
		rf.addCorpus(cmd.Flags(), "the persons label the fitted windows (give each person's folder as an --in, or the corpus with --corpus)")
		return cmd
	})
}

func fitText(w io.Writer, r fitOutput) error {
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
		fmt.Fprintf(w, "  paper, GeoLife:            x %s, y %s\n", q(r.PaperLEffQuartiles["x"]), q(r.PaperLEffQuartiles["y"]))
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
		pq, c := paperLEff[axis], viz.Color(4*i)
		opt.Markers = append(opt.Markers, viz.Marker{X: pq[1], Color: c, Dashed: true, Label: fmt.Sprintf("paper GeoLife %s: median %.2f", axis, pq[1])})
		opt.Bands = append(opt.Bands, viz.Band{Lo: pq[0], Hi: pq[2], Color: c, Label: fmt.Sprintf("paper GeoLife %s: IQR %.2f-%.2f", axis, pq[0], pq[2])})
	}
	h, err := viz.Histogram(leff, opt)
	if err != nil {
		return err
	}
	return viz.Save(h, path, 20*viz.Centimetre, 13*viz.Centimetre)
}
