package attack

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
)

// MeanModel is what the adversary assumes about the prior mean of a
// dimension. The zero value is MeanLinear, the strongest.
type MeanModel int

const (
	// MeanLinear estimates a constant plus a linear trend in time by GLS
	// (universal kriging).
	MeanLinear MeanModel = iota
	// MeanConstant estimates a constant mean by GLS (ordinary kriging).
	MeanConstant
	// MeanKnown takes the mean as known and zero. To attack with a known
	// mean mu, subtract mu from the release (and the truth) and add it back
	// to the reconstruction: the posterior is translation-equivariant.
	MeanKnown
)

func (m MeanModel) String() string {
	switch m {
	case MeanLinear:
		return "linear"
	case MeanConstant:
		return "constant"
	case MeanKnown:
		return "known"
	}
	return fmt.Sprintf("MeanModel(%d)", int(m))
}

// DefaultGrid is the number of lengthscales an Adversary tries when Grid
// is zero.
const DefaultGrid = 6

// Adversary is a Gaussian-process adversary of the public prior class.
//
// By default (Variance zero) it picks the member of Family, a lengthscale in
// [LengthscaleMin, LengthscaleMax] and a variance of at least
// Family.Variance, that maximises the restricted likelihood of the release
// (no truth is used), and estimates a linear trend. A fixed prior is a
// family with LengthscaleMin = LengthscaleMax and a positive Variance.
type Adversary struct {
	// Family is the public prior class (kernel, lengthscale range, least
	// variance; prior.Prior.Family gives a prior file's).
	Family prior.Family
	// Variance, if positive, fixes the prior variance (square metres)
	// instead of choosing it.
	Variance float64
	// Nugget is the variance (square metres) of white noise the release
	// carries beyond SigmaG, added to SigmaG's diagonal: a release rounded
	// to a grid g has about g^2/12 (sanitize.OutputGrid). When SigmaG is
	// proportional to a member of the family, Sigma + SigmaG is singular to
	// working precision and the GLS mean is ill-posed without it.
	Nugget float64
	// Mean is the mean model; the zero value estimates a linear trend.
	Mean MeanModel
	// Grid is the number of log-spaced lengthscales tried before the
	// refinement; zero means DefaultGrid.
	Grid int
	// Unguarded reports the posterior as it is. By default the adversary
	// guards against a prior that fits the release badly: it estimates its
	// own risk from the public noise law (Stein's unbiased risk estimate,
	// no truth used) and moves the reconstruction towards the release as
	// far as that lowers the estimate (Fit.ReleaseWeight says how far).
	// The one weight per dimension is estimated from the release, so it is
	// used only when the noise has at least 10 effective degrees of
	// freedom or the estimate is decisive (noise on a few listed secrets
	// has about one).
	Unguarded bool
	// DenseWindow bounds the points the dense path factorises at once
	// (zero: DefaultDenseWindow). It matters only when the prior or the
	// noise has no state-space form (an RBF or periodic kernel, an
	// explicit noise matrix): a longer release is then fitted on blocks
	// and reconstructed in overlapping local windows (PathLocal), an
	// approximation of the adversary.
	DenseWindow int

	// progress, if set, is called after every likelihood evaluation.
	progress func(evals int)
}

// DefaultDenseWindow is the most points the dense path factorises at once
// when Adversary.DenseWindow is zero: each likelihood costs O(n^3).
const DefaultDenseWindow = 1000

// MinDenseWindow is the fewest points a dense window may hold: fewer fit
// no prior worth attacking with.
const MinDenseWindow = 40

// checkDenseWindow returns a *param.Error named "dense_window" unless n is
// zero (the default) or at least MinDenseWindow.
func checkDenseWindow(n int) error {
	if n != 0 && n < MinDenseWindow {
		return param.Invalid("dense_window", n, fmt.Sprintf("a dense window of %d points is too short: want at least %d (0: %d)", n, MinDenseWindow, DefaultDenseWindow))
	}
	return nil
}

// How a reconstruction was computed (Fit.Path).
const (
	// PathStateSpace is the exact linear-time path: Kalman filter and
	// smoother over the state-space form of prior and noise (Matérn
	// kernels of half-integer smoothness).
	PathStateSpace = "state space"
	// PathDense is the exact dense path: Cholesky factorisations of the
	// n x n covariance.
	PathDense = "dense"
	// PathLocal is the bounded dense path for long releases without a
	// state-space form: the prior is fitted by the restricted likelihood
	// summed over blocks of the release, and every point is kriged from a
	// window of its neighbours. An approximation of the adversary.
	PathLocal = "dense, local windows"
	// PathOnePoint: a single point with an unknown mean, whose best
	// reconstruction is the release itself (no prior is fitted).
	PathOnePoint = "none (one point)"
)

// Fit describes the prior an adversary chose for one dimension and the mean
// it estimated.
type Fit struct {
	Kernel      string  `json:"kernel,omitempty"`
	Variance    float64 `json:"variance_m2"`
	Lengthscale float64 `json:"lengthscale_s,omitempty"`
	Period      float64 `json:"period_s,omitempty"`
	// Choice says how the prior was chosen: "restricted likelihood",
	// "marginal likelihood" (known mean), "fixed" or "given covariance".
	Choice string `json:"prior_choice"`
	// AtBound names the search bounds the chosen prior lies on
	// ("lengthscale_min", "lengthscale_max", "variance_min",
	// "variance_max"); a prior on a class bound suggests the class, not
	// the data, limits the adversary.
	AtBound []string `json:"at_bound,omitempty"`
	// Mean is the mean model ("linear", "constant", "known"). Coefficients
	// are the GLS level at ReferenceTime (metres) and, for a linear mean,
	// the slope (metres per second), with their standard errors.
	Mean          string    `json:"mean"`
	Coefficients  []float64 `json:"mean_coefficients,omitempty"`
	StdErrors     []float64 `json:"mean_std_errors,omitempty"`
	ReferenceTime float64   `json:"mean_reference_time_s,omitempty"`
	// LogLikelihood is the restricted (or, for a known mean, marginal)
	// log likelihood of the release at the chosen prior, and Evaluations
	// the number of likelihoods (a Cholesky factorisation or a Kalman
	// filter pass each) the search
	// computed.
	LogLikelihood float64 `json:"log_likelihood"`
	Evaluations   int     `json:"likelihood_evaluations"`
	// Jitter is the diagonal jitter the factorisation of Sigma + SigmaG
	// needed, counted as noise.
	Jitter float64 `json:"jitter"`
	// Path is how the reconstruction was computed: PathStateSpace,
	// PathDense or PathLocal (LocalWindow gives its window, in points).
	Path        string `json:"path"`
	LocalWindow int    `json:"local_window,omitempty"`
	// ReleaseWeight is the weight 1 - a of the release in the guarded
	// reconstruction z + a (posterior mean - z): 0 when the prior fits the
	// release, towards 1 when the estimated risk says the posterior mean
	// is worse than the release.
	ReleaseWeight float64 `json:"release_weight"`
	// MeanNote says why Mean is weaker than the mean model asked for: a
	// linear trend needs three points at two times or more, a constant
	// mean two points (meanFor).
	MeanNote string `json:"mean_note,omitempty"`
}

// meanFor returns the strongest mean model, no stronger than m, that a
// release at times ts (sorted) can estimate with a degree of freedom left
// for the prior: a linear trend needs more than two points at two distinct
// times or more, a constant mean more than one point (and with one point
// onePoint answers). A known mean needs none.
func meanFor(m MeanModel, ts []float64) MeanModel {
	n := len(ts)
	if m == MeanLinear && (n <= 2 || ts[0] == ts[n-1]) {
		m = MeanConstant
	}
	return m
}

// onePoint is the adversary of a one-point release whose mean it does not
// know: with a flat prior on the mean, the released value is the
// posterior mean, and the noise's variance the posterior variance. One
// point says nothing about the prior (no likelihood to maximise): nothing
// beats reading the release as it is.
func onePoint(z []float64, g *noiseLaw, adv Adversary, asked MeanModel) *Estimate {
	v := g.diag()
	return &Estimate{
		Mean: slices.Clone(z), Variance: v, Risk: slices.Clone(v),
		Fit: Fit{Kernel: adv.Family.Kernel, Choice: "none (one point)", Mean: MeanConstant.String(), Path: PathOnePoint, ReleaseWeight: 1,
			MeanNote: fmt.Sprintf("a %s mean needs more than one point: with the mean unknown, the release itself is the best reconstruction of a single point", asked)},
	}
}

// Estimate is an adversary's reconstruction of one dimension.
type Estimate struct {
	// Mean is the reconstruction at every point (the posterior mean, or
	// its guarded version) and Variance its error variance under the
	// chosen prior, including the uncertainty of the estimated mean.
	Mean, Variance []float64
	// Risk is an estimate of the squared error of Mean at every point
	// that uses no truth and holds whatever the prior (Stein's unbiased
	// risk estimate for the chosen hyperparameters): noisy point by point,
	// meaningful averaged over many.
	Risk []float64
	Fit  Fit
}

// Reconstruct runs the adversary on one dimension of a release: z at times
// ts (seconds), with noise covariance sigmaG. The covariance is explicit,
// so it takes the dense path (PathDense, or PathLocal beyond
// Adversary.DenseWindow points); ReconstructKernel takes a noise kernel
// and the linear-time path where there is one.
func Reconstruct(ts, z []float64, sigmaG mat.Symmetric, adv Adversary) (*Estimate, error) {
	n := len(ts)
	if sigmaG == nil || sigmaG.SymmetricDim() != n {
		dim := 0
		if sigmaG != nil {
			dim = sigmaG.SymmetricDim()
		}
		return nil, fmt.Errorf("attack: %d times, %d released values and a %dx%d noise covariance", n, len(z), dim, dim)
	}
	return reconstruct(ts, z, &noiseLaw{ts: ts, dense: sigmaG, white: adv.Nugget}, adv)
}

// ReconstructKernel runs the adversary on one dimension of a release whose
// noise is the stationary kernel noise (a gp.Sum for several components)
// at the release's times, plus white noise of variance adv.Nugget. When
// the family's kernel and every noise component are Matérn kernels of
// half-integer smoothness it takes the linear-time path (PathStateSpace:
// the same posterior as the dense path, in O(n) time and O(sqrt n)
// memory); otherwise the dense one, bounded by adv.DenseWindow.
func ReconstructKernel(ts, z []float64, noise gp.Kernel, adv Adversary) (*Estimate, error) {
	if noise == nil {
		return nil, errors.New("attack: no noise kernel")
	}
	terms := kernelTerms(noise)
	for _, k := range terms {
		if err := gp.Validate(k); err != nil {
			return nil, fmt.Errorf("attack: noise kernel: %w", err)
		}
	}
	return reconstruct(ts, z, &noiseLaw{ts: ts, terms: terms, white: adv.Nugget}, adv)
}

// hasStateSpace reports whether the family's members have a state-space
// form.
func hasStateSpace(f prior.Family) bool {
	k, err := f.Member(1, f.LengthscaleMin)
	if err != nil {
		return false
	}
	_, err = gp.StateSpace(k)
	return err == nil
}

// reconstruct is Reconstruct for a noise law g whose white noise already
// includes the nugget.
func reconstruct(ts, z []float64, g *noiseLaw, adv Adversary) (*Estimate, error) {
	n := len(ts)
	if n == 0 {
		return nil, errors.New("attack: empty release")
	}
	if len(z) != n {
		return nil, fmt.Errorf("attack: %d times and %d released values", n, len(z))
	}
	for i := range n {
		if math.IsNaN(ts[i]) || math.IsInf(ts[i], 0) || math.IsNaN(z[i]) || math.IsInf(z[i], 0) {
			return nil, fmt.Errorf("attack: point %d: time %v, value %v is not finite", i, ts[i], z[i])
		}
	}
	if err := adv.Family.Validate(); err != nil {
		return nil, fmt.Errorf("attack: family: %w", err)
	}
	if !(adv.Variance >= 0) || math.IsInf(adv.Variance, 0) {
		return nil, fmt.Errorf("attack: fixed variance %v must be finite and >= 0", adv.Variance)
	}
	if !(g.white >= 0) || math.IsInf(g.white, 0) {
		return nil, fmt.Errorf("attack: nugget %v must be finite and >= 0", g.white)
	}
	if adv.Grid < 0 {
		return nil, fmt.Errorf("attack: grid of %d lengthscales", adv.Grid)
	}
	if err := checkDenseWindow(adv.DenseWindow); err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	if adv.DenseWindow == 0 {
		adv.DenseWindow = DefaultDenseWindow
	}
	if !slices.IsSorted(ts) {
		return reconstructSorted(ts, z, g, adv)
	}
	// A release of one or two points (sanitize releases them) cannot
	// estimate the mean asked for: the adversary estimates the strongest
	// one its points can, and says so.
	asked := adv.Mean
	adv.Mean = meanFor(asked, ts)
	if adv.Mean == MeanConstant && n == 1 {
		return onePoint(z, g, adv, asked), nil
	}
	d, err := newDesign(ts, adv.Mean)
	if err != nil {
		return nil, err
	}
	s := &search{adv: adv, ts: ts, z: z, d: d, gdiag: g.diag()}
	var (
		best candidate
		p    *posterior
		path = PathDense
		win  int
	)
	switch {
	case hasStateSpace(adv.Family) && g.stateSpace():
		path = PathStateSpace
		lik := newSSLik(ts, z, d, adv.Family, g)
		s.lik = lik
		if best, err = s.run(); err != nil {
			return nil, err
		}
		if p, err = lik.posterior(best.l, best.s2); err != nil {
			return nil, err
		}
	case n <= adv.DenseWindow:
		gm := g.block(seq(0, n))
		s.lik = &denseLik{ts: ts, z: z, d: d, g: gm, fam: adv.Family}
		if best, err = s.run(); err != nil {
			return nil, err
		}
		k, err := adv.Family.Member(best.s2, best.l)
		if err != nil {
			return nil, fmt.Errorf("attack: %w", err)
		}
		if p, err = krige(gp.Gram(k, ts), gm, z, d); err != nil {
			return nil, err
		}
	default:
		path = PathLocal
		if best, p, win, err = s.local(g); err != nil {
			return nil, err
		}
	}
	fit := Fit{
		Kernel: adv.Family.Kernel, Variance: best.s2, Lengthscale: best.l, Choice: s.choice(),
		AtBound: s.atBound(best), Mean: adv.Mean.String(), LogLikelihood: best.ll,
		Evaluations: s.evals, Jitter: p.jitter, Path: path, LocalWindow: win,
	}
	if fit.Kernel == gp.KernelPeriodic {
		fit.Period = adv.Family.Period
	}
	if p.g != nil {
		fit.LogLikelihood = p.g.logLik
		if d.p > 0 {
			fit.Coefficients, fit.StdErrors = d.coefficients(p.g.beta, p.g.betaCov(d.p))
			fit.ReferenceTime = d.tbar
		}
	}
	if adv.Mean != asked {
		fit.MeanNote = fmt.Sprintf("a %s mean needs more points than the %d released: estimated a %s one", asked, n, adv.Mean)
	}
	est := &Estimate{Mean: p.mean, Variance: p.variance, Fit: fit}
	dof := func() float64 { v, _ := g.dof(); return v }
	est.Fit.ReleaseWeight = 1 - guardDiag(est, z, s.gdiag, dof, !adv.Unguarded)
	return est, nil
}

// reconstructSorted runs reconstruct on the points in time order (ties
// keep their order) and returns the estimate in the input's order.
func reconstructSorted(ts, z []float64, g *noiseLaw, adv Adversary) (*Estimate, error) {
	n := len(ts)
	perm := seq(0, n)
	sort.SliceStable(perm, func(a, b int) bool { return ts[perm[a]] < ts[perm[b]] })
	pts, pz := make([]float64, n), make([]float64, n)
	for a, i := range perm {
		pts[a], pz[a] = ts[i], z[i]
	}
	pg := &noiseLaw{ts: pts, terms: g.terms, white: g.white}
	if g.dense != nil {
		pg.dense = permSym{g.dense, perm}
	}
	est, err := reconstruct(pts, pz, pg, adv)
	if err != nil {
		return nil, err
	}
	for _, v := range [][]float64{est.Mean, est.Variance, est.Risk} {
		c := slices.Clone(v)
		for a, i := range perm {
			v[i] = c[a]
		}
	}
	return est, nil
}

// permSym is the symmetric matrix a[perm[i], perm[j]].
type permSym struct {
	a    mat.Symmetric
	perm []int
}

func (p permSym) Dims() (int, int)    { return len(p.perm), len(p.perm) }
func (p permSym) At(i, j int) float64 { return p.a.At(p.perm[i], p.perm[j]) }
func (p permSym) T() mat.Matrix       { return p }
func (p permSym) SymmetricDim() int   { return len(p.perm) }

// seq returns lo, lo+1, ..., hi-1.
func seq(lo, hi int) []int {
	out := make([]int, hi-lo)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

// likelihood evaluates the restricted likelihood of a release for the
// members of the adversary's family: at(l) returns it as a function of
// the prior variance at lengthscale l.
type likelihood interface {
	at(l float64) (func(s2 float64) (float64, error), error)
}

// denseLik is the likelihood by Cholesky factorisation of Sigma + SigmaG
// (g includes the white noise).
type denseLik struct {
	ts, z []float64
	d     *design
	g     *mat.SymDense
	fam   prior.Family
	m     *mat.SymDense // workspace
}

func (l *denseLik) at(ls float64) (func(s2 float64) (float64, error), error) {
	k, err := l.fam.Member(1, ls)
	if err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	kg := gp.Gram(k, l.ts)
	n := len(l.ts)
	if l.m == nil {
		l.m = mat.NewSymDense(n, nil)
	}
	return func(s2 float64) (float64, error) {
		kr, gr, mr := kg.RawSymmetric(), l.g.RawSymmetric(), l.m.RawSymmetric()
		for i := range n {
			for j := i; j < n; j++ {
				mr.Data[i*mr.Stride+j] = s2*kr.Data[i*kr.Stride+j] + gr.Data[i*gr.Stride+j]
			}
		}
		g, err := solveGLS(l.m, l.z, l.d)
		if err != nil {
			return 0, err
		}
		return g.logLik, nil
	}, nil
}

// search chooses the adversary's prior for one dimension.
type search struct {
	adv    Adversary
	ts, z  []float64
	d      *design
	gdiag  []float64 // the noise variances
	lik    likelihood
	evals  int
	lgrid  []float64
	vLo    float64
	vHi    float64
	lastEr error
}

// candidate is one lengthscale with its best variance.
type candidate struct {
	l, s2, ll float64
}

// The search: variance bounds relative to the release's moment estimate
// (below, also the family's least variance), the first step and the
// tolerance in log variance, and the tolerance of the lengthscale
// refinement in log lengthscale. A 10 % change of variance or 5 % of
// lengthscale moves the restricted likelihood by a small fraction of a
// nat near its optimum (TestSearchFindsOptimum).
const (
	varianceRange = 1e8
	logVarStep    = 1.0
	logVarTol     = 0.1
	logLengthTol  = 0.05
)

func (s *search) choice() string {
	switch {
	case s.adv.Variance > 0 && s.adv.Family.Single():
		return "fixed"
	case s.adv.Mean == MeanKnown:
		return "marginal likelihood"
	}
	return "restricted likelihood"
}

func (s *search) atBound(c candidate) []string {
	var b []string
	f := s.adv.Family
	if !f.Single() {
		if c.l <= f.LengthscaleMin*(1+1e-9) {
			b = append(b, "lengthscale_min")
		}
		if c.l >= f.LengthscaleMax*(1-1e-9) {
			b = append(b, "lengthscale_max")
		}
	}
	if s.adv.Variance == 0 {
		if math.Log(c.s2) <= math.Log(s.vLo)+2*logVarTol {
			b = append(b, "variance_min")
		}
		if math.Log(c.s2) >= math.Log(s.vHi)-2*logVarTol {
			b = append(b, "variance_max")
		}
	}
	return b
}

// logLik evaluates f, a likelihood of likelihood.at, at s2: -Inf where
// it cannot be evaluated.
func (s *search) logLik(f func(float64) (float64, error), s2 float64) float64 {
	s.evals++
	if s.adv.progress != nil {
		s.adv.progress(s.evals)
	}
	ll, err := f(s2)
	if err != nil {
		s.lastEr = err
		return math.Inf(-1)
	}
	return ll
}

// scale returns a moment estimate of the prior variance: the variance of
// the release about its OLS mean minus the mean noise variance, floored at
// 1 % of the noise variance.
func (s *search) scale() float64 {
	n := len(s.z)
	noise := 0.0
	for _, v := range s.gdiag {
		noise += v / float64(n)
	}
	res := append([]float64(nil), s.z...)
	if s.d.p > 0 {
		var beta mat.VecDense
		if err := beta.SolveVec(s.d.h, mat.NewVecDense(n, s.z)); err == nil {
			for i := range n {
				for j := range s.d.p {
					res[i] -= s.d.h.At(i, j) * beta.AtVec(j)
				}
			}
		}
	}
	v := 0.0
	for _, r := range res {
		v += r * r / float64(n)
	}
	return math.Max(v-noise, 0.01*noise)
}

func (s *search) run() (candidate, error) {
	f := s.adv.Family
	grid := s.adv.Grid
	if grid == 0 {
		grid = DefaultGrid
	}
	if f.Single() || grid == 1 {
		s.lgrid = []float64{f.LengthscaleMin}
		if !f.Single() {
			s.lgrid[0] = math.Sqrt(f.LengthscaleMin * f.LengthscaleMax)
		}
	} else {
		lo, hi := math.Log(f.LengthscaleMin), math.Log(f.LengthscaleMax)
		for i := range grid {
			s.lgrid = append(s.lgrid, math.Exp(lo+(hi-lo)*float64(i)/float64(grid-1)))
		}
		s.lgrid[0], s.lgrid[grid-1] = f.LengthscaleMin, f.LengthscaleMax
	}
	v0 := s.scale()
	s.vLo = math.Max(f.Variance, v0/varianceRange)
	s.vHi = math.Max(v0*varianceRange, 10*s.vLo)
	u0 := math.Log(v0)
	centre := u0
	var best candidate
	bestAt := -1
	var profiled []candidate
	keep := func(c candidate) {
		if len(profiled) == 0 || c.ll > best.ll {
			best = c
		}
		profiled = append(profiled, c)
	}
	for i, l := range s.lgrid {
		c, err := s.profile(l, []float64{centre, u0}, logVarStep)
		if err != nil {
			return candidate{}, err
		}
		if !math.IsInf(c.ll, -1) {
			centre = math.Log(c.s2)
		}
		if len(profiled) == 0 || c.ll > best.ll {
			bestAt = i
		}
		keep(c)
	}
	if math.IsInf(best.ll, -1) {
		return candidate{}, fmt.Errorf("attack: no prior of the family could be evaluated: %w", s.lastEr)
	}
	if len(s.lgrid) < 3 {
		return best, nil
	}
	// Brent in log l between the best grid point's neighbours, each step
	// a variance profile started from the profiled lengthscales on either
	// side.
	a := math.Log(s.lgrid[max(bestAt-1, 0)])
	b := math.Log(s.lgrid[min(bestAt+1, len(s.lgrid)-1)])
	var err error
	brentMax(func(x float64) float64 {
		if err != nil {
			return math.Inf(-1)
		}
		var starts []float64
		below, above := math.Inf(-1), math.Inf(1)
		var sb, sa float64
		for _, p := range profiled {
			switch lp := math.Log(p.l); {
			case lp <= x && lp > below:
				below, sb = lp, math.Log(p.s2)
			case lp > x && lp < above:
				above, sa = lp, math.Log(p.s2)
			}
		}
		if !math.IsInf(below, 0) {
			starts = append(starts, sb)
		}
		if !math.IsInf(above, 0) {
			starts = append(starts, sa)
		}
		var c candidate
		if c, err = s.profile(math.Exp(x), starts, logVarStep/2); err != nil {
			return math.Inf(-1)
		}
		keep(c)
		return c.ll
	}, a, b, math.Log(s.lgrid[bestAt]), best.ll, logLengthTol)
	if err != nil {
		return candidate{}, err
	}
	return best, nil
}

// profile maximises the likelihood over the variance at lengthscale l. It
// searches in log variance, in steps starting at step, from the best of the
// starting points starts (the optima at neighbouring lengthscales and the
// moment estimate): the profile can have two modes when the release has
// structure at two scales.
func (s *search) profile(l float64, starts []float64, step float64) (candidate, error) {
	lf, err := s.lik.at(l)
	if err != nil {
		return candidate{}, err
	}
	c := candidate{l: l}
	if s.adv.Variance > 0 {
		c.s2 = s.adv.Variance
		c.ll = s.logLik(lf, c.s2)
		return c, nil
	}
	lo, hi := math.Log(s.vLo), math.Log(s.vHi)
	f := func(u float64) float64 { return s.logLik(lf, math.Exp(u)) }
	centre, best := 0.0, math.Inf(-1)
	for i, u := range starts {
		u = min(max(u, lo), hi)
		if i > 0 && math.Abs(u-centre) < step {
			continue
		}
		if v := f(u); v > best || i == 0 {
			centre, best = u, v
		}
	}
	u, ll := maximize(f, centre, step, lo, hi, logVarTol)
	c.s2, c.ll = math.Exp(u), ll
	return c, nil
}
