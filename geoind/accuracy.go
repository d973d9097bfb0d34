package geoind

import (
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/noise"
)

// FailureProbability is Stronati's delta_of_alpha: the probability that a
// step's report is farther than alpha from the secret, for a step that is
// predicted with probability pr and whose prediction passed a test with
// parameters (epsTheta, l), else released with planar noise at epsN:
//
//	δ(α) = (1-pr)·(1 - C_{ε_N}(α)) + pr·(1 - Lap_{ε_θ}CDF(α - l)).
//
// The test term bounds the error of an accepted prediction by l plus the
// test's Laplace noise, as in Proposition 4.
func FailureProbability(alpha, pr, epsTheta, epsN, l float64) float64 {
	dn := 1 - noise.PlanarLaplace{Epsilon: epsN}.RadiusCDF(alpha)
	dt := 0.0
	if pr > 0 {
		dt = 1 - noise.Laplace{Epsilon: epsTheta, Sensitivity: 1}.CDF(alpha-l)
	}
	return (1-pr)*dn + pr*dt
}

// AccuracyAt inverts FailureProbability: the smallest α with δ(α) <= delta,
// by bisection (Stronati's alpha_of_delta, on an unbounded bracket). It
// returns NaN for delta outside (0, 1) or pr outside [0, 1].
func AccuracyAt(delta, pr, epsTheta, epsN, l float64) float64 {
	if !(delta > 0 && delta < 1) || !(pr >= 0 && pr <= 1) {
		return math.NaN()
	}
	// δ decreases in α: below the answer it exceeds delta.
	above := func(a float64) bool { return FailureProbability(a, pr, epsTheta, epsN, l)-delta > 0 }
	lo, hi := numeric.GrowBracket(above, 0, math.Max(1/epsN, l+1/epsTheta))
	_, hi = numeric.Bisect(above, lo, hi, numeric.Tol{MaxIter: 200})
	return hi
}
