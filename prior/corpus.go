package prior

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/stats"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// Defaults of PaperOptions, those of Meehan and Chaudhuri's preprocess_geolife.py
// (downsample_data(min_time=240, max_time=320, max_samps=50)) where they
// have one.
const (
	DefaultMinDuration = 240 * time.Second
	DefaultMaxDuration = 320 * time.Second
	DefaultMaxPoints   = 50
	// DefaultMinPoints has no counterpart in the authors' code: a
	// lengthscale is not identified by a handful of points.
	DefaultMinPoints = 10
	// DefaultFamilyLow and DefaultFamilyHigh are the quantiles of the
	// per-window fitted lengthscales that bound the prior family: the
	// interquartile range (see the package documentation).
	DefaultFamilyLow  = 0.25
	DefaultFamilyHigh = 0.75
	// DefaultInitLengthscale is where each fit starts, in seconds, as the
	// authors' RBF(length_scale=8).
	DefaultInitLengthscale = 8.0
	// DefaultKernel is the paper's kernel.
	DefaultKernel = "rbf"
)

// Reasons a candidate window is rejected: the keys of Report.Skipped and
// FitRecord.Skipped.
const (
	// SkipTooShort: no thinning of the window spans MinDuration (a gap or
	// the end of the trace comes first).
	SkipTooShort = "too_short"
	// SkipTooFewPoints: the window spans MinDuration but with fewer than
	// MinPoints points.
	SkipTooFewPoints = "too_few_points"
	// SkipNotIncreasing: some timestamp in the window is not after the one
	// before it.
	SkipNotIncreasing = "non_increasing_times"
	// SkipInvalidPoint: some point has a non-finite or out-of-range
	// latitude or longitude.
	SkipInvalidPoint = "invalid_coordinates"
	// SkipConstant: a coordinate varies by less than a millimetre (a
	// device reporting one fixed position); standardising it would fit
	// rounding noise. The authors drop zero-variance traces likewise.
	SkipConstant = "constant_coordinate"
	// SkipFitFailed: the likelihood optimisation failed (listed in
	// Report.FitErrors).
	SkipFitFailed = "fit_failed"
	// SkipAfterFirst: with PaperOptions.PaperWindows, the rest of a trace after
	// its first window, counted as one candidate per trace.
	SkipAfterFirst = "after_first_window"
)

// minVariance is the per-coordinate variance (m^2) below which a window is
// SkipConstant: (1 mm)^2, far below GPS resolution.
const minVariance = 1e-6

// maxFitErrors bounds Report.FitErrors; Report.Skipped still counts all.
const maxFitErrors = 100

// Options configures Fit, the kernel comparison: the kernels of Kernels
// are compared by held-out likelihood on long windows (CompareMinDuration
// to CompareMaxDuration, fixes at least MinSpacing apart), each fitted
// with its variance, lengthscale and a GPS nugget free and no cap on the
// lengthscale, and the family lists every kernel the data prefers (see
// the package documentation, "Comparing kernels"). Zero fields take the
// comparison's defaults (Compare*). The paper's single-kernel fit has its
// own options, PaperOptions, and entry point, FitPaper: no field of
// Options switches to it.
type Options struct {
	// Kernels are the kernels compared (default CompareKernels).
	Kernels []string
	// MinDuration and MaxDuration bound the duration of a window (first to
	// last fitted point); defaults 20 min and 2 h (set 1ns for no minimum).
	MinDuration, MaxDuration time.Duration
	// MaxPoints is the most points fitted per window (default 200): longer
	// windows are thinned. MinPoints is the fewest (default 20).
	MaxPoints, MinPoints int
	// MinSpacing is the least time between fitted fixes (default 10 s):
	// denser fixes are thinned, so that GPS errors, which are correlated
	// over a few seconds, do not pass for dependence.
	MinSpacing time.Duration
	// MaxWindows bounds the windows fitted (default 240; negative for no
	// bound): a corpus with more is subsampled deterministically (evenly
	// in corpus order), and the others are counted as SkipSubsampled.
	MaxWindows int
	// BoundFactor sets the upper lengthscale bound of each window to
	// BoundFactor times its duration (default 100): far above what a
	// window can show, so the bound is not a cap.
	BoundFactor float64
	// MinWinShare is the share of windows a kernel must win by held-out
	// likelihood to enter the family (default 0.05).
	MinWinShare float64
	// Family holds the quantiles (lo, hi) of the per-window fitted
	// lengthscales that bound the prior family; the variance is the 1 - hi
	// quantile of the per-window variances. Default (0.05, 0.95); widen it
	// to cover more adversaries at the price of more noise.
	Family [2]float64
	// Workers is the number of windows fitted in parallel; 0 means
	// runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
	// Progress, if not nil, is called after each window is fitted with the
	// number done and the total, always from the goroutine that called Fit.
	Progress func(done, total int)
	// Corpus names the input for FitRecord.Corpus.
	Corpus string
}

// config is the comparison's.
func (o Options) config() config {
	return config{Kernels: o.Kernels, MinDuration: o.MinDuration, MaxDuration: o.MaxDuration,
		MaxPoints: o.MaxPoints, MinPoints: o.MinPoints, MinSpacing: o.MinSpacing, MaxWindows: o.MaxWindows,
		BoundFactor: o.BoundFactor, MinWinShare: o.MinWinShare, Family: o.Family,
		Workers: o.Workers, Progress: o.Progress, Corpus: o.Corpus}
}

// Check reports whether Fit would accept o.
func (o Options) Check() error { return o.config().Check() }

// Mode is the options of one fitting mode, Options (the kernel comparison)
// or PaperOptions (the paper's single kernel), for the parts of a fit that
// a distributed fit runs apart (Windows, FitWindow, CombineCorpus, …): the
// mode is the options' type, never a field's value.
type Mode interface {
	// Check reports whether the mode's fit would accept the options.
	Check() error
	config() config
}

// config is the one configuration both modes resolve to: the fields of
// Options and PaperOptions, Kernel set (or PaperWindows) in the paper's
// mode and empty in the comparison. Zero fields take the defaults of the
// mode.
type config struct {
	// Kernel, if set, fits that one kernel the paper's way: "rbf",
	// "matern32" or "matern52" (any gp.NewKernel name but "periodic").
	Kernel string
	// Kernels are the kernels compared when Kernel is empty (default
	// CompareKernels).
	Kernels []string
	// MinDuration and MaxDuration bound the duration of a window (first to
	// last fitted point); defaults 240 s and 320 s for one kernel, 20 min
	// and 2 h for the comparison (set 1ns for no minimum).
	MinDuration, MaxDuration time.Duration
	// MaxPoints is the most points fitted per window (default 50 for one
	// kernel, 200 for the comparison): longer windows are thinned.
	// MinPoints is the fewest (default 10, or 20).
	MaxPoints, MinPoints int
	// MinSpacing is the least time between fitted fixes in the comparison
	// (default 10 s): denser fixes are thinned, so that GPS errors, which
	// are correlated over a few seconds, do not pass for dependence.
	MinSpacing time.Duration
	// MaxWindows, in the comparison, bounds the windows fitted (default
	// 240; negative for no bound): a corpus with more is subsampled
	// deterministically (evenly in corpus order), and the others are
	// counted as SkipSubsampled.
	MaxWindows int
	// BoundFactor sets the comparison's upper lengthscale bound of each
	// window to BoundFactor times its duration (default 100): far above
	// what a window can show, so the bound is not a cap.
	BoundFactor float64
	// MinWinShare is the share of windows a kernel must win by held-out
	// likelihood to enter the family (default 0.05).
	MinWinShare float64
	// PaperWindows cuts as the authors' downsample_data instead of into
	// consecutive windows: only the first window of each trace, thinned
	// by their index rule (see the package documentation). For
	// reproducing the paper's fits; implies Kernel "rbf" if unset.
	PaperWindows bool
	// Family holds the quantiles (lo, hi) of the per-window fitted
	// lengthscales that bound the prior family; the variance is the 1 - hi
	// quantile of the per-window variances. Default (0.05, 0.95) for the
	// comparison, (0.25, 0.75) for one kernel; widen it to cover more
	// adversaries at the price of more noise.
	Family [2]float64
	// InitLengthscale is the starting lengthscale of every single-kernel
	// fit in seconds (default 8, as the authors).
	InitLengthscale float64
	// FitOptions overrides gp.PaperFitOptions (variance normalised to 1,
	// lengthscale in [1, 40] s, nugget 0.0025) for one kernel. The fitted
	// lengthscale is read from the kernel's "lengthscale" hyperparameter.
	FitOptions *gp.FitOptions
	// Workers is the number of windows fitted in parallel; 0 means
	// runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
	// Progress, if not nil, is called after each window is fitted with the
	// number done and the total, always from the goroutine that called Fit.
	Progress func(done, total int)
	// Corpus names the input for FitRecord.Corpus: inputs comma-separated,
	// each path of the machine in it published relative to the working
	// directory or by its base name, never absolute.
	Corpus string
}

// Compare reports whether o compares kernels (Kernel empty and not
// PaperWindows) rather than fitting one the paper's way.
func (o config) compare() bool { return o.Kernel == "" && !o.PaperWindows }

// config makes a resolved configuration a Mode of its own, for the
// package's internal calls.
func (o config) config() config { return o }

func (o config) withDefaults() (config, error) {
	cmp := o.compare()
	if o.Kernel == "" && !cmp {
		o.Kernel = DefaultKernel
	}
	if cmp {
		if len(o.Kernels) == 0 {
			o.Kernels = slices.Clone(CompareKernels)
		}
		if o.MinDuration == 0 {
			o.MinDuration = CompareMinDuration
		}
		if o.MaxDuration == 0 {
			o.MaxDuration = CompareMaxDuration
		}
		if o.MaxPoints == 0 {
			o.MaxPoints = CompareMaxPoints
		}
		if o.MinPoints == 0 {
			o.MinPoints = CompareMinPoints
		}
		if o.MinSpacing == 0 {
			o.MinSpacing = CompareMinSpacing
		}
		if o.MaxWindows == 0 {
			o.MaxWindows = CompareMaxWindows
		}
		if o.BoundFactor == 0 {
			o.BoundFactor = CompareBoundFactor
		}
		if o.MinWinShare == 0 {
			o.MinWinShare = CompareMinWinShare
		}
		if o.Family == [2]float64{} {
			o.Family = [2]float64{CompareFamilyLow, CompareFamilyHigh}
		}
	}
	if o.MinDuration == 0 {
		o.MinDuration = DefaultMinDuration
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	if o.MinPoints == 0 {
		o.MinPoints = DefaultMinPoints
	}
	if o.Family == [2]float64{} {
		o.Family = [2]float64{DefaultFamilyLow, DefaultFamilyHigh}
	}
	if o.InitLengthscale == 0 {
		o.InitLengthscale = DefaultInitLengthscale
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case o.MinDuration < 0 || o.MaxDuration < o.MinDuration:
		return o, param.Invalid("min-duration", fmt.Sprintf("%v (max-duration = %v)", o.MinDuration, o.MaxDuration), "must be non-negative and at most the maximum duration")
	case o.MaxDuration <= 0:
		return o, param.Invalid("max-duration", o.MaxDuration, "must be positive")
	case o.MinPoints < 3:
		// Two points have one gap: no dependence to fit.
		return o, param.AtLeastInt("min-points", o.MinPoints, 3)
	case o.MaxPoints < o.MinPoints:
		return o, param.Invalid("max-points", o.MaxPoints, fmt.Sprintf("must be at least min-points (%d)", o.MinPoints))
	case !(o.Family[0] > 0 && o.Family[0] <= o.Family[1] && o.Family[1] < 1):
		return o, param.Invalid("family", o.Family, "must be quantiles 0 < lo <= hi < 1")
	case !(o.InitLengthscale > 0) || math.IsInf(o.InitLengthscale, 0):
		return o, param.Positive("init-lengthscale", o.InitLengthscale)
	case o.Workers < 0:
		return o, param.AtLeastInt("workers", o.Workers, 0)
	case cmp && o.MinPoints < 6:
		// The held-out split needs a few points on each side.
		return o, param.Invalid("min-points", o.MinPoints, "must be at least 6 to compare kernels")
	case cmp && o.MinSpacing < 0:
		return o, param.Invalid("min-spacing", o.MinSpacing, "must be non-negative")
	case cmp && (!(o.BoundFactor >= 2) || math.IsInf(o.BoundFactor, 0)):
		return o, param.AtLeast("bound-factor", o.BoundFactor, 2)
	case cmp && !(o.MinWinShare > 0 && o.MinWinShare <= 1):
		return o, param.InLeftOpen("min-win-share", o.MinWinShare, 0, 1)
	}
	if cmp {
		seen := map[string]bool{}
		for _, k := range o.Kernels {
			if err := checkCompareKernel(k); err != nil {
				return o, err
			}
			if seen[k] {
				return o, param.Invalid("kernels", o.Kernels, fmt.Sprintf("lists %q twice", k))
			}
			seen[k] = true
		}
	}
	return o, nil
}

// kernel returns the starting kernel of every fit.
func (o config) kernel() (gp.Kernel, error) {
	if o.Kernel == gp.KernelPeriodic {
		return nil, param.Invalid("kernel", o.Kernel, "periodic is not fitted from location traces (it needs a period); write the prior by hand")
	}
	k, err := gp.NewKernel(o.Kernel, 1, o.InitLengthscale, 0)
	if err != nil {
		return nil, param.Invalid("kernel", o.Kernel, fmt.Sprintf("%q is not one of %v", o.Kernel, gp.KernelNames))
	}
	return k, nil
}

// Window is one candidate window of a trace that passed the checks that
// need no fit: the points fitted, projected and de-meaned.
type Window struct {
	// Trace is the index of the trace in Fit's input, and Index the
	// indices in it of the fitted points, increasing.
	Trace int
	Index []int
	// T holds the fitted times in seconds from the window's first point.
	T []float64
	// East and North are the fitted positions in metres in the ENU plane
	// at the window's first point, each de-meaned.
	East, North []float64
}

// WindowFit is the outcome of one window's fit. Arrays hold the east then
// the north coordinate.
type WindowFit struct {
	Trace int    `json:"trace"`
	UID   string `json:"uid,omitempty"`
	Name  string `json:"name,omitempty"`
	// First and Last are the indices in the trace of the first and last
	// fitted points; Points were fitted and Thinned points between them
	// were not.
	First   int `json:"first"`
	Last    int `json:"last"`
	Points  int `json:"points"`
	Thinned int `json:"thinned"`
	// Start is the time of the first fitted point.
	Start     time.Time `json:"start"`
	DurationS float64   `json:"duration_s"`
	// PeriodS is the window's median sampling period in seconds
	// (gp.MedianPeriod, the authors' choice).
	PeriodS float64 `json:"period_s"`
	// VarianceM2 is the population variance of each de-meaned coordinate
	// in square metres, before normalisation.
	VarianceM2 [2]float64 `json:"variance_m2"`
	// LengthscaleS is the fitted lengthscale in seconds, and LEff that
	// over PeriodS: the lengthscale in samples.
	LengthscaleS [2]float64 `json:"lengthscale_s"`
	LEff         [2]float64 `json:"l_eff"`
	// Jitter is the largest diagonal jitter the factorisations needed at
	// the optimum beyond the nugget.
	Jitter float64 `json:"jitter"`
	// Kernels holds, when kernels are compared, each kernel's fit, in the
	// order of Options.Kernels; Best is the one with the highest held-out
	// likelihood. LengthscaleS and LEff are then the nominal kernel's.
	Kernels []KernelFit `json:"kernels,omitempty"`
	Best    string      `json:"best,omitempty"`
}

// Report describes a fit: every candidate window and point is accounted
// for, fitted or skipped by reason.
type Report struct {
	// CorpusIndex is the corpus's private index, bound to the prior (its
	// Prior is the prior's digest; the prior says it has one,
	// FitRecord.CorpusIndexed): write it beside the prior
	// (CorpusIndexPath), never with it. Nil when none was recorded.
	CorpusIndex *trace.CorpusIndex `json:"-"`

	Traces int `json:"traces"`
	Points int `json:"points"`
	// Candidates is the number of windows cut; Windows of them were fitted
	// and the others are counted in Skipped by reason (the Skip* keys).
	Candidates int            `json:"candidates"`
	Windows    int            `json:"windows"`
	Skipped    map[string]int `json:"skipped"`
	// PointsFitted + PointsThinned + PointsSkipped = Points: points fitted,
	// points between the fitted ones of a thinned window, and points of
	// skipped windows.
	PointsFitted  int `json:"points_fitted"`
	PointsThinned int `json:"points_thinned"`
	PointsSkipped int `json:"points_skipped"`
	// Fits are the fitted windows in input order.
	Fits []WindowFit `json:"fits,omitempty"`
	// FitErrors describe the first failed fits (SkipFitFailed).
	FitErrors []string `json:"fit_errors,omitempty"`
	// LEffQuartiles are the 25th, 50th and 75th percentiles of the pooled
	// east and north l_eff (as the paper pools them), LEffQuartilesEast
	// and LEffQuartilesNorth those of each coordinate.
	LEffQuartiles      [3]float64 `json:"l_eff_quartiles"`
	LEffQuartilesEast  [3]float64 `json:"l_eff_quartiles_east"`
	LEffQuartilesNorth [3]float64 `json:"l_eff_quartiles_north"`
	// VarianceQuartiles are those of the pooled per-window variances (m^2).
	VarianceQuartiles [3]float64 `json:"variance_m2_quartiles"`
	// LengthscaleQuartiles are those of the pooled per-window fitted
	// lengthscales in seconds: the family's default bounds are the first
	// and last.
	LengthscaleQuartiles [3]float64 `json:"lengthscale_s_quartiles"`
	// PeriodQuartiles are those of the windows' sampling periods (s).
	PeriodQuartiles [3]float64 `json:"period_s_quartiles"`
	// AtLowerBound and AtUpperBound count the coordinate fits whose
	// lengthscale ended on a bound of the fit (the paper's upper quartile
	// of 8.0 is the 40 s bound at a 5 s period).
	AtLowerBound int `json:"at_lower_bound"`
	AtUpperBound int `json:"at_upper_bound"`
	// Censored is set when more than 1-q of the coordinate fits ended on
	// the upper bound: the chosen l_eff is then that bound (over some
	// period), a lower limit on the corpus's dependence rather than a
	// measurement of it. Matern kernels, whose lengthscales run longer than
	// the RBF's for the same correlation, often are under the paper's 40 s.
	Censored bool `json:"censored"`
	// MaxJitter is the largest Jitter of any fit.
	MaxJitter float64 `json:"max_jitter"`
	// Workers is how many windows were fitted in parallel.
	Workers int `json:"workers"`
	// Comparison is the kernel comparison (nil when one kernel is fitted
	// the paper's way).
	Comparison *Comparison `json:"comparison,omitempty"`
	// HeldOutCoverage is the family's coverage of held-out windows,
	// leaving one person out (LeaveOnePersonOut), when the corpus has
	// two persons or more; the prior records its share.
	HeldOutCoverage *Coverage `json:"held_out_coverage,omitempty"`
	// Warnings say what the fit could not do with the corpus: a corpus
	// spanning several regions (no origin recorded), most windows skipped.
	Warnings []string `json:"warnings,omitempty"`
}

// LEff returns the pooled per-window l_eff: every window's east value, then
// every window's north value, in input order.
func (r *Report) LEff() []float64 {
	out := make([]float64, 0, 2*len(r.Fits))
	for d := range 2 {
		for _, f := range r.Fits {
			out = append(out, f.LEff[d])
		}
	}
	return out
}

// LEffQuantile returns the q quantile of the pooled l_eff (LEff), by the
// same interpolation as the report's quartiles: at the family's quantiles
// it is the range of l_eff the prior family covers, comparable with the
// paper's. It is NaN when no window was fitted.
func (r *Report) LEffQuantile(q float64) float64 {
	return quantile(r.LEff(), q)
}

// Windows cuts traces into candidate windows as Fit does and returns those
// that pass every check but the fit itself, with the report's counts
// filled in so far (Candidates, Skipped, points). See the package
// documentation for the rules.
func Windows(traces []*trace.Trace, m Mode) ([]Window, *Report, error) {
	opt := m.config()
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Traces: len(traces), Skipped: map[string]int{}}
	var ws []Window
	for ti, t := range traces {
		if t == nil {
			return nil, nil, param.Invalid(fmt.Sprintf("traces[%d]", ti), nil, "is nil")
		}
		rep.Points += len(t.Points)
		ws = cut(ws, ti, t.Points, opt, rep)
	}
	return ws, rep, nil
}

// skip records a rejected candidate of n points.
func (r *Report) skip(reason string, n int) {
	r.Skipped[reason]++
	r.PointsSkipped += n
}

// cut appends the windows of one trace to ws. Windows are consecutive and
// disjoint: each starts at the first point after the previous one.
func cut(ws []Window, ti int, pts []trace.Point, opt config, rep *Report) []Window {
	for i := 0; i < len(pts); {
		// The span: every point within MaxDuration of point i, in order.
		j := i + 1
		for j < len(pts) && pts[j].Time.Sub(pts[i].Time) <= opt.MaxDuration {
			j++
		}
		rep.Candidates++
		reason := check(pts[i:j])
		var keep []int
		if reason == "" {
			if opt.PaperWindows {
				keep, reason = thinPaper(pts[i:j], opt)
			} else if opt.compare() {
				keep, reason = thinSpaced(pts[i:j], opt)
			} else {
				keep, reason = thin(pts[i:j], opt)
			}
		}
		if reason != "" {
			rep.skip(reason, j-i)
			i = j
		} else {
			ws = append(ws, newWindow(ti, pts, i, keep))
			last := i + keep[len(keep)-1]
			// Points before the first kept one (paper mode) or between kept
			// ones were thinned out.
			rep.PointsThinned += (last - i + 1) - len(keep)
			i = last + 1
		}
		if opt.PaperWindows && i < len(pts) {
			// The rest of the trace counts as one skipped candidate.
			rep.Candidates++
			rep.skip(SkipAfterFirst, len(pts)-i)
			break
		}
	}
	return ws
}

// check returns why a span cannot be fitted, or "".
func check(span []trace.Point) string {
	for k, p := range span {
		if k > 0 && !p.Time.After(span[k-1].Time) {
			return SkipNotIncreasing
		}
		if p.Geo().Validate() != nil {
			return SkipInvalidPoint
		}
	}
	return ""
}

// newWindow projects and de-means the points pts[i+k] for k in keep.
func newWindow(ti int, pts []trace.Point, i int, keep []int) Window {
	w := Window{Trace: ti}
	first := pts[i+keep[0]]
	enu := geo.NewENU(first.Geo())
	for _, k := range keep {
		e, n := enu.Forward(pts[i+k].Geo())
		w.Index = append(w.Index, i+k)
		w.T = append(w.T, pts[i+k].Time.Sub(first.Time).Seconds())
		w.East = append(w.East, e)
		w.North = append(w.North, n)
	}
	demean(w.East)
	demean(w.North)
	return w
}

// thinPaper thins a span as the authors' downsample_data: a span of n >
// MaxPoints points keeps the points (m+1) floor(n/MaxPoints) - 1 for m <
// MaxPoints, and the window counts as long enough if its last point is
// MinDuration after the span's first (kept or not).
func thinPaper(span []trace.Point, opt config) (keep []int, reason string) {
	n := len(span)
	if n <= opt.MaxPoints {
		keep = make([]int, n)
		for k := range keep {
			keep[k] = k
		}
	} else {
		stride := n / opt.MaxPoints
		keep = make([]int, opt.MaxPoints)
		for m := range keep {
			keep[m] = (m+1)*stride - 1
		}
	}
	if span[keep[len(keep)-1]].Time.Sub(span[0].Time) < opt.MinDuration {
		return nil, SkipTooShort
	}
	if len(keep) < opt.MinPoints {
		return nil, SkipTooFewPoints
	}
	return keep, ""
}

// thin chooses which points of a span (all within MaxDuration of the first,
// times increasing) to fit, as offsets into span. A span of at most
// MaxPoints points is fitted whole. A longer one is thinned: keep the first
// point, then each point at least g = MinDuration/(MaxPoints-1) after the
// last kept one, up to MaxPoints points. g is the finest spacing at which
// MaxPoints points are sure to last MinDuration; on regular sampling it is a
// stride (every 5th point at 1 s, every 2nd at 3 s, every point at 5 s), and
// on GeoLife's 5 s sampling with bursts of 1-3 s fixes it drops the bursts
// instead of halving the rate. A reason is returned if the span or the kept
// points last less than MinDuration, or too few points are kept.
func thin(span []trace.Point, opt config) (keep []int, reason string) {
	n := len(span)
	if span[n-1].Time.Sub(span[0].Time) < opt.MinDuration {
		return nil, SkipTooShort
	}
	if n <= opt.MaxPoints {
		keep = make([]int, n)
		for k := range keep {
			keep[k] = k
		}
	} else {
		// Rounded up so that (MaxPoints-1) g >= MinDuration exactly.
		keep = spaced(span, (opt.MinDuration+time.Duration(opt.MaxPoints-2))/time.Duration(opt.MaxPoints-1), opt.MaxPoints)
	}
	return checkKept(span, keep, opt)
}

// spaced keeps the first point of span, then each point at least g after
// the last kept one, up to most points.
func spaced(span []trace.Point, g time.Duration, most int) []int {
	keep := []int{0}
	for k := 1; k < len(span) && len(keep) < most; k++ {
		if span[k].Time.Sub(span[keep[len(keep)-1]].Time) >= g {
			keep = append(keep, k)
		}
	}
	return keep
}

// checkKept returns keep, or the reason the kept points cannot be fitted:
// too few, or lasting less than MinDuration (possible only when fewer than
// MaxPoints were kept and the last lies within g of the end of a span
// barely MinDuration long).
func checkKept(span []trace.Point, keep []int, opt config) ([]int, string) {
	if len(keep) < opt.MinPoints {
		return nil, SkipTooFewPoints
	}
	if span[keep[len(keep)-1]].Time.Sub(span[0].Time) < opt.MinDuration {
		return nil, SkipTooShort
	}
	return keep, ""
}

func demean(x []float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for i := range x {
		x[i] -= m
	}
}

// popVariance is the mean square of de-meaned x (ddof 0, as numpy's var).
func popVariance(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return s / float64(len(x))
}

// Fit fits a prior on a corpus of traces: it cuts the traces into windows,
// fits each window's east and north coordinates by maximum likelihood in
// parallel, and chooses the prior from the distribution of the fits (see the
// package documentation). The report accounts for every window; it is
// returned, as far as it got, with most errors.
func Fit(traces []*trace.Trace, o Options) (*Prior, *Report, error) {
	return fit(traces, o.config())
}

// fit is Fit and FitPaper.
func fit(traces []*trace.Trace, opt config) (*Prior, *Report, error) {
	s, err := newFitSetup(opt)
	if err != nil {
		return nil, nil, err
	}
	opt = s.opt
	ws, rep, err := Windows(traces, opt)
	if err != nil {
		return nil, nil, err
	}
	rep.Workers = opt.Workers
	if opt.compare() {
		ws = subsample(ws, opt.MaxWindows, rep)
	}

	// A pool of workers fits windows by index into results, so the outcome
	// does not depend on scheduling; this goroutine only reports progress.
	results := make([]WindowResult, len(ws))
	jobs := make(chan int)
	done := make(chan struct{}, len(ws))
	var wg sync.WaitGroup
	for range min(opt.Workers, max(1, len(ws))) {
		wg.Go(func() {
			for i := range jobs {
				results[i] = s.fitWindow(ws[i], traces[ws[i].Trace])
				done <- struct{}{}
			}
		})
	}
	go func() {
		for i := range ws {
			jobs <- i
		}
		close(jobs)
	}()
	for n := range len(ws) {
		<-done
		if opt.Progress != nil {
			opt.Progress(n+1, len(ws))
		}
	}
	wg.Wait()
	var pos Positions
	pos.Add(traces...)
	centreWarnings(rep, pos)
	return s.combine(results, rep, pos.Centre(opt.Corpus), pos.Index())
}

// lengthscale reads the "lengthscale" hyperparameter of k.
func lengthscale(k gp.Kernel) (float64, bool) {
	for _, p := range k.Params() {
		if p.Name == "lengthscale" {
			return p.Value, true
		}
	}
	return 0, false
}

// quantile returns the q quantile of x by linear interpolation between
// order statistics (type 7, numpy's default, with which the paper's
// quartiles were computed). x is not modified.
func quantile(x []float64, q float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return stats.Quantile7(s, q)
}

func quartiles(x []float64) [3]float64 {
	return [3]float64{quantile(x, 0.25), quantile(x, 0.5), quantile(x, 0.75)}
}
