package gp

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/optimize"
)

// Series is one observed trace coordinate: values Y at times T.
type Series struct {
	T, Y []float64
}

// Bound is a closed interval [Lo, Hi] for a positive hyperparameter, in
// natural units. Lo == Hi fixes the hyperparameter at that value.
type Bound struct{ Lo, Hi float64 }

// FitOptions configures Fit.
type FitOptions struct {
	// Bounds maps hyperparameter names (as in Kernel.Params) to bounds.
	// Unlisted hyperparameters range over [1e-5, 1e5], as in scikit-learn.
	Bounds map[string]Bound
	// Noise is the nugget variance added to the Gram matrix: fixed when
	// Noise.Lo == Noise.Hi, fitted otherwise (started at the geometric
	// mean of the bounds). The zero value fixes it at 1e-10, scikit-learn's
	// default alpha.
	Noise Bound
	// NoiseInit, if positive, is where a fitted nugget starts (clamped to
	// Noise); zero starts it at the geometric mean of its bounds.
	NoiseInit float64
	// Restarts is the number of extra starting points after the kernel's
	// own hyperparameters, placed deterministically (a Halton sequence in
	// log space) so fits are reproducible.
	Restarts int
	// Standardize de-means each series and scales it to unit variance
	// before fitting, as the paper's preprocessing does.
	Standardize bool
}

// PaperFitOptions returns the options of Meehan and Chaudhuri's
// preprocess_geolife.py: each series de-meaned and scaled to unit
// (population) variance, RBF variance fixed at 1, lengthscale in [1, 40]
// started at 8, nugget fixed at 0.0025 (scikit-learn's alpha in their
// code). Their times are seconds from the start of the trace, so the
// bounds are in seconds; l_eff is then the fitted lengthscale divided by
// the trace's median sampling period (MedianPeriod).
func PaperFitOptions() FitOptions {
	return FitOptions{
		Bounds:      map[string]Bound{"variance": {1, 1}, "lengthscale": {1, 40}},
		Noise:       Bound{0.0025, 0.0025},
		Standardize: true,
	}
}

// FitResult is the outcome of Fit.
type FitResult struct {
	Kernel Kernel
	Noise  float64
	// LogLikelihood is the summed log marginal likelihood at the optimum
	// (of the standardised data if Standardize was set).
	LogLikelihood float64
	// Starts is the number of optimisations run; Failed how many of them
	// ended in an error or a non-finite likelihood.
	Starts, Failed int
	// MaxJitter is the largest diagonal jitter any likelihood evaluation at
	// the optimum needed beyond the nugget.
	MaxJitter float64
}

// Fit maximises the sum over data of the log marginal likelihood of k plus
// a nugget, starting from k's hyperparameters and opts.Restarts other
// points, and returns the best fit. All series share the hyperparameters;
// fit series one at a time for per-trace fits as in the paper.
func Fit(k Kernel, data []Series, opts FitOptions) (*FitResult, error) {
	return fit(k, data, opts, true)
}

// fit is Fit, keeping each evaluation's work for the next (fitMemo) when
// memo is set; without it every evaluation is logLik's, the reference
// TestFitMemoSameAsLogLik compares the kept work against.
func fit(k Kernel, data []Series, opts FitOptions, memo bool) (*FitResult, error) {
	if err := Validate(k); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, errors.New("gp: fit: no data")
	}
	series, err := fitSeries(data, opts.Standardize)
	if err != nil {
		return nil, err
	}
	sp, err := newFitSpace(k, series, opts)
	if err != nil {
		return nil, err
	}
	if !memo {
		sp.memo = nil
	}

	best := &FitResult{LogLikelihood: math.Inf(-1)}
	var bestTheta []float64
	for _, st := range sp.starts(opts.Restarts) {
		best.Starts++
		th, ok := sp.optimizeFrom(st)
		if !ok {
			best.Failed++
			continue
		}
		ll, jit, err := sp.eval(th, nil)
		if err != nil || math.IsNaN(ll) || math.IsInf(ll, 0) {
			best.Failed++
			continue
		}
		if ll > best.LogLikelihood {
			best.LogLikelihood, best.MaxJitter = ll, jit
			bestTheta = th
		}
	}
	if bestTheta == nil {
		return nil, fmt.Errorf("gp: fit: all %d starts failed", best.Starts)
	}
	np := sp.np
	vals := make([]float64, np-1)
	for i := range vals {
		vals[i] = sp.natural(bestTheta, i)
	}
	kk, err := k.WithParams(vals)
	if err != nil {
		return nil, err
	}
	best.Kernel = kk
	best.Noise = sp.natural(bestTheta, np-1)
	return best, nil
}

// fitSeries checks the series and copies their values, standardised to
// zero mean and unit variance when asked for.
func fitSeries(data []Series, standardize bool) ([]Series, error) {
	series := make([]Series, len(data))
	for i, s := range data {
		if len(s.T) != len(s.Y) {
			return nil, fmt.Errorf("gp: fit: series %d has %d times and %d values", i, len(s.T), len(s.Y))
		}
		if len(s.T) < 2 {
			return nil, fmt.Errorf("gp: fit: series %d has %d points, need at least 2", i, len(s.T))
		}
		for j, y := range s.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(s.T[j]) || math.IsInf(s.T[j], 0) {
				return nil, fmt.Errorf("gp: fit: series %d point %d is not finite", i, j)
			}
		}
		y := append([]float64(nil), s.Y...)
		if standardize {
			m := floats.Sum(y) / float64(len(y))
			floats.AddConst(-m, y)
			sd := math.Sqrt(floats.Dot(y, y) / float64(len(y)))
			if sd > 0 {
				floats.Scale(1/sd, y)
			}
		}
		series[i] = Series{T: s.T, Y: y}
	}
	return series, nil
}

// fitSpace is the search space of one Fit: the kernel's hyperparameters
// and the nugget (the last parameter) in log space, with their bounds.
type fitSpace struct {
	k      Kernel
	series []Series
	np     int
	lo, hi []float64
	init   []float64
	// fixed holds the natural value of fixed parameters (0 when free).
	fixed []float64
	// free lists the parameters with hi > lo.
	free []int
	// memo keeps the last evaluation's work (nil: none kept).
	memo *fitMemo
}

// newFitSpace checks the bounds and builds the log-space search space.
func newFitSpace(k Kernel, series []Series, opts FitOptions) (*fitSpace, error) {
	ps := k.Params()
	np := len(ps) + 1 // the last parameter is the nugget
	lo, hi := make([]float64, np), make([]float64, np)
	init := make([]float64, np)
	for i, p := range ps {
		b, ok := opts.Bounds[p.Name]
		if !ok {
			b = Bound{1e-5, 1e5}
		}
		if !(b.Lo > 0) || b.Hi < b.Lo || math.IsInf(b.Hi, 0) {
			return nil, fmt.Errorf("gp: fit: bad bounds [%v, %v] for %s", b.Lo, b.Hi, p.Name)
		}
		lo[i], hi[i] = math.Log(b.Lo), math.Log(b.Hi)
		init[i] = math.Log(math.Min(math.Max(p.Value, b.Lo), b.Hi))
	}
	nb := opts.Noise
	if nb == (Bound{}) {
		nb = Bound{1e-10, 1e-10}
	}
	if !(nb.Lo > 0) || nb.Hi < nb.Lo {
		return nil, fmt.Errorf("gp: fit: bad noise bounds [%v, %v]", nb.Lo, nb.Hi)
	}
	lo[np-1], hi[np-1] = math.Log(nb.Lo), math.Log(nb.Hi)
	init[np-1] = (lo[np-1] + hi[np-1]) / 2
	if opts.NoiseInit > 0 {
		init[np-1] = math.Log(math.Min(math.Max(opts.NoiseInit, nb.Lo), nb.Hi))
	}

	fixed := make([]float64, np)
	for i, p := range ps {
		if b, ok := opts.Bounds[p.Name]; ok && b.Lo == b.Hi {
			fixed[i] = b.Lo
		}
	}
	if nb.Lo == nb.Hi {
		fixed[np-1] = nb.Lo
	}

	var free []int
	for i := range np {
		if hi[i] > lo[i] {
			free = append(free, i)
		}
	}
	return &fitSpace{k: k, series: series, np: np, lo: lo, hi: hi, init: init, fixed: fixed, free: free, memo: newFitMemo(series)}, nil
}

// natural maps log-space values back, exactly for fixed parameters so
// that a fixed nugget of 0.0025 stays 0.0025.
func (sp *fitSpace) natural(th []float64, i int) float64 {
	if sp.fixed[i] > 0 {
		return sp.fixed[i]
	}
	return math.Exp(th[i])
}

// theta maps the unconstrained u to log space: free parameters are
// reparametrised as theta = lo + (hi-lo) sigmoid(u) so that an
// unconstrained optimiser respects the bounds.
func (sp *fitSpace) theta(u []float64) []float64 {
	th := make([]float64, sp.np)
	for i := range sp.np {
		th[i] = sp.lo[i]
	}
	for j, i := range sp.free {
		th[i] = sp.lo[i] + (sp.hi[i]-sp.lo[i])*sigmoid(u[j])
	}
	return th
}

// eval is the log-likelihood at th (and its gradient into grad if non-nil).
func (sp *fitSpace) eval(th []float64, grad []float64) (float64, float64, error) {
	vals := make([]float64, sp.np-1)
	for i := range vals {
		vals[i] = sp.natural(th, i)
	}
	kk, err := sp.k.WithParams(vals)
	if err != nil {
		return 0, 0, err
	}
	noise := sp.natural(th, sp.np-1)
	if sp.memo == nil {
		return logLik(kk, noise, sp.series, grad)
	}
	return sp.memo.eval(th, kk, noise, sp.series, grad)
}

// fitMemoMaxFloats caps the storage a fit keeps between evaluations (two
// n x n matrices per series): 64 MiB, beyond which each evaluation
// allocates its own, as logLik does.
const fitMemoMaxFloats = 8 << 20

// fitMemo keeps each series' work of the last point evaluated. L-BFGS's
// line search asks for the value at a trial point and then, if the point
// is accepted, for the gradient at the same point: from the kept factor
// that costs Potri and the gradient's sum only, where a fresh evaluation
// would build and factorise the Gram matrix again. Every number is
// computed by the same calls on the same inputs as logLik's, so a fit's
// result is bit for bit the same (TestFitMemoSameAsLogLik).
type fitMemo struct {
	th   []float64 // the point whose work is kept; nil when none is valid
	ll   float64
	jit  float64
	work []seriesWork
}

// newFitMemo returns a memo for the series, or nil when their matrices
// exceed fitMemoMaxFloats.
func newFitMemo(series []Series) *fitMemo {
	total := 0
	for _, s := range series {
		total += 2 * len(s.T) * len(s.T)
	}
	if total > fitMemoMaxFloats {
		return nil
	}
	return &fitMemo{work: make([]seriesWork, len(series))}
}

// eval is logLik(k, noise, series, grad) at the log-space point th,
// reusing the work kept for th when it is the point evaluated last.
func (m *fitMemo) eval(th []float64, k Kernel, noise float64, series []Series, grad []float64) (float64, float64, error) {
	if !slices.Equal(th, m.th) {
		m.th = nil
		total, maxJit := 0.0, 0.0
		for i, s := range series {
			ll, jit, err := m.work[i].factor(k, noise, s)
			if err != nil {
				return math.NaN(), 0, err
			}
			total += ll
			maxJit = math.Max(maxJit, jit)
		}
		m.th, m.ll, m.jit = slices.Clone(th), total, maxJit
	}
	if grad != nil {
		clear(grad)
		dk := make([]float64, len(k.Params()))
		for i, s := range series {
			m.work[i].addGrad(grad, dk, k, noise, s)
		}
	}
	return m.ll, m.jit, nil
}

// starts is the initial point followed by restarts Halton points.
func (sp *fitSpace) starts(restarts int) [][]float64 {
	np, lo, hi := sp.np, sp.lo, sp.hi
	starts := [][]float64{sp.init}
	for r := 1; r <= restarts; r++ {
		st := make([]float64, np)
		for i := range np {
			st[i] = lo[i] + (hi[i]-lo[i])*halton(r, primes[i%len(primes)])
		}
		starts = append(starts, st)
	}
	return starts
}

// optimizeFrom runs L-BFGS from the log-space start st and returns the
// log-space point it reaches; ok is false when the optimiser returned none.
func (sp *fitSpace) optimizeFrom(st []float64) (th []float64, ok bool) {
	np, lo, hi, free := sp.np, sp.lo, sp.hi, sp.free
	u0 := make([]float64, len(free))
	for j, i := range free {
		q := (st[i] - lo[i]) / (hi[i] - lo[i])
		q = math.Min(math.Max(q, 1e-6), 1-1e-6)
		u0[j] = math.Log(q / (1 - q))
	}
	if len(free) == 0 {
		return sp.theta(nil), true
	}
	prob := optimize.Problem{
		Func: func(u []float64) float64 {
			ll, _, err := sp.eval(sp.theta(u), nil)
			if err != nil || math.IsNaN(ll) {
				return math.Inf(1)
			}
			return -ll
		},
		Grad: func(g, u []float64) {
			th := sp.theta(u)
			full := make([]float64, np)
			_, _, err := sp.eval(th, full)
			for j, i := range free {
				if err != nil {
					g[j] = 0
					continue
				}
				sg := sigmoid(u[j])
				g[j] = -full[i] * (hi[i] - lo[i]) * sg * (1 - sg)
			}
		},
	}
	res, err := optimize.Minimize(prob, u0, &optimize.Settings{MajorIterations: 200}, &optimize.LBFGS{})
	if res == nil {
		return nil, false
	}
	_ = err // a line-search failure near the optimum still leaves a usable point
	return sp.theta(res.X), true
}

// LogMarginalLikelihood returns log p(y) for y ~ N(0, Gram(k, ts) + noise I),
// and the diagonal jitter the factorisation needed beyond the nugget.
func LogMarginalLikelihood(k Kernel, noise float64, s Series) (float64, float64, error) {
	if len(s.T) != len(s.Y) || len(s.T) == 0 {
		return 0, 0, fmt.Errorf("gp: series with %d times and %d values", len(s.T), len(s.Y))
	}
	return logLik(k, noise, []Series{s}, nil)
}

// HeldOutLogLikelihood returns log p(test | train), the log predictive
// density of the test values given the training values under the GP k
// plus a nugget, and the larger jitter of the two factorisations. It is
// computed as log p(train, test) - log p(train), both by a stable
// Cholesky factorisation, so no ill-conditioned matrix is inverted. It
// scores hyperparameters fitted on train (a held-out likelihood): higher
// is better.
func HeldOutLogLikelihood(k Kernel, noise float64, train, test Series) (float64, float64, error) {
	if len(test.T) != len(test.Y) || len(test.T) == 0 {
		return 0, 0, fmt.Errorf("gp: held-out series with %d times and %d values", len(test.T), len(test.Y))
	}
	joint := Series{T: append(slices.Clone(train.T), test.T...), Y: append(slices.Clone(train.Y), test.Y...)}
	all, j1, err := LogMarginalLikelihood(k, noise, joint)
	if err != nil {
		return math.NaN(), 0, err
	}
	tr, j2, err := LogMarginalLikelihood(k, noise, train)
	if err != nil {
		return math.NaN(), 0, err
	}
	return all - tr, math.Max(j1, j2), nil
}

// logLik sums log marginal likelihoods; if grad is non-nil it receives the
// gradient with respect to the log of each kernel parameter then the log
// nugget. It is the optimiser's objective, evaluated hundreds of times per
// fit, so it works on raw storage with LAPACK's Cholesky routines directly:
// the same calls (Potrf, Potrs, Potri) on the same numbers as
// Factorize/SolveVecTo/InverseTo, without mat's per-entry checks and the
// condition estimate that the fit ignores (TestLogLikSameAsFactor checks
// the result is bit-for-bit the Factor path's).
func logLik(k Kernel, noise float64, data []Series, grad []float64) (float64, float64, error) {
	return sumSeries(seriesLogLik, k, noise, data, grad)
}

// seriesFunc is the log likelihood of one series (its gradient added to
// grad if non-nil, dk scratch of the kernel's parameter count) and the
// jitter its factorisation needed.
type seriesFunc func(k Kernel, noise float64, s Series, grad, dk []float64) (float64, float64, error)

// sumSeries sums one's value over the series, and their gradients into grad
// (cleared first), returning the largest jitter.
func sumSeries(one seriesFunc, k Kernel, noise float64, data []Series, grad []float64) (float64, float64, error) {
	if grad != nil {
		clear(grad)
	}
	total, maxJit := 0.0, 0.0
	dk := make([]float64, len(k.Params()))
	for _, s := range data {
		ll, jit, err := one(k, noise, s, grad, dk)
		if err != nil {
			return math.NaN(), 0, err
		}
		total += ll
		maxJit = math.Max(maxJit, jit)
	}
	return total, maxJit, nil
}

func seriesLogLik(k Kernel, noise float64, s Series, grad, dk []float64) (float64, float64, error) {
	var w seriesWork
	ll, jit, err := w.factor(k, noise, s)
	if err != nil {
		return ll, jit, err
	}
	if grad != nil {
		w.addGrad(grad, dk, k, noise, s)
	}
	return ll, jit, nil
}

// seriesWork holds one series' likelihood computation: the Gram matrix
// with the nugget (g), its Cholesky factor (u, K^-1 once inverted) and
// alpha = K^-1 y. A fit keeps one per series across evaluations (fitMemo),
// so that its storage is reused and the gradient at the point whose value
// the line search has just computed needs only Potri.
type seriesWork struct {
	g, u, alpha []float64
	// inverted says u holds K^-1 (addGrad ran), no longer the factor.
	inverted bool
}

// factor computes the log likelihood of s under k plus the nugget into w:
// Potrf of the Gram matrix (with the jitter ladder), then Potrs for alpha.
func (w *seriesWork) factor(k Kernel, noise float64, s Series) (float64, float64, error) {
	n := len(s.T)
	if cap(w.g) < n*n {
		w.g, w.u = make([]float64, n*n), make([]float64, n*n)
	}
	w.g, w.u, w.inverted = w.g[:n*n], w.u[:n*n], false
	g := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: w.g}
	gramUpper(g, k, s.T)
	for i := range n {
		g.Data[i*n+i] += noise
	}
	u := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: w.u}
	jit, err := jitterLadder(n, func(i, j int) float64 { return g.Data[i*n+j] }, 0, func(j float64) bool {
		for i := range n {
			copy(u.Data[i*n+i:(i+1)*n], g.Data[i*n+i:(i+1)*n])
			u.Data[i*n+i] += j
		}
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: u.Data})
		return ok
	})
	if err != nil {
		return math.NaN(), 0, err
	}
	w.alpha = append(w.alpha[:0], s.Y...)
	alpha := w.alpha
	lapack64.Potrs(u, blas64.General{Rows: n, Cols: 1, Stride: 1, Data: alpha})
	logDet := 0.0
	for i := range n {
		logDet += 2 * math.Log(u.Data[i*n+i])
	}
	y := blas64.Vector{N: n, Inc: 1, Data: s.Y}
	ll := -0.5*blas64.Dot(y, blas64.Vector{N: n, Inc: 1, Data: alpha}) - 0.5*logDet - 0.5*float64(n)*math.Log(2*math.Pi)
	return ll, jit, nil
}

// addGrad adds the gradient of the likelihood factor computed into grad:
// K^-1 in u's storage (upper triangle), as InverseTo computes it (a failed
// Potri is a Condition error the Factor path ignores), then addGrad.
func (w *seriesWork) addGrad(grad, dk []float64, k Kernel, noise float64, s Series) {
	n := len(s.T)
	if !w.inverted {
		lapack64.Potri(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: w.u})
		w.inverted = true
	}
	addGrad(grad, dk, k, noise, s.T, w.alpha, w.u, n)
}

// addGrad adds to grad the gradient of one series' log likelihood,
// d/dtheta = 1/2 sum_ij (alpha_i alpha_j - Kinv_ij) dK_ij, from alpha =
// K^-1 y and the upper triangle of K^-1 (row-major, the given stride).
func addGrad(grad, dk []float64, k Kernel, noise float64, ts, alpha, kinv []float64, stride int) {
	np := len(dk)
	for i := range ts {
		for j := i; j < len(ts); j++ {
			w := alpha[i]*alpha[j] - kinv[i*stride+j]
			if j != i {
				w *= 2
			}
			k.Grad(dk, ts[i], ts[j])
			for p := range np {
				grad[p] += 0.5 * w * dk[p]
			}
			if i == j {
				grad[np] += 0.5 * w * noise
			}
		}
	}
}

func sigmoid(u float64) float64 { return 1 / (1 + math.Exp(-u)) }

var primes = []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29}

// halton returns the i-th element of the van der Corput sequence in base b.
func halton(i, b int) float64 {
	f, r := 1.0, 0.0
	for i > 0 {
		f /= float64(b)
		r += f * float64(i%b)
		i /= b
	}
	return r
}

// FitEach fits every series separately with the same options, as the
// paper does per trace and per coordinate.
func FitEach(k Kernel, data []Series, opts FitOptions) ([]*FitResult, error) {
	out := make([]*FitResult, len(data))
	for i, s := range data {
		r, err := Fit(k, []Series{s}, opts)
		if err != nil {
			return nil, fmt.Errorf("series %d: %w", i, err)
		}
		out[i] = r
	}
	return out, nil
}
