package noise

import (
	"errors"
	"fmt"
	"math"
)

// ErrParam is wrapped by every parameter-validation error of this package, so
// callers can branch with errors.Is(err, noise.ErrParam).
var ErrParam = errors.New("noise: invalid parameter")

// minEpsilon is the smallest privacy parameter the Laplace sampler accepts.
// Below it the geometric sampler's truncation at MaxInt64 becomes likely
// (Google's secure-noise note makes the same restriction).
const minEpsilon = 0x1p-50

func paramError(name string, v float64, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrParam, name, v, want)
}

// checkPositive accepts finite x > 0.
func checkPositive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 1) {
		return paramError(name, x, "finite and > 0")
	}
	return nil
}

func checkEpsilon(eps float64) error {
	if !(eps >= minEpsilon) || math.IsInf(eps, 1) {
		return paramError("epsilon", eps, fmt.Sprintf("finite and >= 2^-50 (%g)", minEpsilon))
	}
	return nil
}

func checkDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return paramError("delta", delta, "in (0, 1)")
	}
	return nil
}

func checkProb(p float64) error {
	if !(p >= 0 && p <= 1) {
		return paramError("p", p, "in [0, 1]")
	}
	return nil
}
