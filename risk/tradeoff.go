package risk

import (
	"math"

	"github.com/tracepriv/tracepriv/accountant"
)

// The f-DP trade-off functions that the RAD bounds take (Def 2.19) live in
// the accountant package, with their composition; the names below are the
// ones this package used before, kept so that code written against them
// compiles. A trade-off function is convex, non-increasing and
// f(α) ≤ 1−α on [0, 1], so 1−f(α)−α is concave, which
// accountant.MaxAdvantage relies on.

// TradeOff is an f-DP trade-off function.
//
// Deprecated: use accountant.TradeOff. Its method is Beta (formerly F here).
type TradeOff = accountant.TradeOff

// EpsDeltaTradeOff is the trade-off function of (ε, δ)-DP, Eq. (2.4).
//
// Deprecated: use accountant.EpsilonDeltaTradeOff.
type EpsDeltaTradeOff = accountant.EpsilonDeltaTradeOff

// GDPTradeOff is μ-Gaussian DP, G_μ(α) = Φ(Φ⁻¹(1−α) − μ).
//
// Deprecated: use accountant.GaussianTradeOff.
type GDPTradeOff = accountant.GaussianTradeOff

// LaplaceTradeOff is the exact trade-off between Lap(0, 1) and Lap(ε, 1).
//
// Deprecated: use accountant.LaplaceTradeOff.
type LaplaceTradeOff = accountant.LaplaceTradeOff

// EpsDeltaTV is the total-variation bound of (ε, δ)-DP, Eq. (2.5):
// (e^ε − 1 + 2δ)/(e^ε + 1).
//
// Deprecated: use accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: delta}.TV().
func EpsDeltaTV(eps, delta float64) float64 {
	return accountant.EpsilonDeltaTradeOff{Epsilon: eps, Delta: delta}.TV()
}

// GDPTV is the total variation of μ-GDP, 2Φ(μ/2) − 1.
//
// Deprecated: use accountant.GaussianTradeOff{Mu: mu}.TV().
func GDPTV(mu float64) float64 { return accountant.GaussianTradeOff{Mu: mu}.TV() }

// LaplaceTV is the total variation between Lap(0, b) and Lap(Δ, b) with
// Δ/b = ε: 1 − e^{−ε/2}.
//
// Deprecated: use accountant.LaplaceTradeOff{Epsilon: eps}.TV().
func LaplaceTV(eps float64) float64 { return accountant.LaplaceTradeOff{Epsilon: eps}.TV() }

// GRRTV is the total variation of generalised randomised response over m
// values: (e^ε − 1)/(e^ε + m − 1).
//
// Deprecated: use accountant.GRRTradeOff{Epsilon: eps, Categories: m}.TV().
func GRRTV(eps float64, m int) float64 {
	return accountant.GRRTradeOff{Epsilon: eps, Categories: m}.TV()
}

// OUETV is the total variation of optimised unary encoding, ½(e^ε−1)/(e^ε+1).
func OUETV(eps float64) float64 { return 0.5 * math.Tanh(eps/2) }

// MaxAdvantage returns max_{α∈[lo,hi]} (1 − f(α) − α) and the maximiser.
//
// Deprecated: use accountant.MaxAdvantage.
func MaxAdvantage(f TradeOff, lo, hi float64) (value, alpha float64) {
	return accountant.MaxAdvantage(f, lo, hi)
}

// TV returns the total variation implied by a trade-off function,
// max_α (1 − f(α) − α), Eq. (2.5).
//
// Deprecated: use accountant.TV.
func TV(f TradeOff) float64 { return accountant.TV(f) }
