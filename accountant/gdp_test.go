package accountant

import (
	"fmt"
	"math"
	"testing"
)

// Known values: anchors C.6 and thesis_part2 §5.3 (recomputed from the
// closed form), Google's TestDeltaForGaussian (σ=10, ε=0.1, Δ=1).
func TestGDPDeltaKnownValues(t *testing.T) {
	for _, c := range []struct{ mu, eps, want, tol float64 }{
		{1, 1, 0.1269367375066439, 1e-14},
		{0.5, 1, 0.006829594983114577, 1e-13},
		{1, 0.5, 0.238422, 5e-7 / 0.238422}, // printed to 6 decimals
		// Deep tails, from mpmath at 60 digits: the plain formula returns 0
		// (or noise) here.
		{3, 40, 2.6280959900306694757e-33, 1e-12},
		{10, 100, 1.8797170020519157446e-7, 1e-12},
		{1, 30, 4.709326318097522197e-193, 1e-11},
	} {
		got, err := GDPDelta(c.mu, c.eps)
		if err != nil || math.Abs(got-c.want) > c.tol*c.want {
			t.Errorf("GDPDelta(μ=%g, ε=%g) = %.17g, %v; want %.17g", c.mu, c.eps, got, err, c.want)
		}
	}
	if d, _ := GDPDelta(0, 1); d != 0 {
		t.Errorf("μ=0: δ = %g", d)
	}
	// δ(0) is the total variation 2Φ(μ/2) − 1.
	if d, _ := GDPDelta(1, 0); !near(d, 0.38292492254802624, 1e-14) {
		t.Errorf("δ(0; μ=1) = %.17g", d)
	}
}

func TestGaussianDeltaKnownValue(t *testing.T) {
	got, err := GaussianDelta(10, 0.1, 1)
	if err != nil || math.Abs(got-0.008751768145810) > 1e-10 {
		t.Errorf("GaussianDelta(10, 0.1, 1) = %.17g, %v", got, err)
	}
	sigma, err := GaussianSigma(0.1, 0.008751768145810, 1)
	if err != nil || math.Abs(sigma-10) > 1e-8 {
		t.Errorf("GaussianSigma = %.17g, %v; want 10", sigma, err)
	}
	// The calibrated σ never gives more than the asked δ.
	for _, c := range []struct{ eps, delta, sens float64 }{{0.1, 1e-5, 1}, {1, 1e-6, 3}, {8, 1e-10, 0.5}} {
		t.Run(fmt.Sprintf("eps=%g,delta=%g,sens=%g", c.eps, c.delta, c.sens), func(t *testing.T) {
			s, err := GaussianSigma(c.eps, c.delta, c.sens)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := GaussianDelta(s, c.eps, c.sens)
			if d > c.delta || d < c.delta*(1-1e-9) {
				t.Errorf("%+v: σ=%g gives δ=%g", c, s, d)
			}
		})
	}
}

func TestGDPEpsilonInvertsDelta(t *testing.T) {
	for _, mu := range []float64{0.05, 0.5, 1, 3, 20} {
		prev := math.Inf(1)
		for _, d := range []float64{1e-300, 1e-12, 1e-6, 1e-3, 0.1} {
			eps, err := GDPEpsilon(mu, d)
			if err != nil {
				t.Fatal(err)
			}
			if eps > prev {
				t.Errorf("μ=%g: ε(%g)=%g not decreasing", mu, d, eps)
			}
			prev = eps
			if eps == 0 {
				if d0, _ := GDPDelta(mu, 0); d0 > d {
					t.Errorf("μ=%g: ε(%g)=0 but δ(0)=%g", mu, d, d0)
				}
				continue
			}
			back, _ := GDPDelta(mu, eps)
			if back > d || back < d*(1-1e-9) {
				t.Errorf("μ=%g: δ(ε(%g)=%g) = %g", mu, d, eps, back)
			}
		}
	}
	if e, _ := GDPEpsilon(1, 0.1269367375066439); math.Abs(e-1) > 1e-12 {
		t.Errorf("ε(δ(1)) = %.17g", e)
	}
}

// δ(ε; μ) is decreasing in ε and increasing in μ.
func TestGDPDeltaMonotone(t *testing.T) {
	for _, mu := range []float64{0.1, 1, 5} {
		prev := 2.0
		for eps := 0.0; eps < 40; eps += 0.25 {
			d, _ := GDPDelta(mu, eps)
			if d > prev || d < 0 {
				t.Fatalf("μ=%g ε=%g: δ=%g after %g", mu, eps, d, prev)
			}
			prev = d
		}
	}
	for _, eps := range []float64{0, 1, 10} {
		prev := -1.0
		for mu := 0.1; mu < 30; mu *= 1.3 {
			d, _ := GDPDelta(mu, eps)
			if d < prev {
				t.Fatalf("ε=%g μ=%g: δ=%g after %g", eps, mu, d, prev)
			}
			prev = d
		}
	}
}

func TestComposeGDP(t *testing.T) {
	// n Gaussians with σ compose to one with σ/√n.
	mus := make([]float64, 25)
	for i := range mus {
		mus[i] = Gaussian{Sigma: 10, Sensitivity: 1}.Mu()
	}
	got, _ := ComposeGDP(mus...)
	if want := (Gaussian{Sigma: 10 / 5.0, Sensitivity: 1}).Mu(); !near(got, want, 1e-15) {
		t.Errorf("ComposeGDP = %g, want %g", got, want)
	}
	if got, _ := ComposeGDP(3, 4); got != 5 {
		t.Errorf("ComposeGDP(3,4) = %g", got)
	}
	if got, _ := ComposeGDP(1e200, 1e200); !near(got, math.Sqrt2*1e200, 1e-15) {
		t.Errorf("no overflow: %g", got)
	}
	if _, err := ComposeGDP(-1); err == nil {
		t.Error("negative μ accepted")
	}
}

func TestLogPhi(t *testing.T) {
	// Against the plain formula where it is accurate, and the Mills-ratio
	// asymptote log Φ(x) ≈ −x²/2 − log(−x√(2π)) − 1/x² far in the tail.
	for _, x := range []float64{-30, -5, -1, 0, 2, 8} {
		if got, want := logPhi(x), math.Log(phi(x)); !near(got, want, 1e-13) {
			t.Errorf("logPhi(%g) = %.17g want %.17g", x, got, want)
		}
	}
	for _, x := range []float64{-50, -200, -1e4} {
		want := -x*x/2 - math.Log(-x*math.Sqrt(2*math.Pi)) + math.Log1p(-1/(x*x)+3/(x*x*x*x))
		if got := logPhi(x); !near(got, want, 1e-12) {
			t.Errorf("logPhi(%g) = %.17g want %.17g", x, got, want)
		}
	}
	// erfcx is continuous where its two branches meet.
	if a, b := erfcx(math.Nextafter(5, 0)), erfcx(5); math.Abs(a-b) > 1e-14*b {
		t.Errorf("erfcx jump at 5: %.17g %.17g", a, b)
	}
}
