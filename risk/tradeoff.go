package risk

import "math"

// A TradeOff is an f-DP trade-off function (Def 2.19): F(α) is the smallest
// type-II error of any test between neighbouring output distributions whose
// type-I error is at most α. F is convex, non-increasing and F(α) ≤ 1−α on
// [0, 1], so 1−F(α)−α is concave, which MaxAdvantage relies on.
//
// These are the trade-off functions the RAD bounds need; the accountant
// package keeps the general ones and their composition.
type TradeOff interface {
	F(alpha float64) float64
}

// EpsDeltaTradeOff is the trade-off function of (ε, δ)-DP, Eq. (2.4):
// f(α) = max{0, 1−δ−e^ε α, e^{−ε}(1−δ−α)}.
type EpsDeltaTradeOff struct{ Epsilon, Delta float64 }

// F implements TradeOff.
func (t EpsDeltaTradeOff) F(a float64) float64 {
	e := math.Exp(t.Epsilon)
	return math.Max(0, math.Max(1-t.Delta-e*a, (1-t.Delta-a)/e))
}

// GDPTradeOff is μ-Gaussian DP: G_μ(α) = Φ(Φ⁻¹(1−α) − μ). The Gaussian
// mechanism with ℓ₂ sensitivity Δ and noise σ is Δ/σ-GDP.
type GDPTradeOff struct{ Mu float64 }

// F implements TradeOff.
func (t GDPTradeOff) F(a float64) float64 {
	switch {
	case a <= 0:
		return 1
	case a >= 1:
		return 0
	}
	return phi(-phiInv(a) - t.Mu) // Φ⁻¹(1−α) = −Φ⁻¹(α), accurate for small α
}

// LaplaceTradeOff is the exact trade-off between Lap(0, 1) and Lap(ε, 1):
// the ε-DP Laplace mechanism on a sensitivity-1 query, a pair at the full
// sensitivity apart.
type LaplaceTradeOff struct{ Epsilon float64 }

// F implements TradeOff.
func (t LaplaceTradeOff) F(a float64) float64 {
	em := math.Exp(-t.Epsilon)
	switch {
	case a <= 0:
		return 1
	case a < em/2:
		return 1 - a/em
	case a <= 0.5:
		return em / (4 * a)
	case a < 1:
		return em * (1 - a)
	}
	return 0
}

// EpsDeltaTV is the total-variation bound of (ε, δ)-DP, Eq. (2.5):
// (e^ε − 1 + 2δ)/(e^ε + 1).
func EpsDeltaTV(eps, delta float64) float64 {
	e := math.Exp(eps)
	if math.IsInf(e, 1) {
		return 1
	}
	return math.Min(1, (e-1+2*delta)/(e+1))
}

// GDPTV is the total variation of μ-GDP, 2Φ(μ/2) − 1.
func GDPTV(mu float64) float64 { return 2*phi(mu/2) - 1 }

// LaplaceTV is the total variation between Lap(0, b) and Lap(Δ, b) with
// Δ/b = ε: 1 − e^{−ε/2}.
func LaplaceTV(eps float64) float64 { return -math.Expm1(-eps / 2) }

// GRRTV is the total variation of generalised randomised response over m
// values: (e^ε − 1)/(e^ε + m − 1).
func GRRTV(eps float64, m int) float64 {
	e := math.Exp(eps)
	if math.IsInf(e, 1) {
		return 1
	}
	return (e - 1) / (e + float64(m) - 1)
}

// OUETV is the total variation of optimised unary encoding, ½(e^ε−1)/(e^ε+1).
func OUETV(eps float64) float64 { return 0.5 * math.Tanh(eps/2) }

// MaxAdvantage returns max_{α∈[lo,hi]} (1 − f(α) − α) and the maximiser. The
// objective is concave because f is convex, so golden-section search finds
// the global maximum; the end points are compared as well because the
// maximiser is often at hi.
func MaxAdvantage(f TradeOff, lo, hi float64) (value, alpha float64) {
	g := func(a float64) float64 { return 1 - f.F(a) - a }
	lo, hi = math.Max(lo, 0), math.Min(hi, 1)
	if hi <= lo {
		return g(lo), lo
	}
	const r = 0.6180339887498949 // (√5 − 1)/2
	a, b := lo, hi
	c, d := b-r*(b-a), a+r*(b-a)
	gc, gd := g(c), g(d)
	for i := 0; i < 200 && b-a > 1e-13*(1+math.Abs(a)); i++ {
		if gc >= gd {
			b, d, gd = d, c, gc
			c = b - r*(b-a)
			gc = g(c)
		} else {
			a, c, gc = c, d, gd
			d = a + r*(b-a)
			gd = g(d)
		}
	}
	value, alpha = gc, c
	if gd > value {
		value, alpha = gd, d
	}
	for _, e := range [2]float64{lo, hi} {
		if v := g(e); v > value {
			value, alpha = v, e
		}
	}
	return value, alpha
}

// TV returns the total variation implied by a trade-off function,
// max_α (1 − f(α) − α), Eq. (2.5).
func TV(f TradeOff) float64 {
	v, _ := MaxAdvantage(f, 0, 1)
	return v
}
