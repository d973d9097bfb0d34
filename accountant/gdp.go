package accountant

import (
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// ComposeGDP returns the Gaussian-DP parameter of the adaptive composition
// of μᵢ-GDP mechanisms: ‖μ‖₂ = √(Σ μᵢ²) (Dong, Roth & Su 2022, Cor. 3.3;
// thesis Cor. 4.17).
func ComposeGDP(mus ...float64) (float64, error) {
	for _, m := range mus {
		if err := param.NonNegative("mu", m); err != nil {
			return 0, err
		}
	}
	// Scale by the largest entry so the squares neither overflow nor
	// underflow.
	return l2(mus), nil
}

func l2(v []float64) float64 {
	scale := 0.0
	for _, x := range v {
		scale = math.Max(scale, math.Abs(x))
	}
	if scale == 0 || math.IsInf(scale, 1) {
		return scale
	}
	s := 0.0
	for _, x := range v {
		s += (x / scale) * (x / scale)
	}
	return scale * math.Sqrt(s)
}

// GDPDelta returns δ(ε) for a μ-GDP mechanism, the tight privacy profile
// δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13;
// Balle & Wang 2018, Thm. 8). Both terms are formed in log space with the
// Gaussian factor cancelled analytically, so the result keeps its relative
// accuracy for large μ and ε where the plain formula returns 0 or garbage.
func GDPDelta(mu, eps float64) (float64, error) {
	if err := param.NonNegative("mu", mu); err != nil {
		return 0, err
	}
	if err := param.NonNegative("epsilon", eps); err != nil {
		return 0, err
	}
	return gdpDelta(mu, eps), nil
}

func gdpDelta(mu, eps float64) float64 {
	if mu == 0 {
		return 0
	}
	a := -eps/mu + mu/2
	b := -eps/mu - mu/2
	// log(e^ε Φ(b)/Φ(a)) = ε + log Φ(b) − log Φ(a). For a, b < 0 write
	// log Φ(x) = −x²/2 + s(x); since (b² − a²)/2 = ε exactly, the ratio is
	// s(b) − s(a) with no cancellation of large terms.
	var logRatio float64
	if a < 0 {
		logRatio = logPhiScaled(b) - logPhiScaled(a)
	} else {
		logRatio = eps + logPhi(b) - logPhi(a)
	}
	if logRatio >= 0 {
		return 0
	}
	d := math.Exp(logPhi(a)) * -math.Expm1(logRatio)
	return math.Max(0, d)
}

// GDPEpsilon returns the smallest ε ≥ 0 with δ(ε) ≤ delta for a μ-GDP
// mechanism, by bisection on log δ(ε), which is decreasing in ε. It is 0
// when delta ≥ δ(0) = 2Φ(μ/2) − 1.
func GDPEpsilon(mu, delta float64) (float64, error) {
	if err := param.NonNegative("mu", mu); err != nil {
		return 0, err
	}
	if err := param.InLeftOpen("delta", delta, 0, 1); err != nil {
		return 0, err
	}
	if mu == 0 || gdpDelta(mu, 0) <= delta {
		return 0, nil
	}
	// δ(ε) ≤ Φ(−ε/μ + μ/2), so ε = μ²/2 + μ·z with Φ(−z) = δ brackets the
	// root from above; doubling covers any rounding.
	above := func(e float64) bool { return gdpDelta(mu, e) > delta }
	lo, hi := numeric.GrowBracket(above, 0, mu*mu/2+mu*math.Max(0, -phiInv(delta))+1)
	_, e := numeric.Bisect(above, lo, hi, numeric.Tol{})
	return e, nil
}

// GDPMu returns the largest μ whose mechanism is (ε, δ)-DP, by bisection on
// δ(ε; μ), which is increasing in μ.
func GDPMu(eps, delta float64) (float64, error) {
	if err := param.NonNegative("epsilon", eps); err != nil {
		return 0, err
	}
	if err := param.InOpen("delta", delta, 0, 1); err != nil {
		return 0, err
	}
	below := func(m float64) bool { return gdpDelta(m, eps) < delta }
	lo, hi := numeric.GrowBracket(below, 0, 1)
	// The lower end keeps δ(ε; μ) ≤ delta.
	m, _ := numeric.Bisect(below, lo, hi, numeric.Tol{})
	return m, nil
}

// GaussianDelta returns the exact δ at which the Gaussian mechanism with
// noise standard deviation sigma and ℓ₂ sensitivity is (ε, δ)-DP: the
// analytic Gaussian mechanism of Balle & Wang (2018, Thm. 8),
// δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), which is GDPDelta at
// μ = Δ/σ (thesis Eq. 2.1).
func GaussianDelta(sigma, eps, sensitivity float64) (float64, error) {
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, err
	}
	if err := param.Positive("sensitivity", sensitivity); err != nil {
		return 0, err
	}
	return GDPDelta(sensitivity/sigma, eps)
}

// GaussianSigma returns the smallest noise standard deviation for which the
// Gaussian mechanism with the given ℓ₂ sensitivity is (ε, δ)-DP, the inverse
// of GaussianDelta.
func GaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := param.Positive("sensitivity", sensitivity); err != nil {
		return 0, err
	}
	mu, err := GDPMu(eps, delta)
	if err != nil {
		return 0, err
	}
	return sensitivity / mu, nil
}
