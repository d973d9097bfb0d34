package risk

import "math"

// GDPDelta is the δ(ε) curve of μ-GDP (Dong, Roth, Su, Cor. 2.13), which is
// also the exact privacy profile of the Gaussian mechanism with μ = Δ/σ
// (the analytic Gaussian condition, Eq. (2.1)):
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
//
// The difference is formed in log space, since both terms underflow or
// cancel at large ε.
func GDPDelta(mu, eps float64) (float64, error) {
	if math.IsNaN(mu) || mu < 0 || math.IsInf(mu, 0) {
		return 0, errorf("mu must be finite and non-negative, got %v", mu)
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	if mu == 0 {
		return 0, nil
	}
	la := logPhi(-eps/mu + mu/2)
	lb := eps + logPhi(-eps/mu-mu/2)
	if lb >= la {
		return 0, nil
	}
	return math.Exp(la) * -math.Expm1(lb-la), nil
}

// GaussianSigma returns the smallest σ for which the Gaussian mechanism with
// ℓ₂ sensitivity sens is (ε, δ)-DP, by solving GDPDelta(sens/σ, ε) = δ for μ
// (δ increases with μ). This is the analytic Gaussian mechanism of Balle and
// Wang; the accountant package has the general conversions.
func GaussianSigma(eps, delta, sens float64) (float64, error) {
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	if math.IsNaN(delta) || delta <= 0 || delta >= 1 {
		return 0, errorf("delta must be in (0, 1) for the Gaussian mechanism, got %v", delta)
	}
	if err := checkSigma(sens); err != nil {
		return 0, errorf("sensitivity must be finite and positive, got %v", sens)
	}
	d := func(mu float64) float64 { v, _ := GDPDelta(mu, eps); return v }
	lo, hi := 0.0, 1.0
	for d(hi) < delta {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, errorf("no Gaussian mechanism reaches delta %v at epsilon %v", delta, eps)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		c := lo + (hi-lo)/2
		if d(c) <= delta {
			lo = c
		} else {
			hi = c
		}
	}
	if lo == 0 {
		return 0, errorf("delta %v is too small to solve for at epsilon %v", delta, eps)
	}
	return sens / lo, nil
}
