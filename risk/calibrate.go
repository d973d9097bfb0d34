package risk

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// Calibrate returns the largest x in [lo, hi] with bound(x) ≤ risk, for a
// bound that is non-decreasing in x (a RAD bound as a function of ε, or of
// 1/σ). Monotonicity is checked on a grid first, because bisection on a
// non-monotone bound would silently return a parameter that violates the
// risk elsewhere; a violation is an error. If even bound(hi) ≤ risk it
// returns hi and ErrUnconstrained.
func Calibrate(bound func(x float64) (float64, error), risk, lo, hi float64) (float64, error) {
	if err := checkRisk(risk); err != nil {
		return 0, err
	}
	if !(lo < hi) || math.IsInf(hi, 0) || math.IsNaN(lo) {
		return 0, param.Invalid("hi", hi, fmt.Sprintf("must be finite and above lo = %v", lo))
	}
	const grid = 64
	prev := math.Inf(-1)
	last := lo
	for i := 0; i <= grid; i++ {
		x := lo + (hi-lo)*float64(i)/grid
		v, err := bound(x)
		if err != nil {
			return 0, err
		}
		if math.IsNaN(v) {
			return 0, errorf("bound is NaN at %v", x)
		}
		if v < prev-1e-12 {
			return 0, errorf("bound is not monotone: %v at %v after %v", v, x, prev)
		}
		prev = v
		if v <= risk {
			last = x
		}
	}
	if v, _ := bound(lo); v > risk {
		return 0, errorf("bound %v already exceeds the accepted risk %v at the lower end %v", v, risk, lo)
	}
	if prev <= risk {
		return hi, ErrUnconstrained
	}
	// Bisect between the last grid point inside and the next one outside.
	a, _, err := numeric.BisectErr(func(x float64) (bool, error) {
		v, err := bound(x)
		return v <= risk, err
	}, last, math.Min(hi, last+(hi-lo)/grid), numeric.Tol{Abs: 1e-14, Rel: 1e-14, MaxIter: 200})
	if err != nil {
		return 0, err
	}
	return a, nil
}

// sup returns ErrUnconstrained if the risk is not below the bound's supremum.
func checkBelow(risk, supremum float64) error {
	if err := checkRisk(risk); err != nil {
		return err
	}
	if risk >= supremum {
		return ErrUnconstrained
	}
	return nil
}

// CalibrateGRR returns the largest ε for which GRR over m values has 0-RAD at
// most risk under a uniform prior (Example 5.4):
// ε = ln((1 + γm)/(1 − γm/(m−1))). It is also the black-box inverse of
// Corollary 5.16 at δ = 0, since GRR attains that bound.
func CalibrateGRR(risk float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	return math.Log1p(risk*fm) - math.Log1p(-risk*fm/(fm-1)), nil
}

// CalibrateGRRPrior inverts GRRPrior (membership adversary, any prior):
// ε = ln((1 + γ(m−1)/(1−κ_π))/(1 − γ/(1−κ_π))).
func CalibrateGRRPrior(risk float64, prior []float64) (float64, error) {
	if err := checkPrior(prior); err != nil {
		return 0, err
	}
	c := 1 - Kappa(prior)
	if err := checkBelow(risk, c); err != nil {
		return 0, err
	}
	return math.Log1p(risk*float64(len(prior)-1)/c) - math.Log1p(-risk/c), nil
}

// CalibrateEpsDelta returns the largest ε such that every (ε, δ)-DP mechanism
// has 0-RAD at most risk under a uniform prior on m categories, inverting
// Corollary 5.16: with c = γm/(m−1), e^ε = (1 + c(m−1) − δm)/(1 − c).
func CalibrateEpsDelta(risk, delta float64, m int) (float64, error) {
	if err := firstErr(checkDelta(delta), checkM(m)); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	c := risk * fm / (fm - 1)
	num := 1 + c*(fm-1) - delta*fm
	if num < 1-c {
		return 0, param.Invalid("delta", delta, fmt.Sprintf("alone exceeds the accepted risk %v", risk))
	}
	return math.Log(num) - math.Log1p(-c), nil
}

// EpsilonFromRAD is Eq. (5.60): the smallest ε consistent with an observed
// 0-RAD γ̃ against an ε-DP mechanism with a uniform prior on m categories and
// no auxiliary knowledge, ε̃ = ln((γ̃m + 1)/(1 − γ̃m/(m−1))), inverting
// Corollary 5.16 at δ = 0. A non-positive γ̃ implies nothing (0); γ̃ at or
// above (m−1)/m implies no finite ε (ErrNotInvertible).
func EpsilonFromRAD(rad float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	if math.IsNaN(rad) {
		return 0, param.Invalid("rad", rad, "must be a number")
	}
	fm := float64(m)
	switch {
	case rad <= 0:
		return 0, nil
	case rad >= (fm-1)/fm:
		return math.Inf(1), ErrNotInvertible
	}
	return math.Log1p(rad*fm) - math.Log1p(-rad*fm/(fm-1)), nil
}

// CalibrateLaplace returns the largest ε for which the ε-DP Laplace mechanism
// has 0-RAD at most risk for every m query values in a range of one
// sensitivity, inverting Eq. (A.18): ε = −2(m−1)·ln(1 − γm/(m−1)).
func CalibrateLaplace(risk float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	return -2 * (fm - 1) * math.Log1p(-risk*fm/(fm-1)), nil
}

// CalibrateGaussian returns the smallest σ (in units of the sensitivity) for
// which the Gaussian mechanism has 0-RAD at most risk for every m query values
// in a unit range, inverting Eq. (A.12):
// σ = 1/(2(m−1)·Φ⁻¹((1 + γm/(m−1))/2)).
func CalibrateGaussian(risk float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	return 1 / (2 * (fm - 1) * numeric.PhiInv((1+risk*fm/(fm-1))/2)), nil
}

// maxEpsilon caps the search range of the bisection calibrators; beyond it
// every bound here is within float64 rounding of its supremum.
const maxEpsilon = 60

// CalibrateOUE returns the largest ε for which OUE over m values has 0-RAD at
// most risk (uniform prior), by checked bisection (the thesis uses bisection
// with tolerance 1e-6; this one runs to float64 resolution). OUE's RAD never
// exceeds (m−1)/(2m), so a larger risk gives ErrUnconstrained.
func CalibrateOUE(risk float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	sup := float64(m-1) / (2 * float64(m))
	if err := checkBelow(risk, sup); err != nil {
		return 0, err
	}
	eps, err := Calibrate(func(e float64) (float64, error) { return OUE(e, m) }, risk, 0, maxEpsilon)
	if errors.Is(err, ErrUnconstrained) {
		return 0, errorf("OUE risk %v is within rounding of the supremum %v; calibration is ill-conditioned", risk, sup)
	}
	return eps, err
}

// CalibrateSubsetSelection returns the largest ε for which subset selection
// over m values has 0-RAD at most risk (uniform prior), by checked bisection
// (ω changes with ε, so there is no closed form).
func CalibrateSubsetSelection(risk float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	return Calibrate(func(e float64) (float64, error) { return SubsetSelection(e, m) }, risk, 0, maxEpsilon)
}

// CalibrateDPSGD returns the smallest noise multiplier σ for which T steps of
// full-batch DP-SGD keep the Theorem 5.11 bound (DPSGD) at most risk for a
// uniform prior on m candidates. The thesis's closed form (Example 5.17)
// depends on σ through α*; solving the bound directly in μ = √T/σ avoids the
// case split.
func CalibrateDPSGD(risk float64, steps, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	if err := checkSteps(steps); err != nil {
		return 0, err
	}
	fm := float64(m)
	if err := checkBelow(risk, (fm-1)/fm); err != nil {
		return 0, err
	}
	// The bound is non-decreasing in μ; find the largest admissible μ.
	const maxMu = 40
	mu, err := Calibrate(func(mu float64) (float64, error) { return GDPUniform(mu, m) }, risk, 0, maxMu)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(float64(steps)) / mu, nil
}

// CalibrateHayesLaplace is the ReRo-based calibration the thesis compares
// against in Fig 5.2: the largest ε for which Hayes et al.'s bound for the
// ε-DP Laplace mechanism, 1 − f_Lap(1/m; ε), keeps the reconstruction
// success probability at most rero. Unlike RAD, ReRo includes the chance
// baseline 1/m, so rero must exceed it.
func CalibrateHayesLaplace(rero float64, m int) (float64, error) {
	if err := checkM(m); err != nil {
		return 0, err
	}
	if rero <= 1/float64(m) {
		return 0, param.Invalid("rero", rero, fmt.Sprintf("must be above the chance baseline 1/m = %v", 1/float64(m)))
	}
	eps, err := Calibrate(func(e float64) (float64, error) {
		return HayesReRo(accountant.LaplaceTradeOff{Epsilon: e}, 1/float64(m)), nil
	}, rero, 0, maxEpsilon)
	return eps, err
}
