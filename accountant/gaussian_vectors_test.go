package accountant

import (
	"math"
	"testing"
)

// Moved from package noise with its deprecated wrappers: the vectors of the
// analytic Gaussian calibration (Balle & Wang 2018, Theorem 8).

func relDiff(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// Google's TestDeltaForGaussian: σ = 10, ε = 0.1, Δ = 1 gives
// 0.008751768145810 (tol 1e-10); mpmath at 40 digits gives
// 0.0087517681458095939789.
func TestGaussianDeltaVectors(t *testing.T) {
	delta := func(sigma, eps, l2 float64) float64 {
		d, err := GaussianDelta(sigma, eps, l2)
		if err != nil {
			return math.NaN()
		}
		return d
	}
	if d := delta(10, 0.1, 1); math.Abs(d-0.008751768145810) > 1e-10 {
		t.Errorf("delta(10, 0.1, 1) = %.15g", d)
	}
	if d := delta(10, 0.1, 1); math.Abs(d-0.0087517681458095939789) > 1e-15 {
		t.Errorf("delta(10, 0.1, 1) = %.17g, mpmath 0.0087517681458095940", d)
	}
	// ε = 0: δ = Φ(Δ/2σ) - Φ(-Δ/2σ) = 2Φ(Δ/2σ) - 1 = erf(Δ/(2√2σ)).
	if d, want := delta(2, 0, 1), math.Erf(1/(2*math.Sqrt2*2)); relDiff(d, want) > 1e-14 {
		t.Errorf("delta(2, 0, 1) = %.17g, want erf = %.17g", d, want)
	}
	// Only the ratio σ/Δ matters.
	if a, b := delta(3, 0.5, 1), delta(30, 0.5, 10); relDiff(a, b) > 1e-14 {
		t.Errorf("scale invariance: %g vs %g", a, b)
	}
	for _, args := range [][3]float64{{0, 1, 1}, {1, -1, 1}, {1, 1, 0}, {math.NaN(), 1, 1}} {
		if d := delta(args[0], args[1], args[2]); !math.IsNaN(d) {
			t.Errorf("GaussianDelta%v = %v, want an error", args, d)
		}
	}
}

func TestGaussianSigmaInvertsDelta(t *testing.T) {
	delta := func(sigma, eps, l2 float64) float64 {
		d, err := GaussianDelta(sigma, eps, l2)
		if err != nil {
			return math.NaN()
		}
		return d
	}
	for _, c := range []struct{ eps, delta, l2 float64 }{
		{0.1, 0.008751768145810, 1}, {1, 1e-5, 1}, {0.5, 1e-10, 3}, {5, 1e-3, 0.2}, {0.01, 1e-6, 1},
	} {
		s, err := GaussianSigma(c.eps, c.delta, c.l2)
		if err != nil {
			t.Fatal(err)
		}
		if d := delta(s, c.eps, c.l2); d > c.delta {
			t.Errorf("%+v: sigma %g gives delta %g > target", c, s, d)
		}
		if d := delta(s*(1-1e-9), c.eps, c.l2); d <= c.delta {
			t.Errorf("%+v: sigma %g is not minimal (1e-9 smaller still gives %g)", c, s, d)
		}
	}
	// mpmath findroot of δ(σ) = 1e-5 at ε = 1, Δ = 1: 3.73063163481594183.
	if s, _ := GaussianSigma(1, 1e-5, 1); relDiff(s, 3.73063163481594183) > 1e-11 {
		t.Errorf("GaussianSigma(1, 1e-5, 1) = %.17g, want 3.7306316348159418", s)
	}
	if s, _ := GaussianSigma(0.1, 0.008751768145810, 1); math.Abs(s-10) > 1e-8 {
		t.Errorf("GaussianSigma(0.1, 0.00875…, 1) = %.12g, want 10", s)
	}
	for _, c := range [][3]float64{{-1, 1e-5, 1}, {1, 0, 1}, {1, 1, 1}, {1, 1e-5, 0}, {math.Inf(1), 1e-5, 1}} {
		if _, err := GaussianSigma(c[0], c[1], c[2]); err == nil {
			t.Errorf("GaussianSigma%v: err = %v, want an error", c, err)
		}
	}
}
