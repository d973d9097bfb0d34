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

// StepErrorBound returns a proven upper bound, in metres, on the expected
// distance between a step's report and the secret, over the step's own
// randomness, whatever the secret and the prediction: a function of the
// public decision d and the output grid alone.
//
//   - ModeNoise: the planar Laplace mean 2/ε_N (ExpectedError), plus √2
//     grid for the snapping of the secret and of the report to the grid.
//   - ModeTest: the prediction z̃ at distance D from the secret is reported
//     with probability p(D) = P(D + L <= l), L the test's Laplace noise
//     (PassProbability), and fresh noise otherwise, so the expected error
//     is e(D) = D p(D) + (1 - p(D)) m, m = 2/ε_N; the bound is its
//     supremum over D, plus √2 grid. For D >= l, e(D) = m + ½
//     e^{-a(D-l)} (D - m) (a = ε_θ), whose second term peaks at D = m + 1/a
//     if that is beyond l, and at l otherwise. For D <= l, e'(D) > 0 exactly
//     when 2 e^{a(l-D)} > 1 + a(D - m), whose two sides cross once: e rises
//     to l when a(l - m) <= 1, and otherwise peaks at the crossing, in
//     [m + 1/a, l], which is bisected to 1 µm and bounded above on its
//     bracket.
//   - ModePredict (the elapsed-time skip): no bound; +Inf.
//
// It is a worst case over where the person is relative to the prediction:
// a person standing still, whose predictions are close, has a smaller
// error. The mean error of fresh-noise steps alone (ExpectedError)
// understates a run's error when tests accept predictions the person has
// moved away from (issue 32: 1,308 m reported, 1,650 m measured on a
// traveller).
func StepErrorBound(d Decision, grid float64) float64 {
	slack := math.Sqrt2 * math.Max(grid, 0)
	switch d.Mode {
	case ModeNoise:
		return ExpectedError(d.EpsN) + slack
	case ModeTest:
		m, l, a := ExpectedError(d.EpsN), d.Threshold, d.EpsTheta
		b := (l + m) / 2 // e(l)
		if ds := m + 1/a; ds > l {
			b = math.Max(b, m+math.Exp(a*(l-m)-1)/(2*a))
		} else if a*(l-m) > 1 {
			lo, hi := numeric.Bisect(func(x float64) bool { return 2*math.Exp(a*(l-x)) > 1+a*(x-m) }, ds, l, numeric.Tol{Abs: 1e-6})
			// On [lo, hi], D <= hi and e^{-a(l-D)} (D - m) >= e^{-a(l-lo)} (lo - m) >= 0.
			b = math.Max(b, hi-math.Exp(-a*(l-lo))*(lo-m)/2)
		}
		return b + slack
	}
	return math.Inf(1)
}
