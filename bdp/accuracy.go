package bdp

import (
	"math"

	"github.com/tracepriv/tracepriv/param"
)

// LaplaceAlpha is the (α, β)-accuracy of the Laplace mechanism with
// sensitivity sens and DP parameter τ, α = ln(1/β)·sens/τ (Prop 2.10, exact
// for a scalar release: Pr[|Lap(b)| ≥ α] = e^{−α/b}). Under a BDP
// calibration τ = ε/factor, so α grows by the factor (Cor 6.5, 6.15, 6.21).
func LaplaceAlpha(beta, sens, tau float64) (float64, error) {
	if err := param.First(param.InOpen("beta", beta, 0, 1), param.Positive("sensitivity", sens), param.Positive("tau", tau)); err != nil {
		return 0, err
	}
	return -math.Log(beta) * sens / tau, nil
}

// FreeLunch is Proposition 6.1: a mechanism that is ε-BDP against arbitrary
// correlation and (α, β)-accurate with β < 1/(e^ε + 1) must have
// α > range/2, where range = max |f(D) − f(D')|. It returns that lower limit
// on α and whether the proposition applies to β.
func FreeLunch(eps, beta, fRange float64) (alphaMin float64, applies bool) {
	if beta < 0 || beta >= 1/(math.Exp(eps)+1) {
		return 0, false
	}
	return fRange / 2, true
}
