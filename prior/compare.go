package prior

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/trace"
)

// Defaults of the kernel comparison (Options with Kernel empty); see the
// package documentation, "Comparing kernels".
const (
	CompareMinDuration = 20 * time.Minute
	CompareMaxDuration = 2 * time.Hour
	CompareMaxPoints   = 200
	CompareMinPoints   = 20
	CompareMinSpacing  = 10 * time.Second
	CompareMaxWindows  = 240
	CompareBoundFactor = 100.0
	CompareMinWinShare = 0.10
	CompareFamilyLow   = 0.05
	CompareFamilyHigh  = 0.95
)

// CompareKernels are the kernels compared by default.
var CompareKernels = []string{gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}

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
}

// Comparison summarises the kernel comparison.
type Comparison struct {
	// Kernels summarises each compared kernel, in Options.Kernels order.
	Kernels []KernelSummary `json:"kernels"`
	// Nominal is the kernel that won most windows.
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
	// are censored.
	Fits     int `json:"fits"`
	Censored int `json:"censored"`
	// Family is the kernel's part of the prior family, nil when it won
	// too few windows.
	Family *gp.Family `json:"family,omitempty"`
}

// thinSpaced chooses the points of a span for the comparison: the first,
// then each at least g after the last kept one, g the larger of
// MinSpacing and the span's duration over MaxPoints-1 (so that at most
// MaxPoints points cover the whole span).
func thinSpaced(span []trace.Point, opt Options) (keep []int, reason string) {
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
	bestHO := math.Inf(-1)
	for _, name := range s.opt.Kernels {
		kf := KernelFit{Kernel: name, BoundS: bound}
		for d := range 2 {
			f, cens, err := fitLong(name, train[d], dur, bound)
			if err != nil {
				return failed(fmt.Errorf("%s: %w", name, err))
			}
			l, _ := lengthscale(f.Kernel)
			kf.LengthscaleS[d] = l
			kf.VarianceM2[d] = f.Kernel.Params()[0].Value
			kf.NuggetM2[d] = f.Noise
			kf.Censored[d] = cens
			kf.Jitter = math.Max(kf.Jitter, f.MaxJitter)
			ho, jit, err := gp.HeldOutLogLikelihood(f.Kernel, f.Noise, train[d], test[d])
			if err != nil {
				return failed(fmt.Errorf("%s held-out: %w", name, err))
			}
			kf.HeldOut += ho
			kf.Jitter = math.Max(kf.Jitter, jit)
		}
		if kf.HeldOut > bestHO {
			bestHO, r.Best = kf.HeldOut, name
		}
		r.Jitter = math.Max(r.Jitter, kf.Jitter)
		r.Kernels = append(r.Kernels, kf)
	}
	return WindowResult{Fit: r}
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

// combineCompare chooses the family from the comparison's fits (rep.Fits
// already collected).
func (s *fitSetup) combineCompare(rep *Report) (fams []gp.Family, nominal gp.Family, nominalLS float64, err error) {
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
	nomIdx := -1
	for ki, name := range opt.Kernels {
		ks := KernelSummary{Kernel: name}
		var ls, vars, gains []float64
		for _, f := range rep.Fits {
			if len(f.Kernels) != len(opt.Kernels) {
				return nil, nominal, 0, fmt.Errorf("prior: window at trace %d point %d has %d kernel fits, want %d (fitted with other options?)", f.Trace, f.First, len(f.Kernels), len(opt.Kernels))
			}
			kf := f.Kernels[ki]
			if f.Best == name {
				ks.Won++
			}
			if rbf >= 0 {
				gains = append(gains, kf.HeldOut-f.Kernels[rbf].HeldOut)
			}
			for d := range 2 {
				l := kf.LengthscaleS[d]
				if kf.Censored[d] {
					ks.Censored++
					l = kf.BoundS
				}
				ls = append(ls, l)
				vars = append(vars, kf.VarianceM2[d])
			}
		}
		ks.Fits = len(ls)
		ks.WinShare = float64(ks.Won) / float64(len(rep.Fits))
		if rbf >= 0 {
			g := quantile(gains, 0.5)
			ks.MedianGainOverRBF = &g
		}
		for i, q := range []float64{0.05, 0.25, 0.5, 0.75, 0.95} {
			ks.LengthscalePercentilesS[i] = quantile(ls, q)
		}
		if ks.WinShare >= opt.MinWinShare {
			lo, hi := quantile(ls, opt.Family[0]), quantile(ls, opt.Family[1])
			hi = math.Max(hi, c.LongestWindowS)
			f := gp.Family{Kernel: name, LengthscaleMin: lo, LengthscaleMax: hi, Variance: quantile(vars, 1-opt.Family[1])}
			ks.Family = &f
			fams = append(fams, f)
			if nomIdx < 0 || ks.Won > c.Kernels[nomIdx].Won {
				nomIdx = ki
				nominal = f
				nominalLS = math.Min(math.Max(quantile(ls, 0.5), lo), hi)
			}
		}
		c.Kernels = append(c.Kernels, ks)
	}
	if nomIdx < 0 {
		return nil, nominal, 0, fmt.Errorf("prior: no kernel won %g of the %d windows", opt.MinWinShare, len(rep.Fits))
	}
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

// compareMethod describes the comparison for gp.PriorFit.Method.
func compareMethod(opt Options) string {
	sub := "all windows"
	if opt.MaxWindows > 0 {
		sub = fmt.Sprintf("at most %d windows (a larger corpus is subsampled evenly in corpus order)", opt.MaxWindows)
	}
	return fmt.Sprintf("kernels %s compared by held-out likelihood (hyperparameters by maximum likelihood on each window's even-numbered fixes, "+
		"score log p(odd | even)) on consecutive windows of %v-%v thinned to fixes at least %v apart and at most %d points (at least %d), %s; "+
		"variance, lengthscale (1 s to %g x the window's duration, no cap) and GPS nugget (%g m^2 to the window's variance) free; "+
		"family: every kernel winning at least %g of the windows, lengthscales from the %g to the %g quantile of its fits (censored fits at their bound), "+
		"extended to the longest window",
		strings.Join(opt.Kernels, ", "), opt.MinDuration, opt.MaxDuration, opt.MinSpacing, opt.MaxPoints, opt.MinPoints, sub,
		opt.BoundFactor, nuggetLo, opt.MinWinShare, opt.Family[0], opt.Family[1])
}

// summary is a short per-kernel text for gp.PriorFit.Method.
func (c *Comparison) summary() string {
	var parts []string
	for _, k := range c.Kernels {
		g := ""
		if k.MedianGainOverRBF != nil {
			g = fmt.Sprintf(", median gain %.1f nats", *k.MedianGainOverRBF)
		}
		parts = append(parts, fmt.Sprintf("%s won %d%s, lengthscale median %.0f s (5-95%%: %.0f-%.0f s), %d/%d censored",
			k.Kernel, k.Won, g, k.LengthscalePercentilesS[2], k.LengthscalePercentilesS[0], k.LengthscalePercentilesS[4], k.Censored, k.Fits))
	}
	return strings.Join(parts, "; ")
}
