package noise

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
)

// Google's TestDeltaForGaussian: σ = 10, ε = 0.1, Δ = 1 gives
// 0.008751768145810 (tol 1e-10); mpmath at 40 digits gives
// 0.0087517681458095939789.
func TestDeltaForGaussian(t *testing.T) {
	if d := DeltaForGaussian(10, 0.1, 1); math.Abs(d-0.008751768145810) > 1e-10 {
		t.Errorf("DeltaForGaussian(10, 0.1, 1) = %.15g", d)
	}
	if d := DeltaForGaussian(10, 0.1, 1); math.Abs(d-0.0087517681458095939789) > 1e-15 {
		t.Errorf("DeltaForGaussian(10, 0.1, 1) = %.17g, mpmath 0.0087517681458095940", d)
	}
	// ε = 0: δ = Φ(Δ/2σ) - Φ(-Δ/2σ) = 2Φ(Δ/2σ) - 1 = erf(Δ/(2√2σ)).
	if d, want := DeltaForGaussian(2, 0, 1), math.Erf(1/(2*math.Sqrt2*2)); relErr(d, want) > 1e-14 {
		t.Errorf("DeltaForGaussian(2, 0, 1) = %.17g, want erf = %.17g", d, want)
	}
	// Only the ratio σ/Δ matters.
	if a, b := DeltaForGaussian(3, 0.5, 1), DeltaForGaussian(30, 0.5, 10); relErr(a, b) > 1e-14 {
		t.Errorf("scale invariance: %g vs %g", a, b)
	}
	for _, args := range [][3]float64{{0, 1, 1}, {1, -1, 1}, {1, 1, 0}, {math.NaN(), 1, 1}} {
		if d := DeltaForGaussian(args[0], args[1], args[2]); !math.IsNaN(d) {
			t.Errorf("DeltaForGaussian%v = %v, want NaN", args, d)
		}
	}
}

func TestSigmaForGaussianInvertsDeltaForGaussian(t *testing.T) {
	for _, c := range []struct{ eps, delta, l2 float64 }{
		{0.1, 0.008751768145810, 1}, {1, 1e-5, 1}, {0.5, 1e-10, 3}, {5, 1e-3, 0.2}, {0.01, 1e-6, 1},
	} {
		s, err := SigmaForGaussian(c.eps, c.delta, c.l2)
		if err != nil {
			t.Fatal(err)
		}
		if d := DeltaForGaussian(s, c.eps, c.l2); d > c.delta {
			t.Errorf("%+v: sigma %g gives delta %g > target", c, s, d)
		}
		if d := DeltaForGaussian(s*(1-1e-9), c.eps, c.l2); d <= c.delta {
			t.Errorf("%+v: sigma %g is not minimal (1e-9 smaller still gives %g)", c, s, d)
		}
	}
	// mpmath findroot of δ(σ) = 1e-5 at ε = 1, Δ = 1: 3.73063163481594183.
	if s, _ := SigmaForGaussian(1, 1e-5, 1); relErr(s, 3.73063163481594183) > 1e-11 {
		t.Errorf("SigmaForGaussian(1, 1e-5, 1) = %.17g, want 3.7306316348159418", s)
	}
	if s, _ := SigmaForGaussian(0.1, 0.008751768145810, 1); math.Abs(s-10) > 1e-8 {
		t.Errorf("SigmaForGaussian(0.1, 0.00875…, 1) = %.12g, want 10", s)
	}
	for _, c := range [][3]float64{{-1, 1e-5, 1}, {1, 0, 1}, {1, 1, 1}, {1, 1e-5, 0}, {math.Inf(1), 1e-5, 1}} {
		if _, err := SigmaForGaussian(c[0], c[1], c[2]); !errors.Is(err, ErrParam) {
			t.Errorf("SigmaForGaussian%v: err = %v, want ErrParam", c, err)
		}
	}
}

// TestBinomialAcceptanceBound checks numerically that the rejection step of
// symmetricBinomial never needs an acceptance probability above 1: at the
// block starts (where the bound is tightest) for j = 0..maxBinomialBlock and
// √n across (2^56, 2^57].
func TestBinomialAcceptanceBound(t *testing.T) {
	maxA := 0.0
	for _, sqrtN := range []float64{0x1p56 * (1 + 0x1p-52), 0x1.3p56, 0x1.8p56, 0x1.fffffp56, 0x1p57} {
		s := int64(math.Round(math.Sqrt2*sqrtN + 1))
		for j := int64(0); j <= maxBinomialBlock; j++ {
			for _, m := range []int64{j * s, -j*s - 1, j*s + s/2, -(j + 1) * s} {
				a := binomialProbability(sqrtN, m) * float64(4*s) * math.Ldexp(1, int(j)) / binomialAcceptBound
				maxA = math.Max(maxA, a)
			}
		}
	}
	if maxA > 1 {
		t.Errorf("acceptance probability reaches %g > 1", maxA)
	}
	t.Logf("largest acceptance probability %.4f (8/(5√π) = %.4f)", maxA, 8/(5*math.Sqrt(math.Pi)))
}

func TestGaussianRoundsToGranularity(t *testing.T) {
	src := Seeded(5)
	for _, sigma := range []float64{1, 0.1, 1e6, 1e-9, 3.7} {
		g := Gaussian{Sigma: sigma, Src: src}
		gran := g.Granularity()
		if !isPowerOfTwo(gran) || gran < 2*sigma/0x1p57 || gran >= 4*sigma/0x1p57 {
			t.Errorf("sigma %g: granularity %g not the power of two in [2σ/2^57, 4σ/2^57)", sigma, gran)
		}
		for _, x := range []float64{0, 0.1, -2.5, 1e3 / 7} {
			for range 10 {
				if y := g.Add(x); y/gran != math.Trunc(y/gran) {
					t.Errorf("sigma %g: Add(%g) = %.17g not on the lattice %g", sigma, x, y, gran)
				}
			}
		}
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 0x1p-1000} {
		g := Gaussian{Sigma: s, Src: src}
		if !errors.Is(g.Validate(), ErrParam) {
			t.Errorf("Validate accepted sigma %g", s)
		}
		if !math.IsNaN(g.Add(1)) {
			t.Errorf("Add with sigma %g not NaN", s)
		}
	}
}

// TestGaussianStatistics mirrors Google's: 125,000 draws, mean and variance
// (kurtosis 3) within z = 4.41717 standard errors, plus a KS fit.
func TestGaussianStatistics(t *testing.T) {
	const n = 125000
	for i, c := range []struct{ x, sigma float64 }{{0, 1}, {-3, 0.25}, {1e4, 50}} {
		g := Gaussian{Sigma: c.sigma, Src: Seeded(uint64(500 + i))}
		xs := make([]float64, n)
		for k := range xs {
			xs[k] = g.Add(c.x)
		}
		if err := stattest.CheckMoments(xs, c.x, c.sigma*c.sigma, stattest.KurtosisNormal, stattest.Z); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
		if d, p := stattest.KS(xs, func(v float64) float64 { return g.CDF(v - c.x) }); p < 1e-4 {
			t.Errorf("%+v: KS D=%g p=%g", c, d, p)
		}
	}
	if q := (Gaussian{Sigma: 2}).Quantile(0.975); math.Abs(q-2*1.959963984540054) > 1e-12 {
		t.Errorf("Quantile(0.975) = %.15g", q)
	}
}

func ExampleSigmaForGaussian() {
	// Calibrate σ for (ε, δ) = (1, 1e-5) at L2 sensitivity 1, then release.
	sigma, err := SigmaForGaussian(1, 1e-5, 1)
	if err != nil {
		panic(err)
	}
	g := Gaussian{Sigma: sigma, Src: Seeded(1)} // Src: nil for crypto/rand
	y := g.Add(10)
	fmt.Printf("sigma %.4f, delta %.2g\n", sigma, DeltaForGaussian(sigma, 1, 1))
	fmt.Println("on the lattice:", math.Mod(y, g.Granularity()) == 0)
	// Output:
	// sigma 3.7306, delta 1e-05
	// on the lattice: true
}

func TestGaussianSigmaBoundary(t *testing.T) {
	if err := (Gaussian{Sigma: 0x1p-966}).Validate(); err != nil {
		t.Errorf("sigma 2^-966 rejected: %v", err)
	}
	if err := (Gaussian{Sigma: 0x1.fffp-967}).Validate(); err == nil {
		t.Error("sigma below 2^-966 accepted")
	}
	if err := (Laplace{Epsilon: 1, Sensitivity: 0x1p-982}).Validate(); err != nil {
		t.Errorf("scale 2^-982 rejected: %v", err)
	}
	if err := (Laplace{Epsilon: 1, Sensitivity: 0x1.fffp-983}).Validate(); err == nil {
		t.Error("scale below 2^-982 accepted")
	}
}

// TestGaussianDPFalsifier: the secure Gaussian calibrated by
// SigmaForGaussian(1, 1e-5, 1) passes the per-bin (ε, δ) histogram check on
// inputs 0 and 1, and the same check rejects σ/4 (true δ at ε = 1 is
// 0.153 by DeltaForGaussian and mpmath), so it can fail.
func TestGaussianDPFalsifier(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical falsifier")
	}
	const (
		eps   = 1.0
		delta = 1e-5
		n     = 50000
	)
	sigma, err := SigmaForGaussian(eps, delta, 1)
	if err != nil {
		t.Fatal(err)
	}
	bins := stattest.Bins{Lo: -8, Hi: 9, N: 34}
	hist := func(s, x float64, seed uint64) []int {
		g := Gaussian{Sigma: s, Src: Seeded(seed)}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = g.Add(x)
		}
		return bins.Histogram(xs)
	}
	check := func(s float64, seed uint64) stattest.DPResult {
		r, err := stattest.DPCheck{Epsilon: eps, Delta: delta}.Check(hist(s, 0, seed), hist(s, 1, seed+1))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var last stattest.DPResult
	if !stattest.Vote(3, func(i int) bool { last = check(sigma, uint64(600+10*i)); return last.OK }) {
		t.Errorf("Gaussian sigma=%g rejected: %+v", sigma, last.Worst)
	}
	if d := DeltaForGaussian(sigma/4, eps, 1); d < 0.1 {
		t.Fatalf("negative control too weak: delta(sigma/4) = %g", d)
	}
	if stattest.Vote(3, func(i int) bool { last = check(sigma/4, uint64(700+10*i)); return last.OK }) {
		t.Errorf("falsifier accepted Gaussian at sigma/4: %+v", last.Worst)
	}
}
