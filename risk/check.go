package risk

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// ErrUnconstrained is returned by calibrators when the accepted risk is at
// least the largest value the bound can take: every parameter satisfies it,
// so there is nothing to calibrate.
var ErrUnconstrained = errors.New("risk: accepted risk is not below the bound's supremum; any parameter satisfies it")

// ErrNotInvertible is returned when an empirical RAD is at or above the
// supremum of the bound being inverted, so it implies no finite ε.
var ErrNotInvertible = errors.New("risk: empirical RAD is at or above the bound's supremum; no finite epsilon is implied")

// The parameter checks return *param.Error (errors.Is(err,
// param.ErrInvalid)), named as the functions' arguments are.

func checkEpsilon(eps float64) error { return param.NonNegative("epsilon", eps) }

func checkDelta(delta float64) error { return param.InRightOpen("delta", delta, 0, 1) }

func checkSigma(sigma float64) error { return param.Positive("sigma", sigma) }

func checkM(m int) error { return param.AtLeastInt("m", m, 2) }

func checkSteps(steps int) error { return param.AtLeastInt("steps", steps, 1) }

func checkRisk(gamma float64) error { return param.InOpen("risk", gamma, 0, 1) }

// checkPrior verifies that p is a probability vector (within 1e-9).
func checkPrior(p []float64) error {
	if len(p) < 2 {
		return param.Invalid("prior", fmt.Sprintf("%d values", len(p)), "must have at least 2 values")
	}
	s := 0.0
	for i, v := range p {
		if math.IsNaN(v) || v < 0 {
			return param.Invalid(fmt.Sprintf("prior[%d]", i), v, "must be a probability")
		}
		s += v
	}
	if math.Abs(s-1) > 1e-9 {
		return param.Invalid("prior", fmt.Sprintf("a sum of %v", s), "must sum to 1")
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

var firstErr = param.First
