package noise

import (
	"fmt"

	"github.com/tracepriv/tracepriv/param"
)

// minEpsilon is the smallest privacy parameter the Laplace sampler accepts.
// Below it the geometric sampler's truncation at MaxInt64 becomes likely
// (Google's secure-noise note makes the same restriction).
const minEpsilon = 0x1p-50

// paramError reports v as an invalid value of name that must be want.
func paramError(name string, v float64, want string) error {
	return param.Invalid(name, v, "must be "+want)
}

// checkPositive accepts finite x > 0.
func checkPositive(name string, x float64) error { return param.Positive(name, x) }

func checkEpsilon(eps float64) error {
	if err := param.AtLeast("epsilon", eps, minEpsilon); err != nil {
		return paramError("epsilon", eps, fmt.Sprintf("finite and >= 2^-50 (%g)", minEpsilon))
	}
	return nil
}

func checkProb(p float64) error { return param.Probability("p", p) }
