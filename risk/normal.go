package risk

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// phi is the standard normal CDF, written with erfc so that the lower tail
// keeps its relative accuracy.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// phiInv is the standard normal quantile. It uses gonum's NormalQuantile
// rather than −√2·erfc⁻¹(2p), because math.Erfcinv loses the lower tail
// (it returns −Inf below p ≈ 1e-17).
func phiInv(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	return mathext.NormalQuantile(p)
}

// logPhi is log Φ(x), finite far into the lower tail where Φ underflows.
func logPhi(x float64) float64 {
	if x > -30 {
		return math.Log(phi(x))
	}
	// Mills-ratio asymptotics: Φ(x) ≈ φ(x)/|x| · (1 − 1/x² + 3/x⁴).
	x2 := x * x
	return -x2/2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log1p(-1/x2+3/(x2*x2))
}
