package risk

import "github.com/tracepriv/tracepriv/accountant"

// GDPDelta is the δ(ε) curve of μ-GDP (Dong, Roth, Su, Cor. 2.13), the exact
// privacy profile of the Gaussian mechanism with μ = Δ/σ.
//
// Deprecated: use accountant.GDPDelta, the one home of the formula.
func GDPDelta(mu, eps float64) (float64, error) { return accountant.GDPDelta(mu, eps) }

// GaussianSigma returns the smallest σ for which the Gaussian mechanism with
// ℓ₂ sensitivity sens is (ε, δ)-DP (Balle and Wang's analytic Gaussian
// mechanism).
//
// Deprecated: use accountant.GaussianSigma, the one home of the calibration.
func GaussianSigma(eps, delta, sens float64) (float64, error) {
	return accountant.GaussianSigma(eps, delta, sens)
}
