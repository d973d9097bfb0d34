package noise

import "math"

// laplaceGranularityParam is 2^40: the lattice step of the secure Laplace
// sampler is the smallest power of two >= scale/2^40, so the noise has about
// 40 bits of resolution relative to its scale.
const laplaceGranularityParam = 0x1p40

// Laplace is the secure Laplace mechanism for a scalar with L1 sensitivity
// Sensitivity and privacy parameter Epsilon (scale b = Sensitivity/Epsilon).
//
// Add releases a value on the lattice gZ, g = Granularity(): the input is
// rounded to the lattice and a two-sided geometric multiple of g with
// parameter g·Epsilon/(Sensitivity+g) is added. That is an exactly
// Epsilon-DP discrete Laplace (the +g absorbs the rounding of the input), and
// its output set does not depend on the input's low-order bits, which is what
// defeats Mironov's floating-point attack on textbook Laplace samplers.
//
// A nil Src means the crypto/rand source.
type Laplace struct {
	Epsilon     float64
	Sensitivity float64
	Src         Source
}

// Validate reports whether the parameters are usable: Epsilon >= 2^-50 and
// finite, Sensitivity finite and > 0, and a scale whose lattice step is a
// normal float.
func (l Laplace) Validate() error {
	if err := checkEpsilon(l.Epsilon); err != nil {
		return err
	}
	if err := checkPositive("sensitivity", l.Sensitivity); err != nil {
		return err
	}
	b := l.Sensitivity / l.Epsilon
	if math.IsInf(b, 1) || b/laplaceGranularityParam < 0x1p-1022 {
		return paramError("sensitivity/epsilon", b, "a scale in [2^-982, MaxFloat64]")
	}
	return nil
}

// Scale returns b = Sensitivity/Epsilon.
func (l Laplace) Scale() float64 { return l.Sensitivity / l.Epsilon }

// Granularity returns the lattice step g of the released values: the
// smallest power of two >= Scale()/2^40.
func (l Laplace) Granularity() float64 {
	return ceilPowerOfTwo(l.Scale() / laplaceGranularityParam)
}

// lambda is the per-step decay of the discrete Laplace on gZ.
func (l Laplace) lambda(g float64) float64 {
	return g * l.Epsilon / (l.Sensitivity + g)
}

// Add returns x released under the secure Laplace mechanism. It returns NaN
// (never the unnoised x) if the parameters are invalid; call Validate first
// to get the reason.
func (l Laplace) Add(x float64) float64 {
	if l.Validate() != nil {
		return math.NaN()
	}
	g := l.Granularity()
	k := TwoSidedGeometric(l.Src, l.lambda(g))
	return roundToMultipleOfPowerOfTwo(x, g) + float64(k)*g
}

// Rand returns one draw of the secure noise alone, Add(0).
func (l Laplace) Rand() float64 { return l.Add(0) }

// Variance returns the exact variance of the noise Add draws, the discrete
// Laplace variance g²·2α/(1-α)² with α = e^-λ, λ = gε/(Δ+g). It exceeds
// the continuous 2b² by a relative 2g/Δ + O(λ²) <= 2^-38/ε.
func (l Laplace) Variance() float64 {
	g := l.Granularity()
	lam := l.lambda(g)
	em := math.Expm1(-lam) // α - 1
	return g * g * 2 * math.Exp(-lam) / (em * em)
}

// CDF returns P(N <= x) for the continuous Laplace(0, b) that the lattice
// noise approximates (to within one lattice step).
func (l Laplace) CDF(x float64) float64 {
	b := l.Scale()
	if x < 0 {
		return 0.5 * math.Exp(x/b)
	}
	return 1 - 0.5*math.Exp(-x/b)
}

// Quantile returns the p-quantile of the continuous Laplace(0, b); NaN for p
// outside [0, 1]. The one-sided 0.9 quantile is b·ln 5 (Stronati's
// worst_noise_linear = ln5/ε for unit sensitivity).
func (l Laplace) Quantile(p float64) float64 {
	if checkProb(p) != nil {
		return math.NaN()
	}
	b := l.Scale()
	if p < 0.5 {
		return b * math.Log(2*p)
	}
	// log1p(-(2p-1)) keeps accuracy for p near 1.
	return -b * math.Log1p(-(2*p - 1))
}

// LaplaceRand returns a continuous Laplace(0, scale) draw as scale·(E1-E2)
// with secure exponentials. It is NOT floating-point safe: its outputs'
// low-order bits depend on the input they are added to (Mironov 2012), so use
// Laplace.Add for releases. It suits simulation and tests.
func LaplaceRand(src Source, scale float64) float64 {
	src = orSecure(src)
	return scale * (Exponential(src) - Exponential(src))
}
