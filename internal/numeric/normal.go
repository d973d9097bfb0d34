package numeric

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Phi returns Φ(x), the standard normal CDF. It is written with erfc so
// that the lower tail keeps its relative accuracy down to Φ(−38) ≈ 3e-316
// (the form ½(1 + erf(x/√2)) returns 0 below x ≈ −8.3).
func Phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// PhiInv returns Φ⁻¹(p), the standard normal quantile: −Inf at p ≤ 0, +Inf
// at p ≥ 1 and NaN for NaN. It uses gonum's implementation of Wichura's
// AS241, which keeps full relative accuracy down to the smallest normal
// float, where −√2·erfc⁻¹(2p) has long collapsed (math.Erfcinv returns −Inf
// below p ≈ 1e-17). For subnormal p AS241 goes wrong (2% off at 5e-324)
// because math.Log of a subnormal is wrong on amd64 (Go 1.26 returns
// −709.09 for math.Log(5e-324), not −744.44: golang/go#56600); there
// Newton's method on LogPhi, with the logarithm taken through Frexp,
// finishes the job. Φ⁻¹(1−α) is best written −PhiInv(α): forming 1 − α
// first loses small α.
func PhiInv(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	case math.IsNaN(p):
		return p
	}
	x := mathext.NormalQuantile(p)
	if p < 0x1p-1022 {
		// Solve log Φ(x) = log p. Its derivative φ(x)/Φ(x) is
		// 1/(√(2π)·e^{LogPhiScaled(x)}) for x < 0, free of underflow; log Φ
		// is concave, so Newton from AS241's estimate converges
		// monotonically, in a few steps.
		fr, e := math.Frexp(p)
		lp := math.Log(fr) + float64(e)*math.Ln2
		for range 8 {
			step := (LogPhi(x) - lp) * math.Sqrt(2*math.Pi) * math.Exp(LogPhiScaled(x))
			x -= step
			if math.Abs(step) <= 1e-16*math.Abs(x) {
				break
			}
		}
	}
	return x
}

// LogPhi returns log Φ(x), accurate in both tails: for x ≥ 0 through
// log1p(−Φ(−x)), and for x < 0 through the scaled complementary error
// function, so that it stays finite (≈ −x²/2) far below the underflow of Φ.
func LogPhi(x float64) float64 {
	if x >= 0 {
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	}
	z := -x / math.Sqrt2
	return math.Log(0.5*Erfcx(z)) - z*z
}

// LogPhiScaled returns log Φ(x) + x²/2 for x < 0: log Φ without its
// Gaussian factor, so that a difference of two such terms, as in the δ(ε)
// of Gaussian DP, does not cancel catastrophically.
func LogPhiScaled(x float64) float64 {
	return math.Log(0.5 * Erfcx(-x/math.Sqrt2))
}

// Erfcx returns the scaled complementary error function e^{z²} erfc(z) for
// z ≥ 0, without overflow or underflow.
func Erfcx(z float64) float64 {
	if z < 5 {
		// e^{z²} is at most e^25 here, so the product keeps full precision.
		return math.Exp(z*z) * math.Erfc(z)
	}
	// Laplace's continued fraction, evaluated by the modified Lentz method:
	// erfcx(z) = (1/√π) · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + …)))).
	const tiny = 1e-300
	f := z
	c := z
	d := 0.0
	for n := 1; n < 200; n++ {
		a := float64(n) / 2
		d = z + a*d
		if d == 0 {
			d = tiny
		}
		c = z + a/c
		if c == 0 {
			c = tiny
		}
		d = 1 / d
		delta := c * d
		f *= delta
		if math.Abs(delta-1) < 1e-16 {
			break
		}
	}
	return 1 / (math.SqrtPi * f)
}
