package accountant

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// This file holds the standard-normal helpers the GDP and analytic-Gaussian
// formulas need. δ(ε) = Φ(a) − e^ε Φ(b) cancels catastrophically when both
// terms are tiny, so everything is done with the scaled complementary error
// function erfcx(z) = e^{z²} erfc(z), which keeps log Φ accurate far into the
// lower tail.

// erfcx returns e^{z²} erfc(z) for z ≥ 0 without overflow or underflow.
func erfcx(z float64) float64 {
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

// logPhi returns log Φ(x), the log of the standard normal CDF, accurate in
// both tails.
func logPhi(x float64) float64 {
	if x >= 0 {
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	}
	z := -x / math.Sqrt2
	return math.Log(0.5*erfcx(z)) - z*z
}

// logPhiScaled returns log(Φ(x)) + x²/2 for x < 0: log Φ without its
// Gaussian factor, so that differences of two such terms do not cancel.
func logPhiScaled(x float64) float64 {
	return math.Log(0.5 * erfcx(-x/math.Sqrt2))
}

// phi returns Φ(x), the standard normal CDF.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// phiInv returns Φ⁻¹(p) for p in [0, 1]. gonum's Wichura (AS241)
// approximation keeps full relative accuracy down to p = 1e-300, where
// math.Erfcinv(2p) has already collapsed.
func phiInv(p float64) float64 { return mathext.NormalQuantile(clamp01(p)) }
