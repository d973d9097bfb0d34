package noise

import (
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// PlanarLaplace is the planar Laplace distribution of geo-indistinguishability
// (Andrés et al., CCS 2013): density ε²/(2π)·e^{-ε‖z‖} on the plane, with
// Epsilon per unit of distance (per metre on a local tangent plane).
//
// Adding it to a location gives ε·d-privacy (geo-indistinguishability). Its
// radius R = ‖z‖ has density ε² r e^{-εr}, a Gamma(2, 1/ε) law with CDF
// C(r) = 1 - (1+εr)e^{-εr}, and its angle is uniform and independent.
// Rand draws R exactly as (E₁+E₂)/ε from two secure exponentials (no Lambert
// W, no 6-decimal rounding as in Location Guard) and the angle as 2π·U.
//
// A nil Src means the crypto/rand source.
type PlanarLaplace struct {
	Epsilon float64
	Src     Source
}

// Validate reports whether Epsilon is finite and > 0.
func (p PlanarLaplace) Validate() error {
	return checkPositive("epsilon", p.Epsilon)
}

// Rand returns one noise vector (dx, dy); (NaN, NaN) if Epsilon is invalid.
func (p PlanarLaplace) Rand() (dx, dy float64) {
	r, theta := p.RandPolar()
	s, c := math.Sincos(theta)
	return r * c, r * s
}

// RandPolar returns the noise in polar form: radius r >= 0 and angle
// theta in (0, 2π); (NaN, NaN) if Epsilon is invalid.
func (p PlanarLaplace) RandPolar() (r, theta float64) {
	if p.Validate() != nil {
		return math.NaN(), math.NaN()
	}
	src := orSecure(p.Src)
	r = (Exponential(src) + Exponential(src)) / p.Epsilon
	theta = 2 * math.Pi * Uniform(src)
	return r, theta
}

// Prob returns the density at the offset (dx, dy): ε²/(2π)·e^{-ε‖(dx,dy)‖}.
func (p PlanarLaplace) Prob(dx, dy float64) float64 {
	return math.Exp(p.LogProb(dx, dy))
}

// LogProb returns the log-density at the offset (dx, dy).
func (p PlanarLaplace) LogProb(dx, dy float64) float64 {
	e := p.Epsilon
	return 2*math.Log(e) - math.Log(2*math.Pi) - e*math.Hypot(dx, dy)
}

// RadiusPDF returns the radius density ε² r e^{-εr} (0 for r < 0).
func (p PlanarLaplace) RadiusPDF(r float64) float64 {
	if r < 0 {
		return 0
	}
	e := p.Epsilon
	return e * e * r * math.Exp(-e*r)
}

// RadiusCDF returns C(r) = P(R <= r) = 1 - (1+εr)e^{-εr} (0 for r <= 0).
// It is evaluated as -expm1(-(εr - ln(1+εr))) so small radii keep full
// relative accuracy.
func (p PlanarLaplace) RadiusCDF(r float64) float64 {
	if !(r > 0) {
		if math.IsNaN(r) {
			return math.NaN()
		}
		return 0
	}
	return -math.Expm1(-numeric.UMinusLog1p(p.Epsilon * r))
}

// RadiusQuantile returns C⁻¹(q), the radius within which the noise falls
// with probability q:
//
//	C⁻¹(q) = -(W₋₁((q-1)/e) + 1)/ε.
//
// It evaluates -(W₋₁+1) directly as the root u of u - ln(1+u) = -ln(1-q)
// (numeric.SolveUMinusLog1p, the reparametrisation of numeric.LambertWm1),
// which avoids forming (q-1)/e and the cancellation in W₋₁ + 1 for small q. It returns NaN for q outside
// [0, 1] and +Inf for q = 1.
func (p PlanarLaplace) RadiusQuantile(q float64) float64 {
	if checkProb(q) != nil {
		return math.NaN()
	}
	return numeric.SolveUMinusLog1p(-math.Log1p(-q)) / p.Epsilon
}

// AccuracyRadius returns the radius r for which the noise stays within r
// with probability confidence: Location Guard's alphaDeltaAccuracy and
// Andrés et al.'s (α, δ)-accuracy with δ = 1 - confidence. It equals
// RadiusQuantile(confidence); e.g. 3.889720169867429/ε at 0.9.
func (p PlanarLaplace) AccuracyRadius(confidence float64) float64 {
	return p.RadiusQuantile(confidence)
}

// Mean returns the mean radius 2/ε (the expected distance error).
func (p PlanarLaplace) Mean() float64 { return 2 / p.Epsilon }

// RadiusVariance returns the variance of the radius, 2/ε².
func (p PlanarLaplace) RadiusVariance() float64 { return 2 / (p.Epsilon * p.Epsilon) }
