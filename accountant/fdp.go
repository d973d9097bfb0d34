package accountant

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// TradeOff is a trade-off function f (Dong, Roth & Su 2022; thesis
// Def. 2.19): Beta(α) is the smallest type-II error of any test between the
// outputs on two neighbouring inputs whose type-I error is at most α. A
// mechanism is f-DP when every such pair has a trade-off curve above f.
// Valid trade-off functions are convex, continuous, non-increasing and
// satisfy f(α) ≤ 1 − α.
type TradeOff interface {
	Beta(alpha float64) float64
}

// GaussianTradeOff is G_μ = T(N(0,1), N(μ,1)): G_μ(α) = Φ(Φ⁻¹(1−α) − μ)
// (thesis L659). μ-GDP means f-DP with this f.
type GaussianTradeOff struct{ Mu float64 }

// Beta returns G_μ(α).
func (g GaussianTradeOff) Beta(alpha float64) float64 {
	// Φ⁻¹(1−α) = −Φ⁻¹(α), which avoids rounding 1−α for small α.
	return phi(-phiInv(clamp01(alpha)) - g.Mu)
}

// TV returns the total variation distance 2Φ(μ/2) − 1 = erf(μ/(2√2)),
// computed as the latter, which has no cancellation at small μ.
func (g GaussianTradeOff) TV() float64 { return math.Erf(g.Mu / (2 * math.Sqrt2)) }

// LaplaceTradeOff is T(Lap(0,1), Lap(ε,1)), the trade-off curve of the
// Laplace mechanism with ε = sensitivity/scale (Dong, Roth & Su 2022,
// Example: the Neyman–Pearson tests are thresholds on the output):
// 1 − e^ε α for α < e^{−ε}/2, e^{−ε}/(4α) up to α = 1/2, and e^{−ε}(1−α)
// beyond.
type LaplaceTradeOff struct{ Epsilon float64 }

// Beta returns the Laplace trade-off at α.
func (l LaplaceTradeOff) Beta(alpha float64) float64 {
	alpha = clamp01(alpha)
	e := math.Exp(-l.Epsilon)
	switch {
	case alpha < e/2:
		return 1 - alpha/e
	case alpha <= 0.5:
		return e / (4 * alpha)
	default:
		return e * (1 - alpha)
	}
}

// TV returns the total variation distance 1 − e^{−ε/2}.
func (l LaplaceTradeOff) TV() float64 { return -math.Expm1(-l.Epsilon / 2) }

// EpsilonDeltaTradeOff is f_{ε,δ}(α) = max{0, 1 − δ − e^ε α,
// e^{−ε}(1 − δ − α)}: (ε, δ)-DP is exactly f-DP with this f (thesis Eq. 2.4).
type EpsilonDeltaTradeOff struct{ Epsilon, Delta float64 }

// Beta returns f_{ε,δ}(α).
func (f EpsilonDeltaTradeOff) Beta(alpha float64) float64 {
	alpha = clamp01(alpha)
	a := 1 - f.Delta - math.Exp(f.Epsilon)*alpha
	b := math.Exp(-f.Epsilon) * (1 - f.Delta - alpha)
	return math.Max(0, math.Max(a, b))
}

// TV returns the total variation bound (e^ε − 1 + 2δ)/(e^ε + 1) (thesis
// Eq. 2.5), at most 1 (1 as ε → ∞).
func (f EpsilonDeltaTradeOff) TV() float64 {
	e := math.Exp(f.Epsilon)
	if math.IsInf(e, 1) {
		return 1
	}
	return math.Min(1, (math.Expm1(f.Epsilon)+2*f.Delta)/(e+1))
}

// GRRTradeOff is the trade-off curve of k-ary randomized response between
// two different true values. The likelihood-ratio tests reject first on the
// alternative's value, then on the k−2 neutral values, then on the null's
// value, so the curve is the polygon through (0, 1), (q, 1−p),
// ((k−1)q, q) and (1, 0), with p = e^ε/(e^ε+k−1) and q = 1/(e^ε+k−1).
// For k = 2 it equals f_{ε,0}.
type GRRTradeOff struct {
	Epsilon    float64
	Categories int
}

// Beta returns the GRR trade-off at α.
func (g GRRTradeOff) Beta(alpha float64) float64 {
	alpha = clamp01(alpha)
	k := float64(g.Categories)
	q := 1 / (math.Exp(g.Epsilon) + k - 1)
	p := 1 - (k-1)*q
	switch {
	case alpha <= q:
		return 1 - alpha*p/q
	case alpha <= (k-1)*q:
		return 1 - p - (alpha - q)
	default:
		return q * (1 - alpha) / (1 - (k-1)*q)
	}
}

// TV returns the total variation distance p − q = (e^ε − 1)/(e^ε + k − 1)
// (1 as ε → ∞).
func (g GRRTradeOff) TV() float64 {
	e := math.Exp(g.Epsilon)
	if math.IsInf(e, 1) {
		return 1
	}
	return math.Expm1(g.Epsilon) / (e + float64(g.Categories) - 1)
}

// MaxAdvantage returns max_{α∈[lo,hi]} (1 − f(α) − α) and its maximiser:
// the largest advantage over a blind guess of a test between neighbouring
// outputs whose type-I error lies in [lo, hi] (clipped to [0, 1]). Over
// [0, 1] it is the total variation bound (thesis Eq. 2.5, see TV); the
// reconstruction-risk bounds of Theorem 5.11 restrict α to the prior's
// ball masses (risk.FDPBound). 1 − f(α) − α is concave for a valid
// trade-off function, so golden-section search finds the global maximum;
// the end points are compared as well because the maximiser is often at hi.
func MaxAdvantage(f TradeOff, lo, hi float64) (value, alpha float64) {
	g := func(a float64) float64 { return 1 - f.Beta(a) - a }
	alpha, value = numeric.MaximizeUnimodal(g, math.Max(lo, 0), math.Min(hi, 1),
		numeric.Tol{Abs: 1e-13, Rel: 1e-13, MaxIter: 200})
	return value, alpha
}

// TV returns the total variation bound max_α (1 − f(α) − α) of any f-DP
// mechanism (thesis Eq. 2.5), numerically (MaxAdvantage over [0, 1]). Types
// with a closed form (the ones in this package) are better served by their
// TV method.
func TV(f TradeOff) float64 {
	v, _ := MaxAdvantage(f, 0, 1)
	return math.Max(0, v)
}

// TVCompose bounds the total variation of the T-fold adaptive composition
// of mechanisms whose total variation is at most tv: 1 − (1 − tv)^T (thesis
// L683).
func TVCompose(tv float64, t int) float64 {
	return -math.Expm1(float64(t) * math.Log1p(-tv))
}

func clamp01(a float64) float64 { return math.Min(1, math.Max(0, a)) }

// BestGuess returns (1 + tv)/2: the best accuracy of a guess between two
// hypotheses equally likely beforehand, from the total variation tv between
// the outputs under them (the Bayes-optimal test; 0.5 is a coin toss).
func BestGuess(tv float64) float64 { return (1 + clamp01(tv)) / 2 }

// PureBestGuess returns the best accuracy e^ε/(1 + e^ε) of a guess between
// two inputs an ε-DP mechanism (f_{ε,0}) makes indistinguishable, equally
// likely beforehand: BestGuess of EpsilonDeltaTradeOff{ε, 0}.TV().
func PureBestGuess(epsilon float64) float64 {
	return BestGuess(EpsilonDeltaTradeOff{Epsilon: epsilon}.TV())
}

// GuessRate renders a best-guess accuracy p for people: "at most 73.1 %
// of the time", and "almost always (the bound exceeds 99.9 %)" where one
// decimal would round it to 100 %, which would read as certainty.
func GuessRate(p float64) string {
	if p >= 0.9995 {
		return "almost always (the bound exceeds 99.9 %)"
	}
	return fmt.Sprintf("at most %.1f %% of the time", 100*p)
}
