package accountant

import (
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// ZCDPEpsilon returns the smallest ε such that a ρ-zCDP mechanism is
// (ε, δ)-DP under the conversion of Canonne, Kamath & Steinke (2020,
// Prop. 12) optimised over every real order α > 1, as OpenDP's cdp_epsilon
// does. With ε(α) = αρ + log1p(−1/α) − log(αδ)/(α−1), the derivative
// ρ + log(αδ)/(α−1)² is increasing, so its unique root is found by
// bisection.
func ZCDPEpsilon(rho, delta float64) (float64, error) {
	if err := param.NonNegative("rho", rho); err != nil {
		return 0, err
	}
	if err := param.InLeftOpen("delta", delta, 0, 1); err != nil {
		return 0, err
	}
	if rho == 0 || delta == 1 {
		return 0, nil
	}
	epsAt := func(a float64) float64 {
		return a*rho + math.Log1p(-1/a) - math.Log(a*delta)/(a-1)
	}
	deriv := func(a float64) float64 {
		return rho + math.Log(a*delta)/((a-1)*(a-1))
	}
	below := func(a float64) bool { return deriv(a) < 0 }
	lo, hi := numeric.GrowBracket(below, 1, 2)
	_, hi = numeric.Bisect(below, lo, hi, numeric.Tol{})
	return math.Max(0, epsAt(hi)), nil
}

// ZCDPDelta returns the smallest δ such that a ρ-zCDP mechanism is
// (ε, δ)-DP under the same conversion: δ(α) = exp((α−1)(αρ−ε) + α log1p(−1/α))/(α−1),
// minimised over α > 1. The log-derivative (2α−1)ρ − ε + log1p(−1/α) is
// increasing, so its root is found by bisection.
func ZCDPDelta(rho, eps float64) (float64, error) {
	if err := param.NonNegative("rho", rho); err != nil {
		return 0, err
	}
	if err := param.NonNegative("epsilon", eps); err != nil {
		return 0, err
	}
	if rho == 0 {
		return 0, nil
	}
	logDelta := func(a float64) float64 {
		return (a-1)*(a*rho-eps) + a*math.Log1p(-1/a) - math.Log(a-1)
	}
	deriv := func(a float64) float64 {
		return (2*a-1)*rho - eps + math.Log1p(-1/a)
	}
	below := func(a float64) bool { return deriv(a) < 0 }
	lo, hi := numeric.GrowBracket(below, 1, 2)
	_, hi = numeric.Bisect(below, lo, hi, numeric.Tol{})
	return math.Min(1, math.Exp(logDelta(hi))), nil
}
