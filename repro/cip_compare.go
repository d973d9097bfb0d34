package repro

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
)

// Mechanism names of the comparison.
const (
	MechPaperSDPA      = "paper SDP_A"
	MechPaperMultiple  = "paper Multiple Secrets"
	MechOptimal        = "optimal (tracepriv)"
	MechIndependent    = "independent Gaussian"
	MechConcentrated   = "independent Gaussian, concentrated"
	MechPlanarLaplace  = "planar Laplace"
	compareAttackDraws = 200
)

// CIPCompareRow is one mechanism in one setting of the comparison, at the
// setting's common total noise (MSE).
type CIPCompareRow struct {
	Setting   string `json:"setting"`
	Mechanism string `json:"mechanism"`
	// MSE is the total noise variance per dimension, tr(SigmaG); every
	// mechanism of a setting has the same.
	MSE float64 `json:"mse_per_dimension"`
	// LossFactor is the worst exact (E1) loss factor over the setting's
	// secrets (Gaussian mechanisms; nil for planar Laplace, which is not
	// Gaussian), Epsilon the matching epsilon at the setting's (lambda, r),
	// and RatioToOptimal Epsilon over the optimal design's.
	LossFactor     *Num     `json:"loss_factor,omitempty"`
	Epsilon        *Num     `json:"epsilon,omitempty"`
	RatioToOptimal *Num     `json:"epsilon_ratio_to_optimal,omitempty"`
	GeoIndEpsilonR *float64 `json:"geoind_epsilon_times_r,omitempty"`
	// Adversary says what the attacker of the setting knows and chooses.
	Adversary string `json:"adversary"`
	// Posterior2Sigma is twice the adversary's stated RMS error at the
	// secrets, 2 sqrt(mean over secrets and draws of its posterior
	// variance) (planar, var_east + var_north, in 2-D settings), with the
	// mechanism's covariance (for Laplace: Gaussian noise of its
	// covariance). For a known prior it is the exact posterior's.
	Posterior2Sigma float64 `json:"posterior_2sigma"`
	// ReconstructionRMSE is the RMSE of the adversary's reconstruction at
	// the secrets over AttackDraws releases, ReconstructionWithinR the
	// share of secret points (over all draws) it puts within r, and
	// Coverage95 the share whose truth lies in its 95 % posterior interval
	// (1-D) or ellipse (2-D): about 0.95 for a calibrated adversary.
	ReconstructionRMSE    float64 `json:"reconstruction_rmse"`
	ReconstructionWithinR float64 `json:"reconstruction_within_r"`
	Coverage95            float64 `json:"coverage_95"`
	// ReleaseRMSE and ReleaseWithinR are the same figures for the release
	// read as it is, on the same draws: the baseline every reconstruction
	// is read against.
	ReleaseRMSE    float64 `json:"release_rmse"`
	ReleaseWithinR float64 `json:"release_within_r"`
	// AttackRMSE and AttackWithinR are the attack: the figures of the
	// better (lower RMSE) of the two adversaries evaluated on the same
	// draws, the reconstruction and reading the release as it is, and
	// AttackReads says which ("reconstruction" or "release"). A
	// reconstruction worse than the release is never the attack.
	AttackRMSE    float64 `json:"attack_rmse"`
	AttackWithinR float64 `json:"attack_within_r"`
	AttackReads   string  `json:"attack_reads"`
	// ReconstructionWorseDraws counts the draws whose reconstruction RMSE
	// at the secrets exceeds the release's.
	ReconstructionWorseDraws int `json:"reconstruction_worse_draws"`
	// AttackReleaseWeight is the guard's mean weight on the release
	// (attack.Fit.ReleaseWeight) over draws and dimensions: 0 when the
	// reconstruction is the posterior mean itself (the chosen prior fits
	// the release, or the adversary is unguarded).
	AttackReleaseWeight float64 `json:"attack_release_weight"`
	// AdversaryLengthscale and AdversaryVariance are the medians over draws
	// and dimensions of the prior the adversary chose (constant for a known
	// prior); AttackJitter the largest diagonal jitter its factorisations
	// needed, counted as noise.
	AdversaryLengthscale float64 `json:"adversary_lengthscale"`
	AdversaryVariance    float64 `json:"adversary_variance"`
	AttackJitter         float64 `json:"attack_jitter"`
	AttackDraws          int     `json:"attack_draws"`
}

// CIPCompareSetting is one problem of the comparison: a prior on a time
// axis, secrets, a privacy scale (lambda, r) for the epsilons, either
// simulated truths (the paper's settings) or real positions, and the
// adversary that attacks the releases.
type CIPCompareSetting struct {
	Name string
	// Times are the points' times (seconds; sample indices in the paper's
	// settings) and Prior the design prior on them: per dimension a GP
	// with Prior's kernel at its nominal lengthscale and variance,
	// Sigma = Gram(kernel, Times).
	Times []float64
	Prior *prior.Prior
	// Secrets, and the privacy scale of the epsilons.
	Secrets []cip.Secret
	Lambda  float64
	R       float64
	// Truth holds real traces (2-D, metres); nil means simulate 1-D
	// truths from the prior, with mean zero.
	Truth *attack.Planar
	// Adversary is the attacker (KnownPriorAdversary for simulated truths,
	// ClassAdversary for real ones). It knows every mechanism's noise
	// covariance.
	Adversary attack.Adversary
	// Budget is the common total noise; 0 means "what Multiple Secrets
	// uses at per-secret budget 0.02 n" (all-basic settings) or 0.02 n.
	Budget float64
	// TargetEpsilon, if set, fixes the budget instead: the optimal
	// design's least noise for this epsilon.
	TargetEpsilon float64
}

// KnownPriorAdversary is the strongest adversary where the truths are
// drawn from p itself with mean zero: it knows the prior (p's kernel at its
// nominal lengthscale and variance) and the mean, and reconstructs by the
// exact posterior mean. It is unguarded: under the true prior the posterior
// mean minimises the expected error at every point, its error variance is
// at most the release's there, and shrinking it towards the release by a
// weight estimated from the draw can only add error.
func KnownPriorAdversary(p *prior.Prior) attack.Adversary {
	return attack.Adversary{
		Family:    prior.Family{Kernel: p.Kernel, LengthscaleMin: p.Lengthscale, LengthscaleMax: p.Lengthscale, Period: p.Period, Variance: p.Variance},
		Variance:  p.Variance,
		Mean:      attack.MeanKnown,
		Unguarded: true,
	}
}

// ClassAdversary is the adversary of p's public class on real traces, as
// tracepriv attack plays it: a member of p's family (lengthscale in its
// range, variance at least p's) chosen by restricted likelihood of the
// release, a linear trend estimated by GLS, and the release guard.
func ClassAdversary(p *prior.Prior) attack.Adversary {
	return attack.Adversary{Family: p.Family(), Mean: attack.MeanLinear}
}

// describe says in words what an adversary knows and chooses.
func describe(a attack.Adversary) string {
	var s string
	switch {
	case a.Family.Single() && a.Variance > 0:
		s = fmt.Sprintf("fixed prior %s, variance %.4g", a.Family, a.Variance)
	case a.Variance > 0:
		s = fmt.Sprintf("class %s, variance %.4g, lengthscale by likelihood", a.Family, a.Variance)
	default:
		s = fmt.Sprintf("class %s, variance >= %.4g, chosen by likelihood", a.Family, a.Family.Variance)
	}
	s += "; " + a.Mean.String() + " mean"
	if a.Unguarded {
		return s + "; posterior mean"
	}
	return s + "; guarded posterior mean"
}

// CIPCompare runs every mechanism on one setting. Randomness (simulated
// truths, noise draws) comes from src.
func CIPCompare(s CIPCompareSetting, src noise.Source) ([]CIPCompareRow, error) {
	n := len(s.Times)
	if n == 0 || s.Prior == nil {
		return nil, fmt.Errorf("repro: setting %q has %d times and prior %v", s.Name, n, s.Prior)
	}
	if s.Truth != nil && (len(s.Truth.East) != n || len(s.Truth.North) != n) {
		return nil, fmt.Errorf("repro: setting %q: %d times, truth %d/%d points", s.Name, n, len(s.Truth.East), len(s.Truth.North))
	}
	k, err := s.Prior.KernelFunc()
	if err != nil {
		return nil, fmt.Errorf("repro: setting %q: prior: %w", s.Name, err)
	}
	sigma := gp.Gram(k, s.Times)
	basic := len(s.Secrets) == 1 && len(s.Secrets[0].Indices) == 1
	type design struct {
		name string
		g    *mat.SymDense
		lap  bool
	}
	var designs []design
	// Every Gaussian design goes through cip.DesignNoise, the library's
	// one entry point, with the method named: MethodE3 runs (E2) for one
	// basic secret and (E3) otherwise, as tracepriv cip design does.
	designNoise := func(m cip.Method, budget float64, targets []float64) (*cip.NoiseDesign, error) {
		return cip.DesignNoise(cip.DesignRequest{Method: m, Sigma: sigma, Secrets: s.Secrets, Budget: budget, Targets: targets})
	}
	budget := s.Budget
	var paperMS *mat.SymDense
	switch {
	case s.TargetEpsilon > 0:
		targets, err := cip.TargetLossFactors(s.Secrets, s.TargetEpsilon, s.Lambda, s.R)
		if err != nil {
			return nil, err
		}
		d, err := designNoise(cip.MethodE3, 0, targets)
		if err != nil {
			return nil, err
		}
		budget = d.Budget
	case budget == 0 && !basic:
		d, err := designNoise(cip.MethodPaperMultipleSecrets, 0.02*float64(n), nil)
		if err != nil {
			return nil, err
		}
		paperMS, budget = d.SigmaG, d.Budget
	case budget == 0:
		budget = 0.02 * float64(n)
	}
	// The optimal design at the common budget.
	d, err := designNoise(cip.MethodE3, budget, nil)
	if err != nil {
		return nil, err
	}
	designs = append(designs, design{name: MechOptimal, g: d.SigmaG})
	if basic {
		p, err := designNoise(cip.MethodPaperSDPA, budget, nil)
		if err != nil {
			return nil, err
		}
		designs = append(designs, design{name: MechPaperSDPA, g: p.SigmaG})
	} else {
		if paperMS == nil {
			// Multiple Secrets is positively homogeneous in its per-secret
			// budget (closed-form SDP_A, then SDP_B), so it is rescaled to
			// the common total noise.
			d, err := designNoise(cip.MethodPaperMultipleSecrets, 1, nil)
			if err != nil {
				return nil, err
			}
			paperMS = scaled(d.SigmaG, budget/d.Budget)
		}
		designs = append(designs, design{name: MechPaperMultiple, g: paperMS})
	}
	uni, err := cip.IndependentUniform(n, budget)
	if err != nil {
		return nil, err
	}
	designs = append(designs, design{name: MechIndependent, g: uni})
	if basic {
		conc, err := cip.IndependentConcentrated(n, s.Secrets[0], budget)
		if err != nil {
			return nil, err
		}
		designs = append(designs, design{name: MechConcentrated, g: conc})
	}
	if s.Truth != nil {
		// Planar Laplace with the same per-point variance per dimension,
		// budget/n = E r^2 / 2 = 3/eps^2.
		designs = append(designs, design{name: MechPlanarLaplace, g: uni, lap: true})
	}

	var secretPts []int
	seen := map[int]bool{}
	for _, sec := range s.Secrets {
		for _, i := range sec.Indices {
			if !seen[i] {
				seen[i] = true
				secretPts = append(secretPts, i)
			}
		}
	}
	rows := make([]CIPCompareRow, len(designs))
	var optEps float64
	for k, d := range designs {
		r := CIPCompareRow{Setting: s.Name, Mechanism: d.name, MSE: mat.Trace(d.g), Adversary: describe(s.Adversary), AttackDraws: compareAttackDraws}
		if !d.lap {
			ls, err := cip.LossFactors(sigma, d.g, s.Secrets)
			if err != nil {
				return nil, err
			}
			worst, eps := 0.0, 0.0
			for i, l := range ls {
				worst = math.Max(worst, l)
				eps = math.Max(eps, cip.Epsilon(l, s.Lambda, s.R, s.Secrets[i].NumLocations()))
			}
			lf, e := Num(worst), Num(eps)
			r.LossFactor, r.Epsilon = &lf, &e
			if d.name == MechOptimal {
				optEps = eps
			}
			ratio := Num(eps / optEps)
			r.RatioToOptimal = &ratio
		} else {
			ge := math.Sqrt(3/(budget/float64(n))) * s.R
			r.GeoIndEpsilonR = &ge
		}
		if err := attackRows(&r, s, sigma, d.g, d.lap, budget, secretPts, src); err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		rows[k] = r
	}
	return rows, nil
}

// chi1_95 is the 95 % quantile of the chi-square distribution with one
// degree of freedom: a 1-D adversary's 95 % interval is d^2 <= chi1_95 V.
var chi1_95 = distuv.ChiSquared{K: 1}.Quantile(0.95)

// tally accumulates the attack columns over draws.
type tally struct {
	points                                       int
	se, rse, postVar, within, relWithin, covered float64
	worse                                        int
	weights, lengthscales, variances             []float64
	jitter                                       float64
}

func (a *tally) fit(f attack.Fit) {
	a.weights = append(a.weights, f.ReleaseWeight)
	a.lengthscales = append(a.lengthscales, f.Lengthscale)
	a.variances = append(a.variances, f.Variance)
	a.jitter = math.Max(a.jitter, f.Jitter)
}

// add1D scores a 1-D reconstruction est of truth x from release z at the
// secret points (distinct indices).
func (a *tally) add1D(x, z []float64, est *attack.Estimate, secretPts []int, radius float64) {
	se, rse := 0.0, 0.0
	for _, i := range secretPts {
		d, dr := est.Mean[i]-x[i], z[i]-x[i]
		se += d * d
		rse += dr * dr
		if math.Abs(d) <= radius {
			a.within++
		}
		if math.Abs(dr) <= radius {
			a.relWithin++
		}
		if d*d <= chi1_95*est.Variance[i] {
			a.covered++
		}
		a.postVar += est.Variance[i]
	}
	a.se += se
	a.rse += rse
	if se > rse {
		a.worse++
	}
	a.points += len(secretPts)
	a.fit(est.Fit)
}

// add2D adds the report of a planar attack.
func (a *tally) add2D(rep *attack.Report) {
	k := float64(rep.Secrets)
	a.points += rep.Secrets
	a.se += k * rep.ReconstructedRMSE * rep.ReconstructedRMSE
	a.rse += k * rep.ReleasedRMSE * rep.ReleasedRMSE
	a.within += k * rep.WithinRadius
	a.relWithin += k * rep.ReleaseWithinRadius
	a.covered += k * rep.Coverage95
	sd := rep.Posterior2Sigma / 2
	a.postVar += k * sd * sd
	if rep.ReconstructedRMSE > rep.ReleasedRMSE {
		a.worse++
	}
	a.fit(rep.Adversary.East)
	a.fit(rep.Adversary.North)
}

func (a *tally) fill(r *CIPCompareRow) {
	k := float64(a.points)
	r.ReconstructionRMSE, r.ReleaseRMSE = math.Sqrt(a.se/k), math.Sqrt(a.rse/k)
	r.ReconstructionWithinR, r.ReleaseWithinR, r.Coverage95 = a.within/k, a.relWithin/k, a.covered/k
	r.AttackRMSE, r.AttackWithinR, r.AttackReads = r.ReconstructionRMSE, r.ReconstructionWithinR, "reconstruction"
	if r.ReleaseRMSE < r.ReconstructionRMSE {
		r.AttackRMSE, r.AttackWithinR, r.AttackReads = r.ReleaseRMSE, r.ReleaseWithinR, "release"
	}
	r.Posterior2Sigma = 2 * math.Sqrt(a.postVar/k)
	r.ReconstructionWorseDraws = a.worse
	r.AttackReleaseWeight = stat.Mean(a.weights, nil)
	r.AdversaryLengthscale = median(a.lengthscales)
	r.AdversaryVariance = median(a.variances)
	r.AttackJitter = a.jitter
}

func median(v []float64) float64 {
	c := slices.Clone(v)
	slices.Sort(c)
	return stat.Quantile(0.5, stat.Empirical, c, nil)
}

// attackRows fills the attack columns of r: draws of the mechanism's noise
// on the truth (real, or simulated from the prior), each attacked by the
// setting's adversary with the mechanism's covariance, and the release
// read as it is on the same draws.
func attackRows(r *CIPCompareRow, s CIPCompareSetting, sigma, g *mat.SymDense, laplace bool, budget float64, secretPts []int, src noise.Source) error {
	n := len(s.Times)
	mn, err := noise.NewMultiNormal(g)
	if err != nil {
		return err
	}
	var prior *noise.MultiNormal
	if s.Truth == nil {
		if prior, err = noise.NewMultiNormal(sigma); err != nil {
			return err
		}
	}
	lap := noise.PlanarLaplace{Epsilon: math.Sqrt(3 / (budget / float64(n))), Src: src}
	var t tally
	for range compareAttackDraws {
		if s.Truth == nil {
			// 1-D: one coordinate, truth from the prior, mean zero.
			x := prior.Rand(nil, src)
			z := mn.Rand(nil, src)
			floats.Add(z, x)
			est, err := attack.Reconstruct(s.Times, z, g, s.Adversary)
			if err != nil {
				return err
			}
			t.add1D(x, z, est, secretPts, s.R)
			continue
		}
		truth := *s.Truth
		rel := attack.Planar{East: make([]float64, n), North: make([]float64, n)}
		if laplace {
			for i := range n {
				dx, dy := lap.Rand()
				rel.East[i], rel.North[i] = truth.East[i]+dx, truth.North[i]+dy
			}
		} else {
			ge, gn := mn.Rand(nil, src), mn.Rand(nil, src)
			floats.AddTo(rel.East, truth.East, ge)
			floats.AddTo(rel.North, truth.North, gn)
		}
		rep, _, err := attack.Attack(s.Times, truth, rel, g, s.Adversary, secretPts, s.R)
		if err != nil {
			return err
		}
		t.add2D(rep)
	}
	t.fill(r)
	return nil
}

func scaled(a *mat.SymDense, f float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(f, a)
	return &s
}

// CIPPaperSettings are the comparison's settings on the paper's Figure 2
// setting (RBF on indices, n = 50, unit variance): the basic secret {24}
// at total noise 1 and all basic secrets at Multiple Secrets' total noise,
// for each l_eff; epsilons at lambda = 2, r = 1 (one prior standard
// deviation). Truths are drawn from the prior, so the adversary knows the
// prior and the mean (KnownPriorAdversary).
func CIPPaperSettings(leffs []float64) []CIPCompareSetting {
	var out []CIPCompareSetting
	for _, l := range leffs {
		p := &prior.Prior{Version: 1, Kernel: gp.KernelRBF, Variance: 1, Lengthscale: l}
		ts := gp.Indices(50)
		adv := KnownPriorAdversary(p)
		out = append(out,
			CIPCompareSetting{Name: fmt.Sprintf("paper 2a: RBF n=50, l_eff %.3g, basic {24}", l), Times: ts, Prior: p, Secrets: []cip.Secret{cip.Basic(24)}, Lambda: 2, R: 1, Adversary: adv},
			CIPCompareSetting{Name: fmt.Sprintf("paper 2c: RBF n=50, l_eff %.3g, all basic secrets", l), Times: ts, Prior: p, Secrets: cip.EveryPoint(50), Lambda: 2, R: 1, Adversary: adv})
	}
	return out
}

// CIPCompareAll runs the settings, two at a time; setting i draws from
// source(i), so that seeded runs are reproducible (a seeded source is not
// safe for concurrent use).
func CIPCompareAll(settings []CIPCompareSetting, source func(i int) noise.Source, progress func(done, total int)) ([]CIPCompareRow, error) {
	out := make([][]CIPCompareRow, len(settings))
	errs := make([]error, len(settings))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, s := range settings {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = CIPCompare(s, source(i))
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(settings))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var rows []CIPCompareRow
	for i := range settings {
		if errs[i] != nil {
			return nil, fmt.Errorf("repro: %s: %w", settings[i].Name, errs[i])
		}
		rows = append(rows, out[i]...)
	}
	return rows, nil
}
