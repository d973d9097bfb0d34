// Package scaletest is the white-box noise audit every "audit with power"
// shares: an exact one-sided test that a mechanism's noise is at least as
// large as it claims, and a lower confidence bound on how much smaller it
// is, from many independent draws of known noise.
//
//	obs := []scaletest.Obs{scaletest.PlanarRadius(r1, eps), scaletest.PlanarRadius(r2, eps)}
//	res, err := scaletest.Test(obs, 0.95)
//	// res.Violation: the draws prove less noise than claimed;
//	// res.KappaLower·ε is the ε the noise spends, at least, at res.Confidence.
//
// # The test
//
// Each observation is the magnitude of one draw of noise whose law the
// mechanism states (|Z| for discrete Laplace noise on a count, the radius of
// planar Laplace noise, a squared whitened Gaussian norm). Let s be its
// survival probability under the stated law, randomised for a discrete law
// (s = P(|Z| > a) + V·P(|Z| = a) with V uniform on [0, 1], drawn by the
// auditor): under the stated law s is uniform on (0, 1), so e = −ln s is
// Exp(1), and for n independent draws S = Σ e is Gamma(n, 1), exactly.
// Less noise than stated makes the magnitudes small, s large and S small:
// the test flags when P(Gamma(n, 1) <= S) <= 1 − confidence. Against a
// scale family this is the likelihood-ratio (Neyman–Pearson) test: for
// Laplace noise −ln s is λ|Z| itself.
//
// # The bound
//
// kappa multiplies the law's precision (the rate λ of Laplace noise, the
// inverse variance of Gaussian noise): the stated law is kappa = 1, noise
// scaled by f < 1 is kappa = 1/f (Laplace) or 1/f² (Gaussian). A
// mechanism's ε is proportional to kappa for both (ε = λ·Δ; Rényi ε =
// λΔ²/(2σ²)), so KappaLower·ε bounds the ε its noise actually spends. S(κ)
// increases with κ (more precision, smaller survival at a fixed magnitude),
// and for the true κ* it is Gamma(n, 1), so κ_L = inf{κ : S(κ) > q}, q the
// (1 − confidence) quantile of Gamma(n, 1), exceeds κ* with probability
// 1 − confidence at most: a lower confidence bound, exact for every n.
//
// The draws must be independent given everything before them (a draw may be
// chosen by earlier draws, never by its own value), and the magnitudes must
// be of the noise itself: the auditor knows the true value it was added to.
package scaletest

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// Obs is one observation: the log survival probability ln s(κ) of the
// observed magnitude under the stated law with its precision multiplied by
// kappa. It must be non-increasing in kappa.
type Obs func(kappa float64) float64

// Result is the outcome of Test.
type Result struct {
	// Draws is the number of observations n.
	Draws int `json:"draws"`
	// Statistic is S(1) = Σ −ln s_i under the stated law; Gamma(n, 1) if
	// the noise is as stated.
	Statistic float64 `json:"statistic"`
	// PValue is P(Gamma(n, 1) <= Statistic): the probability of noise this
	// small, or smaller, if it were as stated.
	PValue float64 `json:"p_value"`
	// Confidence is the level of KappaLower; the test flags a mechanism
	// whose noise is as stated with probability 1 − Confidence.
	Confidence float64 `json:"confidence"`
	// KappaLower is the lower confidence bound on the precision multiplier
	// and KappaPoint its estimate (S(κ) = n).
	KappaLower float64 `json:"kappa_lower"`
	KappaPoint float64 `json:"kappa_point"`
	// Violation is PValue <= 1 − Confidence (equivalently KappaLower > 1):
	// the draws prove less noise than stated.
	Violation bool `json:"violation"`
}

// Test runs the exact test on obs at the given confidence (in (0, 1)).
func Test(obs []Obs, confidence float64) (Result, error) {
	if len(obs) == 0 {
		return Result{}, errors.New("scaletest: no observations")
	}
	if !(confidence > 0 && confidence < 1) {
		return Result{}, fmt.Errorf("scaletest: confidence must be in (0, 1), got %v", confidence)
	}
	n := float64(len(obs))
	stat := func(k float64) float64 {
		s := 0.0
		for _, o := range obs {
			s -= o(k)
		}
		return s
	}
	alpha := 1 - confidence
	q := mathext.GammaIncRegInv(n, alpha)
	r := Result{Draws: len(obs), Confidence: confidence, Statistic: stat(1)}
	r.PValue = mathext.GammaIncReg(n, r.Statistic)
	r.Violation = r.PValue <= alpha
	root := func(target float64) float64 {
		below := func(k float64) bool { return stat(k) <= target }
		lo, hi := 1e-12, 1.0
		if below(hi) {
			lo, hi = numeric.GrowBracket(below, hi, 2)
			if math.IsInf(hi, 1) {
				return math.Inf(1)
			}
		} else {
			for !below(lo) && lo > 1e-300 {
				lo /= 1e6
			}
			if !below(lo) {
				return 0
			}
			hi = math.Min(hi, 1)
		}
		// lo: S(lo) <= target, the conservative side of a lower bound.
		lo, _ = numeric.Bisect(below, lo, hi, numeric.Tol{Rel: 1e-9})
		return lo
	}
	// An unbounded root (noise that no finite precision explains, such as
	// none at all on a continuous law) is reported as the largest float,
	// which JSON can carry.
	r.KappaLower = math.Min(root(q), math.MaxFloat64)
	r.KappaPoint = math.Min(root(n), math.MaxFloat64)
	return r, nil
}

// DiscreteLaplace is the observation |Z| = a of discrete Laplace noise
// stated as P(Z = k) ∝ e^{−λ|k|}, randomised by v, uniform on [0, 1] and
// drawn independently of everything else. Its randomised survival
// P(|Z| > a) + v·P(|Z| = a) is (2q + v(1−q))/(1+q) for a = 0 and
// 2q^a(q + v(1−q))/(1+q) above, q = e^{−κλ}.
func DiscreteLaplace(a int64, lambda, v float64) Obs {
	if a < 0 {
		a = -a
	}
	return func(k float64) float64 {
		l := k * lambda
		q := math.Exp(-l)
		lq := math.Log1p(q)
		if a == 0 {
			return math.Log(2*q+v*(1-q)) - lq
		}
		return math.Ln2 - float64(a)*l + math.Log(q+v*(1-q)) - lq
	}
}

// PlanarRadius is the observation of the radius r of planar Laplace noise
// stated with parameter eps: the radius is Gamma(2, 1/eps), with survival
// e^{−κ·eps·r}(1 + κ·eps·r).
func PlanarRadius(r, eps float64) Obs {
	return func(k float64) float64 {
		x := k * eps * r
		return -x + math.Log1p(x)
	}
}

// ChiSquare is the observation of q = ‖w‖², w the k coordinates of
// Gaussian noise whitened by its stated covariance: χ²(k) under the stated
// law, survival P(χ²_k >= κq).
func ChiSquare(q float64, k int) Obs {
	return func(kappa float64) float64 {
		s := mathext.GammaIncRegComp(float64(k)/2, kappa*q/2)
		if s > 0 {
			return math.Log(s)
		}
		// Underflow: the leading term of the upper tail,
		// ln Γ(a, x) ≈ (a−1) ln x − x − ln Γ(a).
		a, x := float64(k)/2, kappa*q/2
		lg, _ := math.Lgamma(a)
		return (a-1)*math.Log(x) - x - lg
	}
}
