package prior

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// Defaults of the kernel comparison (Options); see the
// package documentation, "Comparing kernels".
const (
	CompareMinDuration = 20 * time.Minute
	CompareMaxDuration = 2 * time.Hour
	CompareMaxPoints   = 200
	CompareMinPoints   = 20
	CompareMinSpacing  = 10 * time.Second
	CompareMaxWindows  = 240
	CompareBoundFactor = 100.0
	CompareMinWinShare = 0.05
	CompareFamilyLow   = 0.05
	CompareFamilyHigh  = 0.95
)

// CompareKernels are the kernels compared by default: the four single
// kernels. SumKernels, two sums of a short and a long kernel (see
// SumKernel), are compared on request (Options.Kernels, "tracepriv fit
// --kernels"): on GeoLife users 001-007 they win 61 % of the windows, but
// their short part's 5th percentile (3.5-5 s) lies below the spacing of
// the fitted fixes (at least 20 s between the even fixes), where it cannot
// be told from the GPS nugget, so a family built from them would take an
// artefact for an adversary (docs/fit.md). Since issue 31 fits below the
// fixes' spacing count at it (twice Options.MinSpacing), the short parts' too;
// comparing the sums by default has not been measured again.
var CompareKernels = []string{gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}

// SumKernels are the sum candidates: a short plus a long Matérn 3/2, and
// a short Matérn 1/2 plus a long Matérn 3/2.
var SumKernels = []string{gp.KernelMatern32 + SumSep + gp.KernelMatern32, gp.KernelMatern12 + SumSep + gp.KernelMatern32}

// SumSep joins the parts of a sum candidate: "matern32+matern32" is a
// short Matern-3/2 plus a long one, "matern12+matern32" a short
// Matern-1/2 plus a long Matern-3/2. A sum is fitted as
// k = v1 k_short(l1) + v2 k_long(l2) with l2 = l1 (1 + r), r > 0, so that
// the first part is always the shorter one.
const SumSep = "+"

// SumParts splits a sum candidate's name into its short and long parts;
// ok is false for a single kernel.
func SumParts(name string) (short, long string, ok bool) {
	short, long, ok = strings.Cut(name, SumSep)
	return short, long, ok
}

// checkCompareKernel reports whether name can be compared: a kernel of
// gp.NewKernel other than "periodic", or a sum "a+b" of two such kernels.
func checkCompareKernel(name string) error {
	parts := []string{name}
	if a, b, ok := SumParts(name); ok {
		parts = []string{a, b}
	}
	for _, k := range parts {
		if k == gp.KernelPeriodic {
			return param.Invalid("kernels", name, "periodic is not fitted from location traces (it needs a period); write the prior by hand")
		}
		if strings.Contains(k, SumSep) {
			return param.Invalid("kernels", name, "a sum has two parts")
		}
		if _, err := gp.NewKernel(k, 1, 1, 0); err != nil {
			return param.Invalid("kernels", name, fmt.Sprintf("%q is not one of %v", k, gp.KernelNames))
		}
	}
	return nil
}

// SumKernel is the kernel of a sum candidate: Short with variance and
// lengthscale l1, plus Long with its variance and lengthscale
// l1 (1 + Ratio). Its hyperparameters, for gp.Fit, are "short.variance",
// "short.lengthscale", "long.variance" and "ratio": the order l1 < l2 is
// part of the parametrisation, so the fit cannot swap the parts. Short and
// Long must have exactly the hyperparameters (variance, lengthscale), as
// the RBF and Matern kernels have.
type SumKernel struct {
	Short, Long gp.Kernel
	Ratio       float64
}

// newSumKernel builds the sum of short (v1, l1) and long (v2, l2), l2 > l1.
func newSumKernel(short, long string, v1, l1, v2, l2 float64) (SumKernel, error) {
	a, err := gp.NewKernel(short, v1, l1, 0)
	if err != nil {
		return SumKernel{}, err
	}
	b, err := gp.NewKernel(long, v2, l2, 0)
	if err != nil {
		return SumKernel{}, err
	}
	if !(l2 > l1) {
		return SumKernel{}, param.Invalid("long lengthscale", l2, fmt.Sprintf("must be above the short one %v", l1))
	}
	return SumKernel{Short: a, Long: b, Ratio: l2/l1 - 1}, nil
}

func (k SumKernel) Eval(s, t float64) float64 { return k.Short.Eval(s, t) + k.Long.Eval(s, t) }

func (k SumKernel) Params() []gp.Param {
	a, b := k.Short.Params(), k.Long.Params()
	return []gp.Param{{Name: "short.variance", Value: a[0].Value}, {Name: "short.lengthscale", Value: a[1].Value},
		{Name: "long.variance", Value: b[0].Value}, {Name: "ratio", Value: k.Ratio}}
}

func (k SumKernel) WithParams(v []float64) (gp.Kernel, error) {
	if len(v) != 4 {
		return nil, param.Invalid("hyperparameters", len(v), "a sum kernel has 4")
	}
	a, err := k.Short.WithParams(v[:2])
	if err != nil {
		return nil, err
	}
	b, err := k.Long.WithParams([]float64{v[2], v[1] * (1 + v[3])})
	if err != nil {
		return nil, err
	}
	if !(v[3] > 0) || math.IsInf(v[3], 0) {
		return nil, param.Positive("ratio", v[3])
	}
	return SumKernel{Short: a, Long: b, Ratio: v[3]}, nil
}

// Grad: log l2 = log l1 + log(1 + r), so d/dlog l1 gets both parts'
// lengthscale derivatives and d/dlog r = r / (1 + r) d/dlog l2.
func (k SumKernel) Grad(dst []float64, s, t float64) {
	k.Short.Grad(dst[0:2], s, t)
	k.Long.Grad(dst[2:4], s, t)
	dst[1] += dst[3]
	dst[3] *= k.Ratio / (1 + k.Ratio)
}

// Lengthscales returns l1 and l2.
func (k SumKernel) Lengthscales() (short, long float64) {
	return k.Short.Params()[1].Value, k.Long.Params()[1].Value
}

// SkipSubsampled counts the windows left out because the corpus had more
// than Options.MaxWindows.
const SkipSubsampled = "subsampled"

// Bounds of the comparison's free hyperparameters, relative to a
// coordinate's sample variance v (m^2): the kernel variance in
// [1e-6 v, 1e10 v] (a long lengthscale needs a large variance to show the
// movement a window holds), the nugget (GPS error) in [0.01 m^2, max(v, 1)].
const (
	varianceLo, varianceHi = 1e-6, 1e10
	nuggetLo               = 0.01
	nuggetInit             = 25 // (5 m)^2, a typical GPS error
	minLengthscale         = 1.0
	// censorNats: a fit longer than its window whose likelihood with the
	// lengthscale at the bound is within this of its optimum is censored:
	// a likelihood-ratio test at 95 % (chi-square, 1 degree of freedom,
	// 3.84 / 2) cannot reject the bound, so the data only says the
	// lengthscale is long.
	censorNats = 1.92
)

// KernelFit is one kernel's fit of one window (east then north).
type KernelFit struct {
	Kernel string `json:"kernel"`
	// LengthscaleS, VarianceM2 and NuggetM2 are fitted by maximum
	// likelihood on the window's even-numbered points.
	LengthscaleS [2]float64 `json:"lengthscale_s"`
	VarianceM2   [2]float64 `json:"variance_m2"`
	NuggetM2     [2]float64 `json:"nugget_m2"`
	// BoundS is the upper bound of the lengthscale search, and Censored
	// says that a coordinate's fit ended on it, or is longer than the
	// window with a likelihood within 1.92 nats of the best at the bound
	// (a 95 % likelihood-ratio test cannot reject the bound): its
	// lengthscale is only known to be long.
	BoundS   float64 `json:"bound_s"`
	Censored [2]bool `json:"censored"`
	// HeldOut is log p(odd points | even points) at the fitted
	// hyperparameters, summed over both coordinates (nats).
	HeldOut float64 `json:"held_out_loglik"`
	// Jitter is the largest diagonal jitter any factorisation needed
	// beyond the nugget.
	Jitter float64 `json:"jitter"`
	// Parts, for a sum candidate, are its short and its long part. The
	// fields above then describe the long part (LengthscaleS, Censored)
	// and the sum (VarianceM2 is v1 + v2).
	Parts []PartFit `json:"parts,omitempty"`
}

// PartFit is one part of a sum candidate's fit (east then north).
type PartFit struct {
	Kernel       string     `json:"kernel"`
	Role         string     `json:"role"` // "short" or "long"
	LengthscaleS [2]float64 `json:"lengthscale_s"`
	VarianceM2   [2]float64 `json:"variance_m2"`
	// Censored: the lengthscale ended within 10 % of the window's bound
	// (BoundS) or beyond it (the long part's l1 (1 + r) is not bounded by
	// the fit). No profile test is run for sums.
	Censored [2]bool `json:"censored"`
}

// Comparison summarises the kernel comparison.
type Comparison struct {
	// Kernels summarises each compared kernel, in Options.Kernels order.
	Kernels []KernelSummary `json:"kernels"`
	// Nominal is the kernel of the nominal member: the kernel in the
	// family that won most windows, or, when that is a sum, its long
	// part's kernel.
	Nominal string `json:"nominal"`
	// LongestWindowS is the longest fitted window: the family of every
	// preferred kernel reaches at least this far.
	LongestWindowS float64 `json:"longest_window_s"`
	// MedianWindowS and MedianPoints describe the fitted windows.
	MedianWindowS float64 `json:"median_window_s"`
	MedianPoints  float64 `json:"median_points"`
	// MinWinShare is the share of windows a kernel had to win to enter
	// the family.
	MinWinShare float64 `json:"min_win_share"`
}

// KernelSummary is one kernel's result over all windows.
type KernelSummary struct {
	Kernel string `json:"kernel"`
	// Won is the number of windows whose held-out likelihood this kernel
	// maximised, and WinShare that over the windows.
	Won      int     `json:"windows_won"`
	WinShare float64 `json:"win_share"`
	// MedianGainOverRBF is the median over windows of this kernel's
	// held-out log-likelihood minus the RBF's (nats; NaN-free: 0 for the
	// RBF itself, omitted when RBF is not compared).
	MedianGainOverRBF *float64 `json:"median_gain_over_rbf,omitempty"`
	// LengthscalePercentilesS are the 5th, 25th, 50th, 75th and 95th
	// percentiles of the per-window, per-coordinate fitted lengthscales
	// (censored fits counted at their bound).
	LengthscalePercentilesS [5]float64 `json:"lengthscale_percentiles_s"`
	// Fits is the number of coordinate fits, Censored how many of them
	// are censored, BelowSpacing how many ended below the fixes' spacing
	// (twice Options.MinSpacing; counted at it).
	Fits         int `json:"fits"`
	Censored     int `json:"censored"`
	BelowSpacing int `json:"below_spacing"`
	// Family is the kernel's part of the prior family, nil when it won
	// too few windows (and for a sum, whose parts carry it).
	Family *Family `json:"family,omitempty"`
	// Parts, for a sum candidate, summarise its short and long parts;
	// LengthscalePercentilesS, Fits and Censored above are the long part's.
	Parts []PartSummary `json:"parts,omitempty"`
}

// PartSummary is one part of a sum candidate over all windows.
type PartSummary struct {
	Kernel string `json:"kernel"`
	Role   string `json:"role"`
	// LengthscalePercentilesS are the 5/25/50/75/95th percentiles of the
	// part's fitted lengthscales (censored fits at their bound).
	LengthscalePercentilesS [5]float64 `json:"lengthscale_percentiles_s"`
	// VariancePercentilesM2 are the same percentiles of the part's
	// fitted variances.
	VariancePercentilesM2 [5]float64 `json:"variance_percentiles_m2"`
	Fits                  int        `json:"fits"`
	Censored              int        `json:"censored"`
	// Family is what the part adds to the family of its kernel when the
	// sum won at least MinWinShare of the windows: the Family quantiles
	// of the part's lengthscales (the long part's top raised to the
	// longest window), and the 1 - hi quantile of the sum's total
	// variance v1 + v2. It is merged with the kernel's other entries by
	// the union of the ranges and the least variance.
	Family *Family `json:"family,omitempty"`
}

// thinSpaced chooses the points of a span for the comparison: the first,
// then each at least g after the last kept one, g the larger of
// MinSpacing and the span's duration over MaxPoints-1 (so that at most
// MaxPoints points cover the whole span).
func thinSpaced(span []trace.Point, opt config) (keep []int, reason string) {
	n := len(span)
	dur := span[n-1].Time.Sub(span[0].Time)
	if dur < opt.MinDuration {
		return nil, SkipTooShort
	}
	g := max(opt.MinSpacing, (dur+time.Duration(opt.MaxPoints-2))/time.Duration(opt.MaxPoints-1))
	return checkKept(span, spaced(span, g, opt.MaxPoints), opt)
}

// subsample keeps at most max windows, evenly spaced in corpus order, and
// counts the others in rep.
func subsample(ws []Window, limit int, rep *Report) []Window {
	if limit < 0 || len(ws) <= limit {
		return ws
	}
	out := make([]Window, 0, limit)
	next := 0
	for i, w := range ws {
		if next < limit && i == next*len(ws)/limit {
			out = append(out, w)
			next++
			continue
		}
		first, last := w.Index[0], w.Index[len(w.Index)-1]
		rep.skip(SkipSubsampled, last-first+1)
		rep.PointsThinned -= (last - first + 1) - len(w.Index)
	}
	return out
}

// fitCompare fits every compared kernel to one window: hyperparameters on
// the even-numbered points, scored on the odd-numbered ones.
func (s *fitSetup) fitCompare(w Window, r WindowFit) WindowResult {
	failed := func(err error) WindowResult { return WindowResult{Fit: r, Skip: SkipFitFailed, Err: err.Error()} }
	dur := w.T[len(w.T)-1]
	bound := s.opt.BoundFactor * dur
	var train, test [2]gp.Series
	for d, y := range [][]float64{w.East, w.North} {
		for i := range w.T {
			if i%2 == 0 {
				train[d].T, train[d].Y = append(train[d].T, w.T[i]), append(train[d].Y, y[i])
			} else {
				test[d].T, test[d].Y = append(test[d].T, w.T[i]), append(test[d].Y, y[i])
			}
		}
	}
	// Single kernels first: a sum starts from the fit of its long part's
	// kernel when that kernel is compared too.
	fits := make([]KernelFit, len(s.opt.Kernels))
	var single [2]map[string]*gp.FitResult
	for d := range 2 {
		single[d] = map[string]*gp.FitResult{}
	}
	for _, sums := range []bool{false, true} {
		for ki, name := range s.opt.Kernels {
			short, long, isSum := SumParts(name)
			if isSum != sums {
				continue
			}
			kf := KernelFit{Kernel: name, BoundS: bound}
			if isSum {
				kf.Parts = []PartFit{{Kernel: short, Role: "short"}, {Kernel: long, Role: "long"}}
			}
			for d := range 2 {
				var (
					f    *gp.FitResult
					cens bool
					err  error
				)
				if isSum {
					f, err = fitSum(short, long, train[d], dur, bound, single[d][long])
				} else {
					f, cens, err = fitLong(name, train[d], dur, bound)
					single[d][name] = f
				}
				if err != nil {
					return failed(fmt.Errorf("%s: %w", name, err))
				}
				if sk, ok := f.Kernel.(SumKernel); ok {
					l1, l2 := sk.Lengthscales()
					for i, l := range []float64{l1, l2} {
						p := &kf.Parts[i]
						p.LengthscaleS[d] = l
						p.Censored[d] = l >= bound*math.Exp(-0.1)
					}
					kf.Parts[0].VarianceM2[d] = sk.Short.Params()[0].Value
					kf.Parts[1].VarianceM2[d] = sk.Long.Params()[0].Value
					kf.LengthscaleS[d], kf.Censored[d] = l2, kf.Parts[1].Censored[d]
					kf.VarianceM2[d] = kf.Parts[0].VarianceM2[d] + kf.Parts[1].VarianceM2[d]
				} else {
					l, _ := lengthscale(f.Kernel)
					kf.LengthscaleS[d] = l
					kf.VarianceM2[d] = f.Kernel.Params()[0].Value
					kf.Censored[d] = cens
				}
				kf.NuggetM2[d] = f.Noise
				kf.Jitter = math.Max(kf.Jitter, f.MaxJitter)
				ho, jit, err := gp.HeldOutLogLikelihood(f.Kernel, f.Noise, train[d], test[d])
				if err != nil {
					return failed(fmt.Errorf("%s held-out: %w", name, err))
				}
				kf.HeldOut += ho
				kf.Jitter = math.Max(kf.Jitter, jit)
			}
			fits[ki] = kf
		}
	}
	bestHO := math.Inf(-1)
	for _, kf := range fits {
		if kf.HeldOut > bestHO {
			bestHO, r.Best = kf.HeldOut, kf.Kernel
		}
		r.Jitter = math.Max(r.Jitter, kf.Jitter)
	}
	r.Kernels = fits
	return WindowResult{Fit: r}
}

// Bounds of a sum's ratio r = l2 / l1 - 1: the long part is at least 1 %
// longer than the short one, and at most BoundFactor times the window
// longer (l2 itself is not bounded by the fit; a part beyond the window's
// bound is censored).
const sumRatioLo = 0.01

// fitSum fits the sum of a short and a long kernel to one de-meaned
// coordinate, variances, l1 in [1 s, bound], the ratio and the nugget
// free, from two starts: the fit of the long part's kernel alone (warm,
// when given) plus a short part of a tenth of the variance at a quarter
// of its lengthscale (at most 30 s), and a generic start (a tenth of the
// variance at 30 s plus the variance at a third of the window).
func fitSum(short, long string, s gp.Series, dur, bound float64, warm *gp.FitResult) (*gp.FitResult, error) {
	v := math.Max(popVariance(s.Y), 1e-6)
	fo := gp.FitOptions{
		Bounds: map[string]gp.Bound{
			"short.variance":    {Lo: varianceLo * v, Hi: varianceHi * v},
			"long.variance":     {Lo: varianceLo * v, Hi: varianceHi * v},
			"short.lengthscale": {Lo: minLengthscale, Hi: bound},
			"ratio":             {Lo: sumRatioLo, Hi: bound},
		},
		Noise:     gp.Bound{Lo: nuggetLo, Hi: math.Max(v, 1)},
		NoiseInit: nuggetInit,
	}
	type start struct{ v1, l1, v2, l2, noise float64 }
	var starts []start
	if warm != nil {
		lw, _ := lengthscale(warm.Kernel)
		l1 := math.Max(minLengthscale, math.Min(30, lw/4))
		starts = append(starts, start{0.1 * v, l1, warm.Kernel.Params()[0].Value, math.Max(lw, 2*l1), warm.Noise})
	}
	starts = append(starts, start{0.1 * v, math.Min(30, bound/4), v, math.Max(dur/3, 60), nuggetInit})
	var best *gp.FitResult
	var lastErr error
	for _, st := range starts {
		k0, err := newSumKernel(short, long, st.v1, st.l1, st.v2, st.l2)
		if err != nil {
			return nil, err
		}
		fo.NoiseInit = st.noise
		f, err := gp.Fit(k0, []gp.Series{s}, fo)
		if err != nil {
			lastErr = err
			continue
		}
		if best == nil || f.LogLikelihood > best.LogLikelihood {
			best = f
		}
	}
	if best == nil {
		return nil, fmt.Errorf("every start failed: %w", lastErr)
	}
	return best, nil
}

// fitLong fits kernel name to one de-meaned coordinate in metres with
// variance, lengthscale (in [1 s, bound]) and nugget free, from three
// starts (short, medium and window-long lengthscales), and says whether
// the lengthscale is censored: on the bound, or longer than the window
// with a likelihood at the bound within censorNats of the optimum.
func fitLong(name string, s gp.Series, dur, bound float64) (*gp.FitResult, bool, error) {
	v := math.Max(popVariance(s.Y), 1e-6)
	fo := gp.FitOptions{
		Bounds: map[string]gp.Bound{
			"variance":    {Lo: varianceLo * v, Hi: varianceHi * v},
			"lengthscale": {Lo: minLengthscale, Hi: bound},
		},
		Noise:     gp.Bound{Lo: nuggetLo, Hi: math.Max(v, 1)},
		NoiseInit: nuggetInit,
	}
	var best *gp.FitResult
	for _, st := range [][2]float64{{v, 30}, {v, dur / 10}, {10 * v, dur}} {
		k0, err := gp.NewKernel(name, st[0], math.Min(st[1], bound), 0)
		if err != nil {
			return nil, false, err
		}
		f, err := gp.Fit(k0, []gp.Series{s}, fo)
		if err != nil {
			continue
		}
		if best == nil || f.LogLikelihood > best.LogLikelihood {
			best = f
		}
	}
	if best == nil {
		return nil, false, fmt.Errorf("every start failed")
	}
	l, _ := lengthscale(best.Kernel)
	if l >= bound*math.Exp(-0.1) {
		return best, true, nil
	}
	if l <= dur {
		return best, false, nil
	}
	// Profile: the best fit with the lengthscale at the bound.
	fo.Bounds["lengthscale"] = gp.Bound{Lo: bound, Hi: bound}
	k0, err := gp.NewKernel(name, best.Kernel.Params()[0].Value*math.Pow(bound/l, 2), bound, 0)
	if err != nil {
		return nil, false, err
	}
	fo.Bounds["variance"] = gp.Bound{Lo: varianceLo * v, Hi: math.Max(varianceHi*v, k0.Params()[0].Value)}
	fo.NoiseInit = best.Noise
	at, err := gp.Fit(k0, []gp.Series{s}, fo)
	if err != nil {
		return best, false, nil
	}
	return best, at.LogLikelihood >= best.LogLikelihood-censorNats, nil
}

// fixSpacing is the spacing of the fixes the comparison fits
// hyperparameters on, in seconds: windows are thinned to fixes at least
// MinSpacing apart and fitted on every other one, so no fit resolves a
// lengthscale shorter than 2 MinSpacing (20 s by default). A fit below it
// is only known to be short, as a censored fit is only known to be long.
func (o config) fixSpacing() float64 { return 2 * o.MinSpacing.Seconds() }

// resolved is a coordinate fit's lengthscale as the family and the
// held-out coverage count it: a censored fit at the longest bound any
// window can have (BoundFactor times MaxDuration; it is only known to be
// long), a fit below FixSpacing at FixSpacing (it is only known to be
// short). o must have its defaults.
func (o config) resolved(l float64, censored bool) float64 {
	if censored {
		return o.BoundFactor * o.MaxDuration.Seconds()
	}
	return math.Max(l, o.fixSpacing())
}

// familyLow is the lower end of a kernel's family: down to the fixes'
// spacing (issue 31: on GeoLife users 000-007, 6 of the 22 held-out windows
// the 5 % quantile left uncovered were won at 22-98 s; docs/fit.md), or the
// Family[0] quantile of ls (resolved lengthscales) if that is lower, which
// it cannot be, since no resolved fit is shorter than the spacing.
func (o config) familyLow(ls []float64) float64 {
	return math.Min(quantile(ls, o.Family[0]), o.fixSpacing())
}

// combineCompare chooses the family from the comparison's fits (rep.Fits
// already collected).
func (s *fitSetup) combineCompare(rep *Report) (fams []Family, nominal Family, nominalLS float64, err error) {
	opt := s.opt
	c := &Comparison{MinWinShare: opt.MinWinShare}
	rep.Comparison = c
	var durs, npts []float64
	for _, f := range rep.Fits {
		durs = append(durs, f.DurationS)
		npts = append(npts, float64(f.Points))
		c.LongestWindowS = math.Max(c.LongestWindowS, f.DurationS)
	}
	c.MedianWindowS, c.MedianPoints = quantile(durs, 0.5), quantile(npts, 0.5)
	rbf := slices.Index(opt.Kernels, gp.KernelRBF)
	percentiles := func(x []float64) (p [5]float64) {
		for i, q := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
			p[i] = quantile(x, q)
		}
		return p
	}
	// add merges a family entry into fams: one entry per kernel, the union
	// of the lengthscale ranges and the least variance.
	add := func(f Family) {
		for i := range fams {
			if g := &fams[i]; g.Kernel == f.Kernel {
				g.LengthscaleMin = math.Min(g.LengthscaleMin, f.LengthscaleMin)
				g.LengthscaleMax = math.Max(g.LengthscaleMax, f.LengthscaleMax)
				g.Variance = math.Min(g.Variance, f.Variance)
				return
			}
		}
		fams = append(fams, f)
	}
	nomIdx := -1
	var nomKernel string
	for ki, name := range opt.Kernels {
		ks := KernelSummary{Kernel: name}
		var ls, vars, gains []float64
		var parts [2]struct{ ls, vars []float64 }
		for _, f := range rep.Fits {
			if len(f.Kernels) != len(opt.Kernels) || f.Kernels[ki].Kernel != name {
				return nil, nominal, 0, param.Invalid("results", fmt.Sprintf("window at trace %d point %d", f.Trace, f.First), fmt.Sprintf("has %d kernel fits, want %d (fitted with other options?)", len(f.Kernels), len(opt.Kernels)))
			}
			kf := f.Kernels[ki]
			if f.Best == name {
				ks.Won++
			}
			if rbf >= 0 {
				gains = append(gains, kf.HeldOut-f.Kernels[rbf].HeldOut)
			}
			for d := range 2 {
				if kf.Censored[d] {
					ks.Censored++
				}
				if kf.LengthscaleS[d] < opt.fixSpacing() && !kf.Censored[d] {
					ks.BelowSpacing++
				}
				ls = append(ls, opt.resolved(kf.LengthscaleS[d], kf.Censored[d]))
				vars = append(vars, kf.VarianceM2[d])
				for i, p := range kf.Parts {
					if i > 1 {
						break
					}
					parts[i].ls = append(parts[i].ls, opt.resolved(p.LengthscaleS[d], p.Censored[d]))
					parts[i].vars = append(parts[i].vars, p.VarianceM2[d])
				}
			}
		}
		ks.Fits = len(ls)
		ks.WinShare = float64(ks.Won) / float64(len(rep.Fits))
		if rbf >= 0 {
			g := quantile(gains, 0.5)
			ks.MedianGainOverRBF = &g
		}
		ks.LengthscalePercentilesS = percentiles(ls)
		short, long, isSum := SumParts(name)
		enters := ks.WinShare >= opt.MinWinShare
		if isSum {
			for i, pk := range []string{short, long} {
				ps := PartSummary{Kernel: pk, Role: []string{"short", "long"}[i], Fits: len(parts[i].ls),
					LengthscalePercentilesS: percentiles(parts[i].ls), VariancePercentilesM2: percentiles(parts[i].vars)}
				for _, f := range rep.Fits {
					for d := range 2 {
						if f.Kernels[ki].Parts[i].Censored[d] {
							ps.Censored++
						}
					}
				}
				if enters {
					lo, hi := opt.familyLow(parts[i].ls), quantile(parts[i].ls, opt.Family[1])
					if i == 1 {
						hi = math.Max(hi, c.LongestWindowS)
					}
					pf := Family{Kernel: pk, LengthscaleMin: lo, LengthscaleMax: hi, Variance: quantile(vars, 1-opt.Family[1])}
					ps.Family = &pf
					add(pf)
				}
				ks.Parts = append(ks.Parts, ps)
			}
		} else if enters {
			lo, hi := opt.familyLow(ls), quantile(ls, opt.Family[1])
			hi = math.Max(hi, c.LongestWindowS)
			f := Family{Kernel: name, LengthscaleMin: lo, LengthscaleMax: hi, Variance: quantile(vars, 1-opt.Family[1])}
			ks.Family = &f
			add(f)
		}
		// The nominal member is the most-winning candidate in the family;
		// for a sum, its long part at the median of its lengthscales.
		if enters && (nomIdx < 0 || ks.Won > c.Kernels[nomIdx].Won) {
			nomIdx, nomKernel = ki, name
			if isSum {
				nomKernel = long
			}
			nominalLS = quantile(ls, 0.5)
		}
		c.Kernels = append(c.Kernels, ks)
	}
	if nomIdx < 0 {
		return nil, nominal, 0, fmt.Errorf("%w (%g of the %d windows)", ErrNoKernelWon, opt.MinWinShare, len(rep.Fits))
	}
	for _, f := range fams {
		if f.Kernel == nomKernel {
			nominal = f
		}
	}
	nominalLS = math.Min(math.Max(nominalLS, nominal.LengthscaleMin), nominal.LengthscaleMax)
	c.Nominal = nominal.Kernel
	// The report's per-window lengthscales and l_eff are the nominal
	// kernel's (censored ones as fitted).
	for i := range rep.Fits {
		f := &rep.Fits[i]
		f.LengthscaleS = f.Kernels[nomIdx].LengthscaleS
		for d := range 2 {
			f.LEff[d] = gp.EffectiveLengthscale(f.LengthscaleS[d], f.PeriodS)
		}
	}
	return fams, nominal, nominalLS, nil
}

// compareMethod describes the comparison for FitRecord.Method.
func compareMethod(opt config) string {
	sub := "all windows"
	if opt.MaxWindows > 0 {
		sub = fmt.Sprintf("at most %d windows (a larger corpus is subsampled evenly in corpus order)", opt.MaxWindows)
	}
	sums := ""
	if slices.ContainsFunc(opt.Kernels, func(k string) bool { return strings.Contains(k, SumSep) }) {
		sums = "; a sum a+b is a short kernel a plus a long kernel b (v1 a(l1) + v2 b(l2), l2 = l1 (1 + r), r >= 0.01, a nugget, " +
			"started from b's own fit), and a winning sum adds each part's lengthscale quantiles (the long part's extended to the longest window) " +
			"to the family of the part's kernel, merged by the union of ranges and the least variance (the sum's v1 + v2 quantile)"
	}
	return fmt.Sprintf("kernels %s compared by held-out likelihood (hyperparameters by maximum likelihood on each window's even-numbered fixes, "+
		"score log p(odd | even)) on consecutive windows of %v-%v thinned to fixes at least %v apart and at most %d points (at least %d), %s; "+
		"variance, lengthscale (1 s to %g x the window's duration, no cap) and GPS nugget (%g m^2 to the window's variance) free; "+
		"family: every kernel winning at least %g of the windows, lengthscales from the fixes' spacing (%g s, 2 x the least spacing; "+
		"shorter fits counted at it) to the %g quantile of its fits (censored fits at the longest bound, %g s), "+
		"extended to the longest window%s",
		strings.Join(opt.Kernels, ", "), opt.MinDuration, opt.MaxDuration, opt.MinSpacing, opt.MaxPoints, opt.MinPoints, sub,
		opt.BoundFactor, nuggetLo, opt.MinWinShare, opt.fixSpacing(), opt.Family[1], opt.BoundFactor*opt.MaxDuration.Seconds(), sums)
}

// summary is a short per-kernel text for FitRecord.Method.
func (c *Comparison) summary() string {
	var parts []string
	for _, k := range c.Kernels {
		g := ""
		if k.MedianGainOverRBF != nil {
			g = fmt.Sprintf(", median gain %.1f nats", *k.MedianGainOverRBF)
		}
		if len(k.Parts) == 2 {
			a, b := k.Parts[0], k.Parts[1]
			parts = append(parts, fmt.Sprintf("%s won %d%s, short part lengthscale median %.0f s (5-95%%: %.0f-%.0f s), long part median %.0f s (5-95%%: %.0f-%.0f s), %d/%d long parts censored",
				k.Kernel, k.Won, g, a.LengthscalePercentilesS[2], a.LengthscalePercentilesS[0], a.LengthscalePercentilesS[4],
				b.LengthscalePercentilesS[2], b.LengthscalePercentilesS[0], b.LengthscalePercentilesS[4], b.Censored, b.Fits))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s won %d%s, lengthscale median %.0f s (5-95%%: %.0f-%.0f s), %d/%d censored",
			k.Kernel, k.Won, g, k.LengthscalePercentilesS[2], k.LengthscalePercentilesS[0], k.LengthscalePercentilesS[4], k.Censored, k.Fits))
	}
	return strings.Join(parts, "; ")
}
