// Package prior fits a Gaussian-process prior family (Prior, version 4)
// on a corpus of location traces. The corpus must be separate from the
// traces the prior protects: a prior fitted on the traces themselves would
// make the noise design depend on private values, so the fit also returns
// the corpus's private index, a key of every fix (Report.CorpusIndex,
// trace.CorpusIndex), to be written beside the prior (CorpusIndexPath)
// for sanitize to check; the prior itself holds nothing of any trace.
//
// For example, from a directory of other people's traces:
//
//	var corpus []*trace.Trace // never the traces a release protects
//	_, _, err := trace.ReadPaths([]string{"corpus/"}, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) {
//		corpus = append(corpus, ts...)
//	})
//	if err != nil {
//		return err
//	}
//	p, rep, err := prior.Fit(corpus, prior.Options{Corpus: "corpus"}) // compares kernels
//	if err != nil {
//		return err
//	}
//	fmt.Println(p.Family(), "from", rep.Windows, "windows") // on GeoLife user 001: matern32, lengthscale in [133.6, 7197] s from 24 windows
//	// Write the prior file that sanitize reads (ReadFile).
//	return p.Write(os.Stdout)
//
// The two fitting modes have two entry points and two option types. Fit
// with Options (zero: the defaults)
// compares kernels by held-out likelihood on long windows and lists every
// kernel the data prefers ("Comparing kernels" below; docs/fit.md has the
// measured GeoLife numbers). FitPaper with PaperOptions (whose zero value
// is the paper's fit) fits one kernel as Meehan and Chaudhuri fit theirs on GeoLife (AISTATS 2021, appendix 7.4; their
// preprocess_geolife.py), for reproducing the paper: the rest of this
// documentation up to "Comparing kernels" describes that mode.
//
// # Comparing kernels
//
// Each trace is cut into consecutive windows of up to CompareMaxDuration
// (2 h) as below, and a window that lasts less than CompareMinDuration
// (20 min) is skipped: long enough to see stays and turns, the dependence
// a 5-minute window cannot show. A window is thinned to its first fix and
// then each fix at least g after the last kept one, g the larger of
// MinSpacing (10 s: GPS errors are correlated over a few seconds) and the
// span's duration over MaxPoints-1 (at most 200 points, so each fit stays
// cheap). A corpus with more than MaxWindows (240) windows is subsampled
// evenly in corpus order, the rest counted as SkipSubsampled.
//
// For each window, coordinate (east and north in metres, de-meaned) and
// kernel of Options.Kernels (default rbf, matern12, matern32, matern52),
// the kernel variance, the lengthscale and a nugget for GPS error are
// fitted by maximum likelihood on the window's even-numbered fixes, from
// three starting points. Nothing is normalised and the lengthscale is not
// capped: it ranges from 1 s to BoundFactor (100) times the window's
// duration, far beyond what the window can show. The kernel is then scored
// by the held-out log-likelihood log p(odd fixes | even fixes) at those
// hyperparameters (gp.HeldOutLogLikelihood), summed over the coordinates:
// how well it predicts a fix from its neighbours, the very inference a CIP
// adversary makes about a secret point. The kernel with the highest score
// wins the window. A coordinate fit is censored when its lengthscale is on
// the bound, or longer than the window with a likelihood at the bound
// within 1.92 nats of its optimum (a 95 % likelihood-ratio test cannot
// reject the bound): the data then says only that the lengthscale is long.
//
// The family lists every kernel that wins at least MinWinShare (5 %, the
// complement of the 95 % of held-out windows the family is held to cover)
// of the windows. Its lengthscales run from the fixes' spacing
// (twice Options.MinSpacing, 20 s: no fit resolves less) to the Family[1] (0.95)
// quantile of the kernel's pooled per-window, per-coordinate fits
// (censored fits counted at the longest bound, fits below the spacing at
// it), and at least to the longest window's duration (the longest
// lengthscale a trace can show); its variance floor is the 1 - Family[1]
// quantile of the fitted kernel variances. LeaveOnePersonOut measures the
// share of held-out windows the family covers (docs/fit.md). The nominal member (Prior.Kernel, Prior.Lengthscale)
// is the kernel that won most windows at its median fitted lengthscale.
// Report.Comparison has each kernel's wins, median held-out gain over the
// RBF, lengthscale percentiles and censored count.
//
// # Windows
//
// Each trace is cut into consecutive, disjoint windows. A window starts at
// a point (the first of the trace, then the first after the previous
// window) and its span is every following point up to MaxDuration (320 s)
// after it. A span is skipped, and counted by reason, if its timestamps do
// not strictly increase (SkipNotIncreasing), if a point has invalid
// coordinates (SkipInvalidPoint), or if it lasts less than MinDuration, 240
// s (SkipTooShort: a gap or the end of the trace came first); the next
// window then starts after the span. A span of at most MaxPoints (50) points
// is fitted whole. A longer one is thinned: its first point is kept, then
// each point at least g = MinDuration/(MaxPoints-1) = 4.9 s after the last
// kept one, up to MaxPoints points. g is the finest spacing at which 50
// points are sure to last 240 s: on regular sampling it is a stride (every
// point at 5 s, every 2nd at 3 s, every 3rd at 2 s, every 5th at 1 s), and
// on the 5 s GeoLife logs with bursts of 1-3 s fixes it drops the bursts
// and keeps the 5 s rate. A window of fewer than MinPoints (10) fitted points
// is skipped (SkipTooFewPoints), and the next window starts after the last
// fitted point. Report accounts for every point: fitted, thinned out, or in
// a skipped window.
//
// The authors' downsample_data instead keeps only the first 320 s of each
// GeoLife file, thinned to the points (m+1) floor(n/50) - 1, m < 50, and
// drops it if that lasts less than 240 s; PaperOptions.PaperWindows does the
// same, for reproduction. Their rule drops a window of 51 to 99 points
// whenever its first 50 points last less than 240 s (a mean period under
// 4.9 s). In the GeoLife logs those are the windows with bursts of 1-3 s
// fixes, slower than the others (median 5 km/h against 8 km/h) and with
// shorter fitted lengthscales (median 17 s against 24 s), so the default,
// which keeps them and uses every window of a trace, finds less dependence
// than the paper: l_eff quartiles 1.73 / 3.62 / 6.85 on GeoLife users
// 000-007, where the authors' windows give 2.45 / 5.32 / 8.00 and the paper
// (182 users) about 2.6 / 6.1 / 8.0. The authors also cap users at 50
// traces and drop users with fewer than 10; Fit does neither.
//
// # Fits
//
// Each window is projected to metres in the exact local ENU plane at its
// first point (a public choice; the authors used ECEF x and y, which mix
// east and north), and each coordinate is de-meaned. A window in which a
// coordinate varies by less than a millimetre is skipped (SkipConstant).
// Each coordinate is then fitted separately by maximum likelihood with
// gp.Fit and gp.PaperFitOptions: scaled to unit variance, kernel variance
// fixed at 1, lengthscale in [1, 40] s started at 8 s, nugget 0.0025, times
// in seconds from the window's first point. Its effective lengthscale is
// l_eff = lengthscale / P with P the window's median sampling period
// (gp.MedianPeriod, as the authors' code): the lengthscale in samples.
// Windows are fitted in parallel; results do not depend on scheduling.
//
// The nugget is fixed relative to each window's own variance. Where a
// window barely moves, GPS noise is a large share of that variance and the
// fit explains it with a lengthscale of about one sample: the mode of
// l_eff near 1 on GeoLife is such windows (median displacement 52 m over
// four minutes, against 270 m for the others). The paper's fits share this.
//
// # Choosing the prior
//
// A privacy guarantee under a prior class holds for the adversaries whose
// beliefs the class describes. Two directions are conservative. More
// dependence between points (a longer lengthscale) lets an adversary infer
// a secret point from its neighbours, so the prior takes a high quantile q
// (default 0.75) of the per-window l_eff, east and north pooled as the
// paper pools them, and converts it to seconds with the median sampling
// period of the windows: Lengthscale = l_eff(q) * P_median. A smaller prior
// variance makes the prior more informative about where the trace is, which
// also makes inference easier, so Variance is the 1-q quantile of the
// per-window, per-coordinate variances in square metres (before
// normalisation). Quantiles interpolate linearly between order statistics
// (numpy's default), like the paper's quartiles.
//
// The fitted lengthscale is bounded by 40 s, so many windows end on that
// bound (Report.AtUpperBound): at GeoLife's 5 s period that is l_eff = 8,
// which is exactly the upper quartile of the paper's fits. A q above the
// share of windows below the bound then returns the bound, not a measured
// dependence, and Report.Censored says so.
//
// References:
//   - C. Meehan and K. Chaudhuri, Location Trace Privacy Under Conditional
//     Priors, AISTATS 2021; code at
//     github.com/casey-meehan/location_trace_privacy.
//   - R. J. Hyndman and Y. Fan, Sample quantiles in statistical packages,
//     The American Statistician 50(4), 1996.
package prior
