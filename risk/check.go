package risk

import (
	"errors"
	"fmt"
	"math"
)

// ErrUnconstrained is returned by calibrators when the accepted risk is at
// least the largest value the bound can take: every parameter satisfies it,
// so there is nothing to calibrate.
var ErrUnconstrained = errors.New("risk: accepted risk is not below the bound's supremum; any parameter satisfies it")

// ErrNotInvertible is returned when an empirical RAD is at or above the
// supremum of the bound being inverted, so it implies no finite ε.
var ErrNotInvertible = errors.New("risk: empirical RAD is at or above the bound's supremum; no finite epsilon is implied")

func checkEpsilon(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0 {
		return fmt.Errorf("risk: epsilon must be finite and non-negative, got %v", eps)
	}
	return nil
}

func checkDelta(delta float64) error {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return fmt.Errorf("risk: delta must be in [0, 1), got %v", delta)
	}
	return nil
}

func checkSigma(sigma float64) error {
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return fmt.Errorf("risk: sigma must be finite and positive, got %v", sigma)
	}
	return nil
}

func checkM(m int) error {
	if m < 2 {
		return fmt.Errorf("risk: need at least m = 2 candidate values, got %d", m)
	}
	return nil
}

func checkRisk(gamma float64) error {
	if math.IsNaN(gamma) || gamma <= 0 || gamma >= 1 {
		return fmt.Errorf("risk: accepted risk must be in (0, 1), got %v", gamma)
	}
	return nil
}

// checkPrior verifies that p is a probability vector (within 1e-9).
func checkPrior(p []float64) error {
	if len(p) < 2 {
		return fmt.Errorf("risk: prior needs at least 2 values, got %d", len(p))
	}
	s := 0.0
	for i, v := range p {
		if math.IsNaN(v) || v < 0 {
			return fmt.Errorf("risk: prior[%d] = %v is not a probability", i, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("risk: prior sums to %v, not 1", s)
	}
	return nil
}

// Uniform returns the uniform prior over m values.
func Uniform(m int) []float64 {
	p := make([]float64, m)
	for i := range p {
		p[i] = 1 / float64(m)
	}
	return p
}

// Kappa returns κ_π = Σ π_x², the probability that two independent draws
// from π coincide: the chance baseline that caps RAD at 1−κ_π.
func Kappa(prior []float64) float64 {
	k := 0.0
	for _, p := range prior {
		k += p * p
	}
	return k
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("risk: "+format, args...)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
