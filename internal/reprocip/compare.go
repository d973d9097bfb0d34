package reprocip

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
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

// CompareRow is one mechanism in one setting of the comparison, at the
// setting's common total noise (MSE).
type CompareRow struct {
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
	// Posterior2Sigma is the GP adversary's 2-sigma at the secrets (mean
	// over them; planar for 2-D settings), with the mechanism's covariance
	// (for Laplace: its covariance, the best linear attack).
	Posterior2Sigma float64 `json:"posterior_2sigma"`
	// AttackRMSE is the empirical RMSE of the posterior-mean reconstruction
	// at the secrets over AttackDraws releases, and AttackWithinR the share
	// of secret points it puts within r.
	AttackRMSE    float64 `json:"attack_rmse"`
	AttackWithinR float64 `json:"attack_within_r"`
	AttackDraws   int     `json:"attack_draws"`
}

// CompareSetting is one problem of the comparison: a prior on a time
// axis, secrets, a privacy scale (lambda, r) for the epsilons, and either
// simulated truths (the paper's settings) or real positions.
type CompareSetting struct {
	Name    string
	Sigma   *mat.SymDense
	Secrets []cip.Secret
	Lambda  float64
	R       float64
	// Truth holds real traces (2-D, metres); nil means simulate 1-D
	// truths from the prior.
	Truth *attack.Planar
	// Adversary is the prior covariance the attacker reconstructs with;
	// nil means Sigma. (A design prior is chosen conservatively, e.g. with
	// a small variance; a realistic attacker uses the trace's own scale.)
	Adversary *mat.SymDense
	// Budget is the common total noise; 0 means "what Multiple Secrets
	// uses at per-secret budget 0.02 n" (all-basic settings) or 0.02 n.
	Budget float64
	// TargetEpsilon, if set, fixes the budget instead: the optimal
	// design's least noise for this epsilon.
	TargetEpsilon float64
}

// adversary returns the prior the attacker reconstructs with.
func (s CompareSetting) adversary() *mat.SymDense {
	if s.Adversary != nil {
		return s.Adversary
	}
	return s.Sigma
}

// Compare runs every mechanism on one setting. Randomness (simulated
// truths, noise draws) comes from src.
func Compare(s CompareSetting, src noise.Source) ([]CompareRow, error) {
	n := s.Sigma.SymmetricDim()
	basic := len(s.Secrets) == 1 && len(s.Secrets[0].Indices) == 1
	type design struct {
		name string
		g    *mat.SymDense
		lap  bool
	}
	var designs []design
	budget := s.Budget
	var paperMS *mat.SymDense
	switch {
	case s.TargetEpsilon > 0:
		targets := make([]float64, len(s.Secrets))
		for i, sec := range s.Secrets {
			t, err := cip.TargetLossFactor(s.TargetEpsilon, s.Lambda, s.R, sec.Locations())
			if err != nil {
				return nil, err
			}
			targets[i] = t
		}
		d, err := cip.OptimalTarget(s.Sigma, s.Secrets, targets, nil)
		if err != nil {
			return nil, err
		}
		budget = d.Budget
	case budget == 0 && !basic:
		d, _, err := cip.PaperMultipleSecrets(s.Sigma, s.Secrets, 0.02*float64(n), nil)
		if err != nil {
			return nil, err
		}
		paperMS, budget = d.SigmaG, d.Budget
	case budget == 0:
		budget = 0.02 * float64(n)
	}
	// The optimal design at the common budget.
	if basic {
		d, err := cip.OptimalBasic(s.Sigma, s.Secrets[0].Indices[0], budget)
		if err != nil {
			return nil, err
		}
		designs = append(designs, design{name: MechOptimal, g: d.SigmaG})
		p, err := cip.PaperSDPA(s.Sigma, s.Secrets[0], budget, nil)
		if err != nil {
			return nil, err
		}
		designs = append(designs, design{name: MechPaperSDPA, g: p.SigmaG})
	} else {
		d, err := cip.OptimalBudget(s.Sigma, s.Secrets, budget, nil)
		if err != nil {
			return nil, err
		}
		designs = append(designs, design{name: MechOptimal, g: d.SigmaG})
		if paperMS == nil {
			// Multiple Secrets is positively homogeneous in its per-secret
			// budget (closed-form SDP_A, then SDP_B), so it is rescaled to
			// the common total noise.
			d, _, err := cip.PaperMultipleSecrets(s.Sigma, s.Secrets, 1, nil)
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
	rows := make([]CompareRow, len(designs))
	var optEps float64
	for k, d := range designs {
		r := CompareRow{Setting: s.Name, Mechanism: d.name, MSE: mat.Trace(d.g), AttackDraws: compareAttackDraws}
		if !d.lap {
			ls, err := cip.LossFactors(s.Sigma, d.g, s.Secrets)
			if err != nil {
				return nil, err
			}
			worst, eps := 0.0, 0.0
			for i, l := range ls {
				worst = math.Max(worst, l)
				eps = math.Max(eps, cip.Epsilon(l, s.Lambda, s.R, s.Secrets[i].Locations()))
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
		post, err := cip.NewPosterior(s.adversary(), d.g)
		if err != nil {
			return nil, err
		}
		for _, i := range secretPts {
			v := math.Max(post.Cov.At(i, i), 0)
			if s.Truth != nil {
				v *= 2 // two independent dimensions
			}
			r.Posterior2Sigma += 2 * math.Sqrt(v) / float64(len(secretPts))
		}
		if err := attackRows(&r, s, d.g, d.lap, budget, secretPts, src); err != nil {
			return nil, err
		}
		rows[k] = r
	}
	return rows, nil
}

// attackRows fills the empirical attack columns of r: draws of the
// mechanism's noise on the truth (real, or simulated from the prior), then
// the posterior-mean reconstruction with the mechanism's covariance.
func attackRows(r *CompareRow, s CompareSetting, g *mat.SymDense, laplace bool, budget float64, secretPts []int, src noise.Source) error {
	n := s.Sigma.SymmetricDim()
	mn, err := noise.NewMultiNormal(g)
	if err != nil {
		return err
	}
	var prior *noise.MultiNormal
	if s.Truth == nil {
		if prior, err = noise.NewMultiNormal(s.Sigma); err != nil {
			return err
		}
	}
	lap := noise.PlanarLaplace{Epsilon: math.Sqrt(3 / (budget / float64(n))), Src: src}
	var se float64
	within, count := 0, 0
	for range compareAttackDraws {
		var truth, rel attack.Planar
		if s.Truth != nil {
			truth = *s.Truth
			rel = attack.Planar{East: make([]float64, n), North: make([]float64, n)}
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
		} else {
			// 1-D: the north coordinate is identically zero and noiseless.
			x := prior.Rand(nil, src)
			z := mn.Rand(nil, src)
			floats.Add(z, x)
			truth = attack.Planar{East: x, North: make([]float64, n)}
			rel = attack.Planar{East: z, North: make([]float64, n)}
		}
		rep, _, err := attack.Run(s.adversary(), g, truth, rel, secretPts, s.R)
		if err != nil {
			return err
		}
		se += rep.ReconstructedRMSE * rep.ReconstructedRMSE * float64(rep.Secrets)
		within += int(math.Round(rep.WithinRadius * float64(rep.Secrets)))
		count += rep.Secrets
	}
	r.AttackRMSE = math.Sqrt(se / float64(count))
	r.AttackWithinR = float64(within) / float64(count)
	return nil
}

func scaled(a *mat.SymDense, f float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(f, a)
	return &s
}

// PaperSettings are the comparison's settings on the paper's Figure 2
// setting (RBF on indices, n = 50, unit variance): the basic secret {24}
// at total noise 1 and all basic secrets at Multiple Secrets' total noise,
// for each l_eff; epsilons at lambda = 2, r = 1 (one prior standard
// deviation).
func PaperSettings(leffs []float64) []CompareSetting {
	var out []CompareSetting
	for _, l := range leffs {
		sigma := gp.Gram(gp.RBF{Variance: 1, Lengthscale: l}, gp.Indices(50))
		out = append(out,
			CompareSetting{Name: fmt.Sprintf("paper 2a: RBF n=50, l_eff %.3g, basic {24}", l), Sigma: sigma, Secrets: []cip.Secret{cip.Basic(24)}, Lambda: 2, R: 1},
			CompareSetting{Name: fmt.Sprintf("paper 2c: RBF n=50, l_eff %.3g, all basic secrets", l), Sigma: sigma, Secrets: cip.EveryPoint(50), Lambda: 2, R: 1})
	}
	return out
}

// CompareAll runs the settings, two at a time; setting i draws from
// source(i), so that seeded runs are reproducible (a seeded source is not
// safe for concurrent use).
func CompareAll(settings []CompareSetting, source func(i int) noise.Source, progress func(done, total int)) ([]CompareRow, error) {
	out := make([][]CompareRow, len(settings))
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
			out[i], errs[i] = Compare(s, source(i))
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(settings))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var rows []CompareRow
	for i := range settings {
		if errs[i] != nil {
			return nil, fmt.Errorf("reprocip: %s: %w", settings[i].Name, errs[i])
		}
		rows = append(rows, out[i]...)
	}
	return rows, nil
}
