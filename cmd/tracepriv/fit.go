package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/cli"
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
	Prior              *gp.Prior             `json:"prior"`
	Out                string                `json:"out"`
	Plot               string                `json:"plot,omitempty"`
	ElapsedS           float64               `json:"elapsed_s"`
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
			Long: `Fit a GP prior (PRIOR.json, read by sanitize) on a corpus of traces, as
Meehan and Chaudhuri fit theirs on GeoLife. CORPUS is a trace file or a
directory searched recursively for .plt, .csv, .geojson, .json and .gpx
files (other files are listed as ignored); --in may be repeated. Use a
corpus separate from the traces the prior will protect.

Dirty rows are repaired or skipped as docs/input.md says, and a file that
cannot be read at all is skipped, so that one bad file does not stop a run
over a corpus; both are reported on stderr and in --json (skipped_rows,
skipped_files). --strict stops at the first instead.

Each trace is cut into consecutive windows of 240-320 s with at most 50
points (thinned to points at least 240/49 s apart when denser); each window's east and north
coordinates, in metres around its first point, are de-meaned, scaled to
unit variance and fitted by maximum likelihood (lengthscale in [1, 40] s,
nugget 0.0025). l_eff is the fitted lengthscale over the window's median
sampling period.

The prior is a family: every lengthscale between the --family quantiles
(default 0.25,0.75: the interquartile range) of the pooled per-window fitted
lengthscales in seconds. sanitize certifies its releases against every member
(one fitted lengthscale describes the typical adversary, not all of them);
widen the family to cover more adversaries, at the price of more noise. The
variance is the 1 - hi quantile of the per-window variances (a smaller
variance is the stronger adversary). The file also records a public origin
for sanitize's tangent plane: the median position of the corpus.

Rejected windows are counted by reason. --plot draws the l_eff histogram
with the family's band and the paper's GeoLife interquartile ranges. The
prior and the plot are written together or not at all, never over a corpus
file, and over existing files only with --force.

--paper-windows cuts as the authors' preprocess_geolife.py instead: only
the first 320 s of each trace, thinned by their index rule. On the GeoLife
excerpt the default finds less dependence than the paper (lower quartile of
l_eff about 1.7 against 2.6), because it keeps the slow, densely logged
windows that the authors' rule drops; see "go doc tracepriv/prior".`,
			Example: `  tracepriv fit --in internal/sample/geolife-000-20081024020959.plt --out prior.json --plot leff.svg
  tracepriv fit --in demo-output/sample.csv --kernel matern52 --family 0.1,0.9 --out prior52.json --json
  # on a corpus of other people's traces, e.g. GeoLife users: tracepriv fit --in CORPUS_DIR --out prior.json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				start := time.Now()
				if len(ins) == 0 || out == "" {
					return errors.New("fit: --in and --out are required")
				}
				switch {
				case len(family) != 2 || !(family[0] > 0 && family[0] <= family[1] && family[1] < 1):
					return fmt.Errorf("fit: --family %v: give two quantiles LO,HI with 0 < LO <= HI < 1, e.g. 0.25,0.75", family)
				case maxD <= 0:
					return fmt.Errorf("fit: --max-duration %v must be positive", maxD)
				case opt.MaxPoints <= 0 || opt.MinPoints <= 0:
					return fmt.Errorf("fit: --max-points %d and --min-points %d must be positive", opt.MaxPoints, opt.MinPoints)
				}
				if plt != "" {
					switch strings.ToLower(filepath.Ext(plt)) {
					case ".svg", ".png", ".pdf":
					default:
						return fmt.Errorf("fit: --plot %s: use a .svg, .png or .pdf file", plt)
					}
				}
				if err := checkOutputs(ins, force, map[string]string{"--out": out, "--plot": plt}); err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				files, ignored, err := trace.Files(ins...)
				if err != nil {
					return fmt.Errorf("fit: --in: %w", err)
				}
				res := fitOutput{Corpus: ins, Files: len(files), Ignored: ignored, Out: out, Plot: plt}
				var traces []*trace.Trace
				bar := env.Progress(len(files), "reading")
				irep, err := rf.readEach(files, func(_ string, ts []*trace.Trace) {
					traces = append(traces, ts...)
					bar.Add(1)
				})
				bar.Finish()
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				reportSkipped(env, irep)
				res.Deduplicated, res.SkippedRecords, res.InputSummary = irep.Deduplicated, irep.Skipped, irep.Summary()

				// Zero options mean the defaults in the library; on the
				// command line they are the user's values.
				opt.MinDuration, opt.MaxDuration = minD, maxD
				if minD == 0 {
					opt.MinDuration = time.Nanosecond // no minimum
				}
				opt.Corpus = strings.Join(ins, ", ")
				opt.Family = [2]float64{family[0], family[1]}
				// The number of windows is known once Fit has cut them.
				bar = nil
				opt.Progress = func(done, total int) {
					if bar == nil {
						bar = env.Progress(total, "fitting windows")
					}
					bar.Set(done)
				}
				p, rep, err := prior.Fit(traces, opt)
				if bar != nil {
					bar.Finish()
				}
				if err != nil {
					return fmt.Errorf("fit: %w", err)
				}
				summary := *rep
				summary.Fits = nil
				res.Report, res.PaperLEffQuartiles, res.Prior = &summary, paperLEff, p

				// The prior and its plot land together or not at all.
				group := []atomicfile.File{{Path: out, Perm: 0o644, Fill: p.Write}}
				if plt != "" {
					img, err := renderToBytes(plt, func(tmp string) error { return plotLEff(tmp, rep, p) })
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
		f.StringVar(&opt.Kernel, "kernel", prior.DefaultKernel, "kernel: rbf, matern32 or matern52")
		f.Float64SliceVar(&family, "family", []float64{prior.DefaultFamilyLow, prior.DefaultFamilyHigh}, "quantiles LO,HI of the per-window lengthscales that bound the prior family (1 - HI for the variance)")
		f.DurationVar(&minD, "min-duration", prior.DefaultMinDuration, "shortest window")
		f.DurationVar(&maxD, "max-duration", prior.DefaultMaxDuration, "longest window")
		f.IntVar(&opt.MaxPoints, "max-points", prior.DefaultMaxPoints, "most points fitted per window (denser windows are thinned)")
		f.IntVar(&opt.MinPoints, "min-points", prior.DefaultMinPoints, "fewest points fitted per window")
		f.IntVar(&opt.Workers, "workers", 0, "windows fitted in parallel (default: all cores)")
		f.BoolVar(&opt.PaperWindows, "paper-windows", false, "cut as the authors' code: only the first window of each trace (for reproducing the paper)")
		rf.add(cmd)
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
	fmt.Fprintf(w, "l_eff quartiles (samples): %s  (east %s, north %s)\n", q(r.LEffQuartiles), q(r.LEffQuartilesEast), q(r.LEffQuartilesNorth))
	fmt.Fprintf(w, "  paper, GeoLife:            x %s, y %s\n", q(r.PaperLEffQuartiles["x"]), q(r.PaperLEffQuartiles["y"]))
	fmt.Fprintf(w, "lengthscale on a fit bound: %d at the lower, %d at the upper (of %d coordinate fits)\n", r.AtLowerBound, r.AtUpperBound, 2*r.Windows)
	fmt.Fprintf(w, "sampling period quartiles: %s s; variance quartiles: %.4g / %.4g / %.4g m^2\n", q(r.PeriodQuartiles), r.VarianceQuartiles[0], r.VarianceQuartiles[1], r.VarianceQuartiles[2])
	p := r.Prior
	fq := *p.Fit.FamilyQuantiles
	fmt.Fprintf(w, "lengthscale quartiles: %s s\n", q(r.LengthscaleQuartiles))
	fmt.Fprintf(w, "prior family: %s, lengthscale %.2f-%.2f s (quantiles %g-%g; nominal %.2f s), variance >= %.4g m^2 (quantile %g), std %.1f m\n",
		p.Kernel, p.LengthscaleMin, p.LengthscaleMax, fq[0], fq[1], p.Lengthscale, p.Variance, 1-fq[1], math.Sqrt(p.Variance))
	if p.Origin != nil {
		fmt.Fprintf(w, "public origin: %.4f, %.4f (%s)\n", p.Origin.Lat, p.Origin.Lon, p.Origin.Note)
	}
	if r.Censored {
		fmt.Fprintf(w, "warning: %d of %d fits ended on the upper lengthscale bound, more than 1 - %g: the family's upper end is that bound, a lower limit on the dependence\n", r.AtUpperBound, 2*r.Windows, fq[1])
	}
	fmt.Fprintf(w, "wrote %s", r.Out)
	if r.Plot != "" {
		fmt.Fprintf(w, " and %s", r.Plot)
	}
	fmt.Fprintf(w, " in %.1f s (%d workers)\n", r.ElapsedS, r.Workers)
	return nil
}

// plotLEff draws the histogram of the pooled l_eff with the chosen quantile
// and the paper's GeoLife interquartile ranges and medians.
func plotLEff(path string, rep *prior.Report, p *gp.Prior) error {
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
	return viz.Save(h, path, 20*vg.Centimeter, 13*vg.Centimeter)
}
