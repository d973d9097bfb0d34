package accountant

import "github.com/tracepriv/tracepriv/internal/numeric"

// The standard-normal helpers of the GDP and analytic-Gaussian formulas
// live in internal/numeric. δ(ε) = Φ(a) − e^ε Φ(b) cancels catastrophically
// when both terms are tiny, so gdpDelta works with logPhiScaled, log Φ
// without its Gaussian factor.
var (
	phi          = numeric.Phi
	phiInv       = numeric.PhiInv
	logPhi       = numeric.LogPhi
	logPhiScaled = numeric.LogPhiScaled
	erfcx        = numeric.Erfcx
)
