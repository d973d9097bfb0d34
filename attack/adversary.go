package attack

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
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
	// variance; gp.Prior.Family gives a prior file's).
	Family gp.Family
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
}

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
	// the number of likelihoods (Cholesky factorisations) the search
	// computed.
	LogLikelihood float64 `json:"log_likelihood"`
	Evaluations   int     `json:"likelihood_evaluations"`
	// Jitter is the diagonal jitter the factorisation of Sigma + SigmaG
	// needed, counted as noise.
	Jitter float64 `json:"jitter"`
	// ReleaseWeight is the weight 1 - a of the release in the guarded
	// reconstruction z + a (posterior mean - z): 0 when the prior fits the
	// release, towards 1 when the estimated risk says the posterior mean
	// is worse than the release.
	ReleaseWeight float64 `json:"release_weight"`
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
// ts (seconds), with noise covariance sigmaG.
func Reconstruct(ts, z []float64, sigmaG mat.Symmetric, adv Adversary) (*Estimate, error) {
	n := len(ts)
	if n == 0 {
		return nil, errors.New("attack: empty release")
	}
	if len(z) != n || sigmaG == nil || sigmaG.SymmetricDim() != n {
		dim := 0
		if sigmaG != nil {
			dim = sigmaG.SymmetricDim()
		}
		return nil, fmt.Errorf("attack: %d times, %d released values and a %dx%d noise covariance", n, len(z), dim, dim)
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
	if !(adv.Nugget >= 0) || math.IsInf(adv.Nugget, 0) {
		return nil, fmt.Errorf("attack: nugget %v must be finite and >= 0", adv.Nugget)
	}
	if adv.Grid < 0 {
		return nil, fmt.Errorf("attack: grid of %d lengthscales", adv.Grid)
	}
	d, err := newDesign(ts, adv.Mean)
	if err != nil {
		return nil, err
	}
	s := &search{adv: adv, ts: ts, z: z, d: d, g: mat.NewSymDense(n, nil)}
	s.g.CopySym(sigmaG)
	for i := range n {
		s.g.SetSym(i, i, s.g.At(i, i)+adv.Nugget)
	}
	best, err := s.run()
	if err != nil {
		return nil, err
	}
	var sigma mat.SymDense
	sigma.ScaleSym(best.s2, best.k)
	p, err := krige(&sigma, s.g, z, d)
	if err != nil {
		return nil, err
	}
	fit := Fit{
		Kernel: adv.Family.Kernel, Variance: best.s2, Lengthscale: best.l, Choice: s.choice(),
		AtBound: s.atBound(best), Mean: adv.Mean.String(), LogLikelihood: p.g.logLik,
		Evaluations: s.evals, Jitter: p.jitter,
	}
	if fit.Kernel == gp.KernelPeriodic {
		fit.Period = adv.Family.Period
	}
	if d.p > 0 {
		fit.Coefficients, fit.StdErrors = d.coefficients(p.g.beta, p.g.betaCov(d.p))
		fit.ReferenceTime = d.tbar
	}
	est := &Estimate{Mean: p.mean, Variance: p.variance, Fit: fit}
	est.Fit.ReleaseWeight = 1 - guard(est, z, s.g, !adv.Unguarded)
	return est, nil
}

// search chooses the adversary's prior for one dimension.
type search struct {
	adv    Adversary
	ts, z  []float64
	d      *design
	g      *mat.SymDense // SigmaG
	m      *mat.SymDense // workspace for s^2 K + SigmaG
	evals  int
	lgrid  []float64
	vLo    float64
	vHi    float64
	lastEr error
}

// candidate is one lengthscale with its best variance.
type candidate struct {
	l, s2, ll float64
	k         *mat.SymDense // unit-variance Gram matrix at l
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

// logLik evaluates the likelihood at unit-variance Gram k scaled by s2.
func (s *search) logLik(k *mat.SymDense, s2 float64) float64 {
	n := len(s.z)
	if s.m == nil {
		s.m = mat.NewSymDense(n, nil)
	}
	kr, gr, mr := k.RawSymmetric(), s.g.RawSymmetric(), s.m.RawSymmetric()
	for i := range n {
		for j := i; j < n; j++ {
			mr.Data[i*mr.Stride+j] = s2*kr.Data[i*kr.Stride+j] + gr.Data[i*gr.Stride+j]
		}
	}
	s.evals++
	g, err := solveGLS(s.m, s.z, s.d)
	if err != nil {
		s.lastEr = err
		return math.Inf(-1)
	}
	return g.logLik
}

// scale returns a moment estimate of the prior variance: the variance of
// the release about its OLS mean minus the mean noise variance, floored at
// 1 % of the noise variance.
func (s *search) scale() float64 {
	n := len(s.z)
	noise := 0.0
	for i := range n {
		noise += s.g.At(i, i) / float64(n)
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
		// Keep only the best Gram matrix: at n points each is n^2 floats.
		if len(profiled) == 0 || c.ll > best.ll {
			best = c
		}
		c.k = nil
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
	k, err := s.adv.Family.Member(1, l)
	if err != nil {
		return candidate{}, fmt.Errorf("attack: %w", err)
	}
	c := candidate{l: l, k: gp.Gram(k, s.ts)}
	if s.adv.Variance > 0 {
		c.s2 = s.adv.Variance
		c.ll = s.logLik(c.k, c.s2)
		return c, nil
	}
	lo, hi := math.Log(s.vLo), math.Log(s.vHi)
	f := func(u float64) float64 { return s.logLik(c.k, math.Exp(u)) }
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
