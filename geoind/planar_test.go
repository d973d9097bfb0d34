package geoind

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
)

// εr at each quantile of the planar Laplace radius (notes/anchors.md §A.4,
// recomputed there from C(r) = 1 - (1+εr)e^{-εr}; Stronati's
// worst_noise_polar is the 0.9 row).
var radiusTable = []struct{ p, er float64 }{
	{0.50, 1.678346990016661},
	{0.90, 3.889720169867429},
	{0.95, 4.743864518390577},
	{0.99, 6.638352067993811},
}

func TestNoiseAccuracyTable(t *testing.T) {
	for _, eps := range []float64{10, 1, 0.1, 0.01, 0.001} {
		for _, row := range radiusTable {
			got := NoiseAccuracy(eps, row.p)
			want := row.er / eps
			if math.Abs(got-want) > 1e-12*want {
				t.Errorf("NoiseAccuracy(%g, %g) = %.16g, want %.16g", eps, row.p, got, want)
			}
			// Round trip through the radial CDF.
			c := 1 - (1+eps*got)*math.Exp(-eps*got)
			if math.Abs(c-row.p) > 1e-12 {
				t.Errorf("C(NoiseAccuracy(%g, %g)) = %.16g", eps, row.p, c)
			}
		}
	}
	// Location Guard's levels (notes §A.1): ε = 2/radius, 90 % radius.
	for _, lv := range []struct{ eps, r90 float64 }{{0.01, 389.0}, {0.004, 972.4}, {0.001, 3889.7}} {
		if got := NoiseAccuracy(lv.eps, 0.9); math.Abs(got-lv.r90) > 0.05 {
			t.Errorf("Location Guard level ε=%g: 90%% radius %.2f, want %.1f", lv.eps, got, lv.r90)
		}
	}
	if !math.IsNaN(NoiseAccuracy(0, 0.9)) || !math.IsNaN(NoiseAccuracy(1, 1)) {
		t.Error("invalid input should give NaN")
	}
}

func TestTestAccuracy(t *testing.T) {
	// One-sided Laplace quantile: 1 - ½e^{-εt} = δ, so t = ln(1/(2(1-δ)))/ε;
	// at δ = 0.9 it is ln 5/ε = 1.6094379124341005/ε (Stronati's
	// worst_noise_linear).
	for _, eps := range []float64{10, 1, 0.01} {
		if got, want := TestAccuracy(eps, 0.9), 1.6094379124341005/eps; math.Abs(got-want) > 1e-12*want {
			t.Errorf("TestAccuracy(%g, 0.9) = %.16g, want %.16g", eps, got, want)
		}
		if got, want := TestAccuracy(eps, 0.99), math.Log(50)/eps; math.Abs(got-want) > 1e-12*want {
			t.Errorf("TestAccuracy(%g, 0.99) = %.16g, want %.16g", eps, got, want)
		}
	}
}

func TestBreakEvenPredictionRate(t *testing.T) {
	// Section IV-C: PR >= η (c_θ/c_N)(1 + 1/γ) = 0.46 with η = 0.5, γ = 0.8
	// and the paper's rounded c_θ ≈ 1.6, c_N ≈ 3.9.
	if v := 0.5 * 1.6 / 3.9 * (1 + 1/0.8); math.Abs(v-0.46) > 0.005 {
		t.Fatalf("paper's break-even with rounded constants = %.4f", v)
	}
	got := Params{Epsilon: 1, Eta: 0.5, Gamma: 0.8}.TestShare()
	want := 0.5 * math.Log(5) / 3.889720169867429 * 2.25 // exact constants: 0.4655
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("TestShare = %.15g, want %.15g", got, want)
	}
}

// planarHist releases n samples of m at x and bins them on a unit grid over
// [-L, L)² (outside samples go to one overflow bin).
func planarHist(t *testing.T, m PlanarLaplace, x Vec, eps float64, n int, src noise.Source) []int {
	const L = 6
	counts := make([]int, (2*L)*(2*L)+1)
	for range n {
		z, err := m.Release(x, eps, src)
		if err != nil {
			t.Fatal(err)
		}
		i, j := math.Floor(z.X)+L, math.Floor(z.Y)+L
		if i < 0 || j < 0 || i >= 2*L || j >= 2*L {
			counts[len(counts)-1]++
			continue
		}
		counts[int(i)*2*L+int(j)]++
	}
	return counts
}

// TestPlanarLaplaceGeoInd checks empirically that histograms of releases at
// two secrets d apart never differ by more than e^{εd} beyond sampling
// slack, and that the same check rejects a mechanism with half the noise.
func TestPlanarLaplaceGeoInd(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 60000
	}
	const eps, d = 1.0, 1.0
	x, x2 := Vec{0, 0}, Vec{d, 0}
	for _, m := range []PlanarLaplace{{Grid: 0.125}, {Grid: 0.5}} {
		src := noise.Seeded(1)
		a := planarHist(t, m, x, eps, n, src)
		b := planarHist(t, m, x2, eps, n, src)
		res, err := stattest.DPCheck{Epsilon: eps * d}.Check(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK {
			t.Errorf("grid %g: geo-indistinguishability violated: %+v", m.Grid, res.Worst)
		}
		// The bound is nearly attained on bins beyond the secrets.
		if res.MaxRatio < math.Exp(eps*d)*0.7 {
			t.Errorf("grid %g: max ratio %.3f, expected near e^{εd} = %.3f", m.Grid, res.MaxRatio, math.Exp(eps*d))
		}
	}
	// Negative control: noise at 2ε claimed as ε.
	src := noise.Seeded(2)
	a := planarHist(t, PlanarLaplace{Grid: 0.125}, x, 2*eps, n, src)
	b := planarHist(t, PlanarLaplace{Grid: 0.125}, x2, 2*eps, n, src)
	res, err := stattest.DPCheck{Epsilon: eps * d}.Check(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Errorf("falsifier accepted a mechanism with half the noise (max ratio %.3f)", res.MaxRatio)
	}
}

func TestPlanarLaplaceMeanError(t *testing.T) {
	const eps, n = 0.01, 100000
	src := noise.Seeded(3)
	ds := make([]float64, n)
	for i := range ds {
		// A 1 m grid: rounding moves a release by at most 0.71 m, and
		// the sampling ε_s is 1.1·10⁻⁴ below ε (+0.02 m of mean), both
		// far inside the tolerance (the sample mean's sd is 0.45 m).
		z, err := PlanarLaplace{Grid: 1}.Release(Vec{100, -50}, eps, src)
		if err != nil {
			t.Fatal(err)
		}
		ds[i] = Dist(z, Vec{100, -50})
	}
	// Radius ~ Gamma(2, 1/ε): mean 2/ε, variance 2/ε², kurtosis 3 + 6/2 = 6.
	if err := stattest.CheckMoments(ds, ExpectedError(eps), 2/(eps*eps), 6, stattest.Z); err != nil {
		t.Error(err)
	}
}

func TestAccuracyAt(t *testing.T) {
	const et, en, l = 0.002, 0.001, 1500.0
	// pr = 0: the planar Laplace quantile; pr = 1: l + the Laplace quantile.
	if got, want := AccuracyAt(0.1, 0, et, en, l), 3.889720169867429/en; math.Abs(got-want) > 1e-9*want {
		t.Errorf("pr = 0: %.10g, want %.10g", got, want)
	}
	if got, want := AccuracyAt(0.1, 1, et, en, l), l+math.Log(5)/et; math.Abs(got-want) > 1e-9*want {
		t.Errorf("pr = 1: %.10g, want %.10g", got, want)
	}
	// A mixture lies between its components, and δ(α) round-trips.
	a := AccuracyAt(0.1, 0.6, et, en, l)
	c1, c2 := 3.889720169867429/en, l+math.Log(5)/et
	if !(a > min(c1, c2) && a < max(c1, c2)) {
		t.Errorf("mixture accuracy %g outside its components", a)
	}
	if d := FailureProbability(a, 0.6, et, en, l); math.Abs(d-0.1) > 1e-12 {
		t.Errorf("δ(α(0.1)) = %g", d)
	}
}
