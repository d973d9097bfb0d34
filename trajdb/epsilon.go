package trajdb

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// MinEpsilon is the smallest epsilon a release accepts. Below it every
// noisy count's scale exceeds a thousand times its sensitivity, so the
// counts are noise: the synthetic database grows like 1/epsilon (189,301
// trajectories for the 3 persons of internal/sample at 0.001 with the
// n-gram tree, over a minute at 0.0001, no end at 1e-300) and carries
// nothing of the data.
const MinEpsilon = 1e-3

// CheckEpsilon returns a *param.Error named "epsilon" unless epsilon is a
// budget a release can spend: finite and at least MinEpsilon.
func CheckEpsilon(epsilon float64) error {
	if !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return param.Invalid("epsilon", epsilon, "must be positive and finite, e.g. 1")
	}
	if epsilon < MinEpsilon {
		return param.Invalid("epsilon", epsilon, fmt.Sprintf("must be at least %g: below it the noise swamps every count and the release grows like 1/epsilon without telling anything of the data (give at least %g)", MinEpsilon, MinEpsilon))
	}
	return nil
}
