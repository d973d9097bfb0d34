package cip

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// A lower bound on the noise that certifies places (issue 31, items 5-6).
//
// Every Gaussian mechanism of tracepriv's form adds, per Earth-centred
// coordinate, independent noise N(0, SigmaG) with the same SigmaG > 0. A
// window S moved rigidly by r against a member has the exact loss (E1)
// lambda/2 r^2 v_S' (C_S + SigmaG)^-1 v_S (r^2 split among the coordinates
// at worst all in one), so eps_S <= epsilon is C_S + SigmaG >= c v_S v_S',
// c = lambda r^2/(2 epsilon) (Schur). By Cauchy-Schwarz, for any w_S,
// w_S' SigmaG w_S >= c (v_S'w_S)^2 - w_S' C_S w_S, and summing with weights
// a_S >= 0, tr(SigmaG W) >= sum_S a_S g_S with W = sum_S a_S w_S w_S' and
// tr(SigmaG W) <= tr(SigmaG) lambda_max(W). This is weak duality for the
// semidefinite program min tr(SigmaG) s.t. every window certified; the
// choice of w_S and a_S only decides how close to its optimum the bound
// gets (docs/robust-cip.md section 5, "No Gaussian noise does it for
// less").

// PlaceWindow is a contiguous window of a trace's points, First to Last
// inclusive (indices into the timestamps).
type PlaceWindow struct {
	First, Last int
}

// StayWindows returns, for each duration (seconds) and every stride-th
// starting point, the shortest window starting there that lasts at least
// that long: the stays of that duration a places certificate must cover.
// Starts too late to last that long give none. stride < 1 means 1.
func StayWindows(times []float64, durations []float64, stride int) []PlaceWindow {
	stride = max(stride, 1)
	var out []PlaceWindow
	for _, d := range durations {
		end := 0
		for first := 0; first < len(times); first += stride {
			end = max(end, first)
			for end < len(times) && times[end]-times[first] < d {
				end++
			}
			if end == len(times) {
				break
			}
			out = append(out, PlaceWindow{First: first, Last: end})
		}
	}
	return out
}

// PlaceLowerMember is a Matérn member of the family a places certificate
// covers. The windows' conditional means do not depend on its variance;
// Variance is the least variance the certificate covers for this kernel
// (prior.Family.Variance): the adversary's own uncertainty, which lowers
// the loss. 0 means the certificate covers every variance, where that help
// vanishes in the limit.
type PlaceLowerMember struct {
	Kernel      string  `json:"kernel"`
	Lengthscale float64 `json:"lengthscale_s"`
	Variance    float64 `json:"variance_min_m2"`
}

// PlaceLowerRequest is what PlacesNoiseLowerBound bounds: a noise for
// Times that certifies every window of Windows, moved rigidly by up to
// Radius, against every member of Members within Epsilon at order Lambda.
type PlaceLowerRequest struct {
	Times                   []float64
	Members                 []PlaceLowerMember
	Windows                 []PlaceWindow
	Epsilon, Lambda, Radius float64
	// Trial, when set, is a noise covariance near the optimum (for example
	// the default design's): w_S = Trial^-1 v_S, the dual direction that
	// is exact when Trial is the optimal noise. nil takes w_S = v_S. Any
	// choice gives a valid bound.
	Trial mat.Symmetric
	// Steps is the number of fixed-point steps on the weights a_S after
	// the uniform start; the best bound over the steps is returned.
	Steps int
	// Rounds is the number of times the trial is rebuilt from the windows
	// (the square root of sum_S b_S v_S v_S', b_S reweighted by each
	// window's loss under the last trial); with Trial nil the first trial
	// is that root with equal weights. The best bound over the rounds is
	// returned.
	Rounds int
	// EveryWindow adds cutting planes: after each round every contiguous
	// window of the trace is scanned against every member under the
	// round's trial (EveryWindowQuad), and each member's CutWindows (0:
	// 200) worst windows not yet constrained, with every further one above
	// the target under the trial scaled for the constraints so far (at
	// most 2 CutWindows a member), join the next round's constraints. Any subset
	// of the windows gives a valid bound; the upper end
	// EveryWindowDesignRMSM then covers every window.
	EveryWindow bool
	CutWindows  int
	// StopBelowM ends the rounds once one raised the bound by less than
	// this (m of rms_noise_m); 0 runs every round.
	StopBelowM float64
}

// PlaceLowerRound is one round of PlacesNoiseLowerBound: its bound, its
// trial's upper ends, its constraints, and with EveryWindow the pairs
// (window, member) above the target under the trial scaled for the
// constraints (Above) and the cutting planes it added.
type PlaceLowerRound struct {
	Round                 int     `json:"round"`
	RMSNoiseM             float64 `json:"rms_noise_m"`
	DesignRMSM            float64 `json:"design_rms_noise_m"`
	EveryWindowDesignRMSM float64 `json:"every_window_design_rms_noise_m,omitempty"`
	Constraints           int     `json:"constraints"`
	Above                 int     `json:"above_target,omitempty"`
	Added                 int     `json:"added,omitempty"`
}

// PlaceLowerBound is a rigorous lower bound on the noise of every Gaussian
// mechanism that certifies a request's windows: tr(SigmaG)/n >=
// MeanVarianceM2 per coordinate, for every SigmaG > 0, whatever it is
// designed from.
type PlaceLowerBound struct {
	// MeanVarianceM2 bounds the mean per-point noise variance per
	// coordinate from below (m^2); RMSNoiseM is sqrt(2 MeanVarianceM2),
	// the certificate's rms_noise_m convention (two plane coordinates).
	MeanVarianceM2 float64 `json:"mean_variance_m2"`
	RMSNoiseM      float64 `json:"rms_noise_m"`
	// Numerator is sum_S a_S g_S (rounded down) and LambdaMax the rigorous
	// upper bound on lambda_max(W) it is divided by (with n); the weights
	// are scaled to max a_S = 1.
	Numerator float64 `json:"numerator_m2"`
	LambdaMax float64 `json:"lambda_max_upper"`
	// LambdaMaxEstimate is the largest eigenvalue's estimate from below
	// (power iteration) the certified bound was searched from.
	LambdaMaxEstimate float64 `json:"lambda_max_estimate"`
	// Points, Windows and Constraints: the trace's points, the windows
	// asked, and the (window, member) pairs that entered (g_S > 0).
	Points      int `json:"points"`
	Windows     int `json:"windows"`
	Constraints int `json:"constraints"`
	// DesignRMSM is the least rms_noise_m over the rounds of a trial noise
	// scaled until every window's loss against every member is within the
	// target (bounded above by v_S' G^-1 v_S, so without the adversary's
	// own uncertainty): a noise that certifies these windows, so the least
	// noise is between RMSNoiseM and it. 0 without a trial.
	DesignRMSM float64 `json:"design_rms_noise_m"`
	// Round and Step are the trial's round and the weights' step that
	// gave the bound (0: the first trial, uniform weights).
	Round int `json:"round"`
	Step  int `json:"step"`
	// Steps holds the bound in m^2 after each step.
	Steps []float64 `json:"steps_m2"`
	// MemberShares[k] is the share of the bound's numerator (sum_S a_S
	// g_S) that member k's constraints carry, and WindowShares[j] window
	// j's over every member: the constraints the dual weights lean on,
	// by which a cheaper subset is chosen.
	MemberShares []float64 `json:"member_shares"`
	WindowShares []float64 `json:"-"`
	// With EveryWindow: EveryWindowDesignRMSM is the least rms_noise_m
	// over the rounds of a trial scaled until v_S' G^-1 v_S of every
	// contiguous window against every member is within the target (a
	// noise that certifies every window of these timestamps against these
	// members, every variance); Cuts the cutting planes added and CutShare
	// their share of the best bound's numerator.
	EveryWindowDesignRMSM float64 `json:"every_window_design_rms_noise_m,omitempty"`
	Cuts                  int     `json:"cut_constraints,omitempty"`
	CutShare              float64 `json:"cut_share,omitempty"`
	// History holds each round.
	History []PlaceLowerRound `json:"rounds"`
	// worstQ is the largest v_S' G^-1 v_S over the constraints.
	worstQ float64
}

// PlacesNoiseLowerBound returns a rigorous lower bound on the mean
// per-point noise variance (per coordinate) of every Gaussian noise SigmaG
// > 0, the same in each Earth-centred coordinate, under which every
// window of req.Windows moved rigidly by up to req.Radius has an exact
// (E1) loss within req.Epsilon at order req.Lambda against every member of
// req.Members (Matérn 1/2, 3/2, 5/2; every variance at least the member's
// Variance). No design of tracepriv's form, whatever its shape and even
// one built for these very timestamps, certifies those places with less
// noise. It is weak duality (see the comment at the top of this file):
// the bound is sum_S a_S (c (v_S'w_S)^2 - w_S' C_S w_S) / (n lambda_max(W)),
// with v_S the member's conditional mean of the trace given X_S = 1 (its
// Kalman recursion with exact observations, forwards and mirrored),
// w_S' C_S w_S bounded above by Variance w_o' R w_o (C_S <= Variance R on
// the other points, zero on S), and lambda_max(W) bounded above
// rigorously: a Cholesky factorisation of mu I - W that succeeds in
// floating point, plus Higham's backward-error bound and the rounding of
// forming W, or Gershgorin's bound when that is smaller. A power-iteration
// estimate would be a lower estimate and is only where the search starts.
//
// Any directions w_S and weights a_S give a valid bound; req.Trial,
// Rounds and Steps choose them (w_S = G^-1 v_S for a trial G, the rounds
// rebuilding G = (sum_S b_S v_S v_S')^(1/2), the optimum's form), and the
// best over the rounds is returned, with DesignRMSM, the upper end the
// same trials give. v_S is computed in floating point, not enclosed
// (checked against mpmath conditioning in the tests, at 20 s and at
// 7,200 s, where the process noise is integrated, not differenced).
//
// With req.EveryWindow each round also scans every contiguous window
// against every member under its trial (EveryWindowQuad, O(n^2 d^3) per
// member after one inverse) and adds the worst as cutting planes; the
// bound stays valid for any subset, and EveryWindowDesignRMSM is an upper
// end for every window.
//
// Each round costs an n x n eigendecomposition, a solve with n x
// (windows x members) right-hand sides and a few n x n factorisations:
// minutes for a 1,500-point trace and its stays from every point.
func PlacesNoiseLowerBound(req PlaceLowerRequest) (PlaceLowerBound, error) {
	return placesLowerBound(req, lowerHooks{})
}

// lowerHooks lets tests build deliberately broken variants (the negative
// controls): lambdaMax replaces the rigorous upper bound, dropC drops the
// adversary's conditional covariance whatever the member's variance.
type lowerHooks struct {
	lambdaMax func(w *mat.SymDense) float64
	dropC     bool
	// constraint, when set, sees each constraint that enters: its unit
	// direction u_S and gain g_S (tests check u_S' SigmaG u_S >= g_S for a
	// certified SigmaG, which Cauchy-Schwarz promises).
	constraint func(u []float64, g float64)
	// bestTrial, when set, sees the trial of each round that raised the
	// bound.
	bestTrial func(g mat.Symmetric)
	// scaleV, when set, multiplies each window's v_S by its value (a
	// wrong conditional mean); routeC keeps the adversary's covariance
	// on the whole trace's window, whose C_S is zero.
	scaleV func(w PlaceWindow) float64
	routeC bool
	// everyTrial, when set, sees each round's trial and its every-window
	// upper end (EveryWindow).
	everyTrial func(g mat.Symmetric, rms float64)
}

// lowerPair is one constraint: member k against window w, class the
// index of w in the request's windows (-1 for a cutting plane's).
type lowerPair struct {
	k, class int
	w        PlaceWindow
}

func placesLowerBound(req PlaceLowerRequest, hooks lowerHooks) (PlaceLowerBound, error) {
	n := len(req.Times)
	tl, err := TargetLossFactor(req.Epsilon, req.Lambda, req.Radius, 1)
	if err != nil {
		return PlaceLowerBound{}, err
	}
	if err := checkLowerRequest(req); err != nil {
		return PlaceLowerBound{}, err
	}
	if req.CutWindows < 0 || req.StopBelowM < 0 {
		return PlaceLowerBound{}, param.Invalid("cut_windows", float64(req.CutWindows), "the cutting planes' windows per member and the stopping step must be at least 0")
	}
	c := 1 / tl
	models := make([]*lowerModel, len(req.Members))
	var pairs []lowerPair
	for k, mem := range req.Members {
		lm, err := newLowerModel(mem, req.Times)
		if err != nil {
			return PlaceLowerBound{}, err
		}
		models[k] = lm
		for j, w := range req.Windows {
			if k > 0 && w.First == 0 && w.Last == n-1 {
				// The whole trace's v is 1 and its C_S zero for every
				// member: one column is the route's constraint.
				continue
			}
			pairs = append(pairs, lowerPair{k: k, class: j, w: w})
		}
	}
	// V holds v_S, one column per pair.
	v := mat.NewDense(n, len(pairs), nil)
	variances := make([]float64, len(pairs))
	fillPairs(v, pairs, 0, variances, req, models, hooks)
	trial := req.Trial
	if trial != nil && trial.SymmetricDim() != n {
		return PlaceLowerBound{}, param.Invalid("trial", float64(trial.SymmetricDim()), fmt.Sprintf("the trial noise must be %d x %d, one row per timestamp", n, n))
	}
	best := PlaceLowerBound{Points: n, Windows: len(req.Windows)}
	added := 0
	weights := make([]float64, len(pairs))
	for s := range weights {
		weights[s] = 1
	}
	for round := 0; round <= req.Rounds; round++ {
		if req.Trial == nil || round > 0 {
			// The optimal noise is (sum_S b_S v_S v_S')^(1/2) for the
			// optimal dual weights b_S (stationarity: sum_S a_S u_S u_S' =
			// I with u_S = SigmaG^-1 v_S); the windows whose loss under the
			// last trial is largest gain weight.
			if round > 0 {
				if err := reweightTrial(trial, v, weights); err != nil {
					return best, err
				}
			}
			if trial, err = sqrtTrial(v, weights); err != nil {
				return best, err
			}
		}
		var init []float64
		if req.Trial == nil || round > 0 {
			init = weights
		}
		b, err := lowerBoundWith(req, hooks, c, v, variances, pairs, models, trial, init)
		if err != nil {
			return best, err
		}
		b.Round = round
		hist := PlaceLowerRound{Round: round, RMSNoiseM: b.RMSNoiseM, DesignRMSM: b.DesignRMSM, Constraints: b.Constraints}
		designed := b.DesignRMSM
		if round > 0 && best.DesignRMSM > 0 && (designed == 0 || best.DesignRMSM < designed) {
			designed = best.DesignRMSM
		}
		every := best.EveryWindowDesignRMSM
		var cuts []lowerPair
		if req.EveryWindow && trial != nil {
			var cut windowCuts
			if cut, err = cutWindows(req, c, models, pairs, trial, b.worstQ); err != nil {
				return best, err
			}
			hist.EveryWindowDesignRMSM, hist.Above = cut.design, cut.above
			if hooks.everyTrial != nil {
				hooks.everyTrial(trial, cut.design)
			}
			if every == 0 || cut.design < every {
				every = cut.design
			}
			if round < req.Rounds {
				cuts = cut.pairs
			}
			hist.Added = len(cuts)
		}
		prev := best.RMSNoiseM
		if b.MeanVarianceM2 > best.MeanVarianceM2 || round == 0 {
			hist0 := best.History
			best = b
			best.History = hist0
			if hooks.bestTrial != nil && trial != nil {
				hooks.bestTrial(trial)
			}
		}
		best.DesignRMSM, best.EveryWindowDesignRMSM = designed, every
		best.History = append(best.History, hist)
		if len(cuts) > 0 {
			// The cutting planes join with the mean weight; the next
			// round's reweighting by their loss lifts the worst.
			mean := 0.0
			for _, w := range weights {
				mean += w / float64(len(weights))
			}
			m0 := len(pairs)
			pairs = append(pairs, cuts...)
			grown := mat.NewDense(n, len(pairs), nil)
			grown.Slice(0, n, 0, m0).(*mat.Dense).Copy(v)
			v = grown
			variances = append(variances, make([]float64, len(cuts))...)
			fillPairs(v, pairs, m0, variances, req, models, hooks)
			for range cuts {
				weights = append(weights, mean)
			}
			added += len(cuts)
		}
		best.Cuts = added
		if req.StopBelowM > 0 && round > 0 && best.RMSNoiseM-prev < req.StopBelowM {
			break
		}
	}
	return best, nil
}

// fillPairs writes v_S (and its member's variance) into v's columns from
// `from` on, for pairs[from:].
func fillPairs(v *mat.Dense, pairs []lowerPair, from int, variances []float64, req PlaceLowerRequest, models []*lowerModel, hooks lowerHooks) {
	n, _ := v.Dims()
	col := make([]float64, n)
	for s := from; s < len(pairs); s++ {
		pr := pairs[s]
		clear(col)
		models[pr.k].conditionalMean(pr.w, col)
		if hooks.scaleV != nil {
			f := hooks.scaleV(pr.w)
			for i := range col {
				col[i] *= f
			}
		}
		v.SetCol(s, col)
		variances[s] = req.Members[pr.k].Variance
	}
}

// windowCuts is one round's every-window scan: the cutting planes to add,
// the trial's upper end for every window, and how many (window, member)
// pairs were above the target under the trial scaled for the constraints.
type windowCuts struct {
	pairs  []lowerPair
	design float64
	above  int
}

// cutWindows scans every contiguous window against every member under
// the trial. Each member's CutWindows worst windows not yet constrained
// join, and every further one above worstQ (the largest v_S' G^-1 v_S
// over the constraints: the target, once the trial is scaled for them),
// at most 2 CutWindows. The upper end is the trial scaled until the
// largest over every window is within the target; the largest few per
// member are recomputed by a dense solve, and the larger value kept.
func cutWindows(req PlaceLowerRequest, c float64, models []*lowerModel, pairs []lowerPair, trial mat.Symmetric, worstQ float64) (windowCuts, error) {
	const recheck = 5
	n := len(req.Times)
	f, err := gp.Factorize(trial, 0)
	if err != nil {
		return windowCuts{}, fmt.Errorf("trial noise: %w", err)
	}
	scan := newWindowScan(f)
	per := req.CutWindows
	if per == 0 {
		per = 200
	}
	var out windowCuts
	worst := worstQ
	v := make([]float64, n)
	for k, lm := range models {
		skip := map[PlaceWindow]bool{}
		for _, p := range pairs {
			if p.k == k {
				skip[p.w] = true
			}
		}
		h := &worstWindows{k: 2 * per, skip: skip, thr: worstQ}
		scan.run(lm, func(a, b int, q float64) { h.visit(PlaceWindow{First: a, Last: b}, q) })
		worst = math.Max(worst, h.max)
		out.above += h.above
		slices.SortFunc(h.items, func(x, y scoredWindow) int { return cmp.Compare(y.q, x.q) })
		for i, it := range h.items {
			if i < recheck {
				clear(v)
				lm.conditionalMean(it.w, v)
				vv := mat.NewVecDense(n, v)
				var x mat.VecDense
				if err := f.SolveVecTo(&x, vv); err != nil {
					return out, fmt.Errorf("trial noise: %w", err)
				}
				worst = math.Max(worst, mat.Dot(vv, &x))
			}
			if i < per || it.q > worstQ {
				out.pairs = append(out.pairs, lowerPair{k: k, class: -1, w: it.w})
			}
		}
	}
	tr := mat.Trace(trial) + float64(n)*f.Jitter()
	out.design = math.Sqrt(2 * c * worst * tr / float64(n))
	return out, nil
}

// sqrtTrial returns (V diag(b) V')^(1/2), its eigenvalues kept at least
// 10^-9 of the largest (any positive definite trial gives a valid bound).
func sqrtTrial(v *mat.Dense, b []float64) (*mat.SymDense, error) {
	n, m := v.Dims()
	bv := mat.NewDense(n, m, nil)
	for s := range m {
		sq := math.Sqrt(b[s])
		for i := range n {
			bv.Set(i, s, v.At(i, s)*sq)
		}
	}
	g := mat.NewSymDense(n, nil)
	g.SymOuterK(1, bv)
	var e mat.EigenSym
	if !e.Factorize(g, true) {
		return nil, errors.New("trial noise: eigendecomposition failed")
	}
	vals := e.Values(nil)
	var q mat.Dense
	e.VectorsTo(&q)
	floor := 1e-9 * vals[len(vals)-1]
	for i := range vals {
		vals[i] = math.Sqrt(math.Max(vals[i], floor))
	}
	qs := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			qs.Set(i, j, q.At(i, j)*math.Sqrt(vals[j]))
		}
	}
	out := mat.NewSymDense(n, nil)
	out.SymOuterK(1, qs)
	return out, nil
}

// reweightTrial multiplies each b_S by the cube of its loss v_S' trial^-1
// v_S over the mean: a fixed-point step towards equal (tight) losses,
// where the bound and the scaled trial meet (the cube converges in about
// half the rounds of the plain ratio on the tests' trace).
func reweightTrial(trial mat.Symmetric, v *mat.Dense, b []float64) error {
	f, err := gp.Factorize(trial, 0)
	if err != nil {
		return fmt.Errorf("trial noise: %w", err)
	}
	var x mat.Dense
	if err := f.SolveTo(&x, v); err != nil {
		return err
	}
	_, m := v.Dims()
	mean := 0.0
	loss := make([]float64, m)
	for s := range m {
		loss[s] = mat.Dot(v.ColView(s), x.ColView(s))
		mean += loss[s] / float64(m)
	}
	for s := range m {
		b[s] *= math.Pow(loss[s]/mean, 3)
	}
	return nil
}

// lowerBoundWith is the bound for the directions w_S = trial^-1 v_S (v_S
// when trial is nil). With init (the b_S of a square-root trial) the
// weights start at a_S = b_S ||w_S||^2, which makes W = I exactly when
// trial = (sum_S b_S v_S v_S')^(1/2); else uniform. Steps fixed-point
// steps on the weights follow.
func lowerBoundWith(req PlaceLowerRequest, hooks lowerHooks, c float64, v *mat.Dense, variances []float64, pairs []lowerPair, models []*lowerModel, trial mat.Symmetric, init []float64) (PlaceLowerBound, error) {
	n, m := v.Dims()
	design, worst := 0.0, 0.0
	u := mat.DenseCopyOf(v)
	if trial != nil {
		f, err := gp.Factorize(trial, 0)
		if err != nil {
			return PlaceLowerBound{}, fmt.Errorf("trial noise: %w", err)
		}
		if err := f.SolveTo(u, v); err != nil {
			return PlaceLowerBound{}, fmt.Errorf("trial noise: %w", err)
		}
		// The trial scaled so that every window's v_S' G^-1 v_S, which
		// is at least its loss factor (C_S >= 0), is within the target:
		// a noise that certifies every window against every member.
		for s := range m {
			worst = math.Max(worst, mat.Dot(v.ColView(s), u.ColView(s)))
		}
		tr := mat.Trace(trial) + float64(n)*f.Jitter()
		design = math.Sqrt(2 * c * worst * tr / float64(n))
	}
	var err error
	// Unit directions u_S and their gains g_S = c (v_S'u_S)^2 - u_S'C_S u_S
	// (the latter bounded above); only positive gains enter.
	var cols []int
	var gains, start []float64
	uo := make([]float64, n)
	for s := range m {
		col := mat.Col(nil, s, u)
		norm := blas64.Nrm2(blas64.Vector{N: n, Data: col, Inc: 1})
		if !(norm > 0) || math.IsInf(norm, 0) {
			continue
		}
		for i := range col {
			col[i] /= norm
		}
		u.SetCol(s, col)
		dot := 0.0
		for i := range n {
			dot += col[i] * v.At(i, s)
		}
		gain := c * dot * dot
		if vr := variances[s]; vr > 0 && !hooks.dropC {
			w := pairs[s].w
			copy(uo, col)
			if !hooks.routeC || w.First > 0 || w.Last < n-1 {
				for i := w.First; i <= w.Last; i++ {
					uo[i] = 0
				}
			}
			gain -= vr * models[pairs[s].k].quad(uo)
		}
		if gain > 0 {
			if hooks.constraint != nil {
				hooks.constraint(col, gain)
			}
			cols = append(cols, s)
			gains = append(gains, gain)
			a0 := 1.0
			if init != nil {
				a0 = init[s] * norm * norm
			}
			start = append(start, a0)
		}
	}
	out := PlaceLowerBound{Points: n, Windows: len(req.Windows), Constraints: len(cols), DesignRMSM: design, worstQ: worst}
	if len(cols) == 0 {
		return out, nil
	}
	us := mat.NewDense(n, len(cols), nil)
	for j, s := range cols {
		us.SetCol(j, mat.Col(nil, s, u))
	}
	a := start
	b := mat.NewDense(n, len(cols), nil)
	w := mat.NewSymDense(n, nil)
	for step := 0; step <= req.Steps; step++ {
		b.Copy(us)
		sumA := 0.0
		for j := range a {
			sq := math.Sqrt(a[j])
			sumA += a[j]
			for i := range n {
				b.Set(i, j, b.At(i, j)*sq)
			}
		}
		w.SymOuterK(1, b)
		var lmax, est float64
		if hooks.lambdaMax != nil {
			lmax = hooks.lambdaMax(w)
		} else {
			// Forming W rounds each entry of sum_S a_S u_S u_S' (and b's
			// square roots) by at most gamma_{m+2} sum_S a_S |u_S||u_S|',
			// whose spectral norm is at most gamma_{m+2} sum_S a_S.
			lmax, est, err = lambdaMaxUpper(w, gamma(len(cols)+2)*sumA)
			if err != nil {
				return out, err
			}
		}
		num := 0.0
		slack := 0.0
		for j, g := range gains {
			num += a[j] * g
			slack += a[j] * (math.Abs(g) + c)
		}
		// Rounded down: the sum's own error and the gains' (each below
		// a few ulps of c (v'u)^2 <= c n).
		num -= gamma(len(cols)+4*n+8) * slack * float64(n)
		bound := math.Max(0, num) / (float64(n) * lmax)
		out.Steps = append(out.Steps, bound)
		if bound > out.MeanVarianceM2 {
			out.MeanVarianceM2, out.Numerator, out.LambdaMax, out.LambdaMaxEstimate, out.Step = bound, num, lmax, est, step
			out.MemberShares = make([]float64, len(req.Members))
			out.WindowShares = make([]float64, len(req.Windows))
			total := 0.0
			for j, g := range gains {
				total += a[j] * g
			}
			out.CutShare = 0
			for j, s := range cols {
				sh := a[j] * gains[j] / total
				out.MemberShares[pairs[s].k] += sh
				if cl := pairs[s].class; cl >= 0 {
					out.WindowShares[cl] += sh
				} else {
					out.CutShare += sh
				}
			}
		}
		if step == req.Steps {
			break
		}
		// A fixed-point step towards W proportional to I on the windows'
		// span (what the optimal dual weights make it): each weight grows
		// with its gain over the load W puts on its direction.
		var wu mat.Dense
		wu.Mul(w, us)
		top := 0.0
		for j := range a {
			load := 0.0
			for i := range n {
				load += us.At(i, j) * wu.At(i, j)
			}
			a[j] *= math.Sqrt(gains[j] / load)
			top = math.Max(top, a[j])
		}
		for j := range a {
			a[j] /= top
		}
	}
	out.RMSNoiseM = math.Sqrt(2 * out.MeanVarianceM2)
	return out, nil
}

func checkLowerRequest(req PlaceLowerRequest) error {
	n := len(req.Times)
	if n < 2 {
		return param.Invalid("times", float64(n), "at least two timestamps are needed")
	}
	for i := 1; i < n; i++ {
		if !(req.Times[i] >= req.Times[i-1]) {
			return param.Invalid("times", req.Times[i], fmt.Sprintf("timestamp %d is before timestamp %d: sort the trace by time", i, i-1))
		}
	}
	if len(req.Members) == 0 || len(req.Windows) == 0 {
		return param.Invalid("windows", float64(len(req.Windows)), "at least one member and one window are needed")
	}
	for _, w := range req.Windows {
		if w.First < 0 || w.Last < w.First || w.Last >= n {
			return param.Invalid("windows", float64(w.Last), fmt.Sprintf("window [%d, %d] is not within the trace's %d points", w.First, w.Last, n))
		}
	}
	for _, mem := range req.Members {
		if err := param.First(param.Positive("lengthscale", mem.Lengthscale), param.NonNegative("variance", mem.Variance)); err != nil {
			return err
		}
	}
	if req.Steps < 0 {
		return param.Invalid("steps", float64(req.Steps), "the number of weight steps must be at least 0")
	}
	return nil
}

// gamma is Higham's gamma_k = k u/(1 - k u), u the unit roundoff.
func gamma(k int) float64 {
	const u = 0x1p-53
	return float64(k) * u / (1 - float64(k)*u)
}

// lambdaMaxUpper returns a rigorous upper bound on the largest eigenvalue
// of the symmetric PSD matrix w + E for every E with ||E||_2 <= extra, and
// the power-iteration estimate it searched from. mu is certified when the
// Cholesky factorisation of mu I - w succeeds in floating point: the
// computed R^T R = mu I - w + dH with |dH| <= gamma_{n+1} |R^T||R| (Higham,
// Accuracy and Stability of Numerical Algorithms, Theorem 10.3), so
// lambda_max(w) <= mu + gamma_{n+1} ||R||_F^2 (+ the rounding of mu I - w's
// diagonal). Gershgorin's bound (the largest absolute row sum) is taken
// when it is smaller.
func lambdaMaxUpper(w *mat.SymDense, extra float64) (upper, estimate float64, err error) {
	n := w.SymmetricDim()
	gersh, maxDiag := 0.0, 0.0
	for i := range n {
		s := 0.0
		for j := range n {
			s += math.Abs(w.At(i, j))
		}
		gersh = math.Max(gersh, s)
		maxDiag = math.Max(maxDiag, w.At(i, i))
	}
	gersh = gersh*(1+gamma(n)) + extra
	estimate = powerEstimate(w, 60)
	h := mat.NewSymDense(n, nil)
	var chol mat.Cholesky
	try := func(mu float64) (float64, bool) {
		h.CopySym(w)
		h.ScaleSym(-1, h)
		for i := range n {
			h.SetSym(i, i, h.At(i, i)+mu)
		}
		if !chol.Factorize(h) {
			return 0, false
		}
		fro := 0.0
		r := chol.RawU().(*mat.TriDense).RawTriangular()
		for i := range n {
			for j := i; j < n; j++ {
				x := r.Data[i*r.Stride+j]
				fro += x * x
			}
		}
		up := mu + gamma(n+1)*fro*(1+gamma(n+2)) + 0x1p-52*(mu+maxDiag) + extra
		return up * (1 + 0x1p-50), true
	}
	lo, hi := estimate, 0.0
	best := gersh
	for f := 1e-4; ; f *= 4 {
		mu := estimate * (1 + f)
		if mu >= gersh {
			return gersh, estimate, nil
		}
		if up, ok := try(mu); ok {
			hi, best = mu, math.Min(best, up)
			break
		}
		lo = mu
	}
	// Tighten: bisect between the last failure and the first success.
	for range 5 {
		mu := (lo + hi) / 2
		if up, ok := try(mu); ok {
			hi, best = mu, math.Min(best, up)
		} else {
			lo = mu
		}
	}
	if !(best > 0) || math.IsInf(best, 0) {
		return 0, estimate, errors.New("no upper bound on the largest eigenvalue of the dual weights' matrix")
	}
	return best, estimate, nil
}

// powerEstimate estimates the largest eigenvalue of the PSD matrix w from
// below (Rayleigh quotients of power iteration from the ones vector).
func powerEstimate(w *mat.SymDense, iters int) float64 {
	n := w.SymmetricDim()
	x := mat.NewVecDense(n, nil)
	for i := range n {
		x.SetVec(i, 1+float64(i%7)*1e-3)
	}
	var y mat.VecDense
	est := 0.0
	for range iters {
		x.ScaleVec(1/mat.Norm(x, 2), x)
		y.MulVec(w, x)
		est = math.Max(est, mat.Dot(x, &y))
		x.CopyVec(&y)
		if mat.Norm(x, 2) == 0 {
			break
		}
	}
	return est
}

// lowerModel is a unit-variance Matérn member's state-space form at a
// trace's timestamps: the transition over each gap.
type lowerModel struct {
	d    int
	pinf []float64   // d x d
	a, q [][]float64 // per gap i (i to i+1), d x d row-major
	n    int
}

func newLowerModel(mem PlaceLowerMember, ts []float64) (*lowerModel, error) {
	k, err := gp.NewKernel(mem.Kernel, 1, mem.Lengthscale, 0)
	if err != nil {
		return nil, err
	}
	sm, err := gp.StateSpace(k)
	if err != nil {
		return nil, param.Invalid("kernel", mem.Kernel, fmt.Sprintf("%s: the lower bound needs a Matérn member (matern12, matern32, matern52): %v", mem.Kernel, err))
	}
	d := sm.StateDim()
	lm := &lowerModel{d: d, n: len(ts), pinf: flat(sm.Pinf())}
	cache := map[float64]int{}
	for i := 0; i+1 < len(ts); i++ {
		dt := ts[i+1] - ts[i]
		if j, ok := cache[dt]; ok {
			lm.a, lm.q = append(lm.a, lm.a[j]), append(lm.q, lm.q[j])
			continue
		}
		a, q := sm.Transition(dt)
		cache[dt] = i
		lm.a, lm.q = append(lm.a, flat(a)), append(lm.q, flat(q))
	}
	return lm, nil
}

func flat(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := range r {
		for j := range c {
			out = append(out, m.At(i, j))
		}
	}
	return out
}

// conditionalMean writes into v the member's conditional mean of f at
// every timestamp given f = 1 on the window: 1 on it, and on each side the
// extension from the state at the window's end nearest, conditioned on
// the window by a Kalman recursion with exact observations. Before the
// window the same recursion runs on the mirrored times (a stationary
// Matérn process reversed in time has the same law).
func (lm *lowerModel) conditionalMean(w PlaceWindow, v []float64) {
	for i := w.First; i <= w.Last; i++ {
		v[i] = 1
	}
	lm.sweep(w.First, w.Last, +1, v)
	lm.sweep(w.Last, w.First, -1, v)
}

// sweep conditions on f = 1 at from, from+dir, ..., to, then extends the
// mean past to in direction dir. The gap between points i and i+dir is
// gap index min(i, i+dir).
func (lm *lowerModel) sweep(from, to, dir int, v []float64) {
	d := lm.d
	x := make([]float64, d)
	lm.condStates(from, to, dir, func(i int, m []float64) {
		if i == to {
			copy(x, m)
		}
	})
	y := make([]float64, d)
	for i := to; i+dir >= 0 && i+dir < lm.n; i += dir {
		applyState(lm.a[min(i, i+dir)], x, y, d)
		v[i+dir] = x[0]
	}
}

// condStates runs the Kalman recursion with exact observations f = 1 at
// from, from+dir, ..., to and calls fn at each of those points with the
// state's conditional mean there given the points so far (m is reused).
func (lm *lowerModel) condStates(from, to, dir int, fn func(i int, m []float64)) {
	d := lm.d
	m := make([]float64, d)
	p := make([]float64, d*d)
	tmp := make([]float64, d*d)
	// Condition the stationary state on f = 1.
	for i := range d {
		m[i] = lm.pinf[i*d] / lm.pinf[0]
		for j := range d {
			p[i*d+j] = lm.pinf[i*d+j] - lm.pinf[i*d]*lm.pinf[j*d]/lm.pinf[0]
		}
	}
	clampObserved(m, p, d)
	fn(from, m)
	for i := from; i != to; i += dir {
		g := min(i, i+dir)
		a, q := lm.a[g], lm.q[g]
		propagate(a, q, m, p, tmp, d)
		s := p[0]
		scale := 0.0
		for j := range d {
			scale = math.Max(scale, p[j*d+j])
		}
		if s > 1e-13*scale {
			r := 1 - m[0]
			for j := range d {
				m[j] += p[j*d] / s * r
			}
			for j := range d {
				for k := range d {
					tmp[j*d+k] = p[j*d+k] - p[j*d]*p[k]/s
				}
			}
			copy(p, tmp)
		}
		clampObserved(m, p, d)
		fn(i+dir, m)
	}
}

// clampObserved sets the observed f to exactly 1 and its variance to 0.
func clampObserved(m, p []float64, d int) {
	m[0] = 1
	for j := range d {
		p[j] = 0
		p[j*d] = 0
	}
}

// smallMul writes into dst (d x c, row-major) A b, or A' b when trans
// (A d x d, b d x c; dst must not alias b).
func smallMul(dst, a, b []float64, d, c int, trans bool) {
	for j := range d {
		for k := range c {
			s := 0.0
			for l := range d {
				if trans {
					s += a[l*d+j] * b[l*c+k]
				} else {
					s += a[j*d+l] * b[l*c+k]
				}
			}
			dst[j*c+k] = s
		}
	}
}

// propagate replaces (m, p) by (A m, A p A' + Q), symmetrised.
func propagate(a, q, m, p, tmp []float64, d int) {
	applyState(a, m, make([]float64, d), d)
	smallMul(tmp, a, p, d, d, false) // tmp = A p
	// p = tmp A' + Q
	for j := range d {
		for k := range d {
			s := q[j*d+k]
			for l := range d {
				s += tmp[j*d+l] * a[k*d+l]
			}
			p[j*d+k] = s
		}
	}
	for j := range d {
		for k := j + 1; k < d; k++ {
			s := (p[j*d+k] + p[k*d+j]) / 2
			p[j*d+k], p[k*d+j] = s, s
		}
	}
}

// quad returns u' R u for the member's unit-variance Gram matrix R at the
// timestamps, in O(n d^2): k(t_i, t_j) = e1' A(t_i - t_j) Pinf e1 for
// t_i >= t_j, summed by a forward and a backward recursion.
func (lm *lowerModel) quad(u []float64) float64 {
	d, n := lm.d, lm.n
	ru := make([]float64, n)
	z := make([]float64, d)
	y := make([]float64, d)
	pe := make([]float64, d)
	for j := range d {
		pe[j] = lm.pinf[j*d]
	}
	for i := range n {
		if i > 0 {
			applyState(lm.a[i-1], z, y, d)
		}
		for j := range d {
			z[j] += pe[j] * u[i]
		}
		ru[i] = z[0]
	}
	clear(z)
	for i := n - 1; i >= 0; i-- {
		if i < n-1 {
			applyState(lm.a[i], z, y, d)
		}
		for j := range d {
			z[j] += pe[j] * u[i]
		}
		ru[i] += z[0] - lm.pinf[0]*u[i]
	}
	s := 0.0
	for i := range n {
		s += u[i] * ru[i]
	}
	return s
}

// applyState replaces x by A x (A d x d row-major), through y.
func applyState(a, x, y []float64, d int) {
	for j := range d {
		y[j] = 0
		for k := range d {
			y[j] += a[j*d+k] * x[k]
		}
	}
	copy(x, y)
}
