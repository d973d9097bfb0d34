package stattest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestMomentsAndTolerances(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	m := SampleMoments(xs)
	if m.N != 4 || m.Mean != 2.5 || math.Abs(m.Variance-5.0/3) > 1e-15 {
		t.Errorf("SampleMoments = %+v, want {4 2.5 1.6667}", m)
	}
	// Google's Laplace tolerance z√5·var/√n is the κ = 6 case.
	if a, b := VarianceTolerance(125000, 2, KurtosisLaplace, Z), Z*math.Sqrt(5)*2/math.Sqrt(125000); math.Abs(a-b) > 1e-15 {
		t.Errorf("VarianceTolerance = %g, Google's %g", a, b)
	}
	if a := MeanTolerance(100, 4, 2); a != 0.4 {
		t.Errorf("MeanTolerance = %g", a)
	}
	if err := CheckMean(xs, 2.5, 1, Z); err != nil {
		t.Error(err)
	}
	if err := CheckMean(xs, 10, 1, Z); err == nil {
		t.Error("CheckMean accepted a mean 7.5 off with tolerance 2.2")
	}
	if err := CheckVariance([]float64{1}, 1, 3, Z); err == nil {
		t.Error("CheckVariance accepted one sample")
	}
}

// The moment checks must catch a sampler with the wrong scale.
func TestCheckMomentsPower(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 50000)
	for i := range xs {
		xs[i] = 1.05 * r.NormFloat64() // 10% too much variance
	}
	if err := CheckMoments(xs, 0, 1, KurtosisNormal, Z); err == nil {
		t.Error("CheckMoments accepted variance 1.1025 as 1 with n = 50000")
	}
	if err := CheckMoments(xs, 0, 1.1025, KurtosisNormal, Z); err != nil {
		t.Error(err)
	}
}

// ChiSquare: counts 10, 20, 30 against uniform thirds give χ² = 10 with
// 2 df, whose survival function is e^{-x/2} = e^{-5}.
func TestChiSquare(t *testing.T) {
	chi2, df, p, err := ChiSquare([]int{10, 20, 30}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(chi2-10) > 1e-12 || df != 2 || math.Abs(p-math.Exp(-5)) > 1e-12 {
		t.Errorf("ChiSquare = %g, %d, %g; want 10, 2, %g", chi2, df, p, math.Exp(-5))
	}
	if _, _, _, err := ChiSquare([]int{1, 2}, []float64{0.5, 0.6}); err == nil {
		t.Error("probabilities summing to 1.1 accepted")
	}
	if _, _, _, err := ChiSquare([]int{1, 2}, []float64{1, 0}); err == nil {
		t.Error("zero probability accepted")
	}
}

// KS: Q(1) = 2Σ(-1)^{k-1}e^{-2k²} = 0.26999967167735452 (mpmath, 40 digits).
func TestKS(t *testing.T) {
	if q := kolmogorovQ(1); math.Abs(q-0.2699996716773545212) > 1e-15 {
		t.Errorf("Q(1) = %.17g", q)
	}
	if q := kolmogorovQ(0.1); q != 1 {
		t.Errorf("Q(0.1) = %g", q)
	}
	d, _ := KS([]float64{0.5}, func(x float64) float64 { return x })
	if d != 0.5 {
		t.Errorf("D = %g, want 0.5", d)
	}
	// Uniform samples pass; squared uniforms (CDF √x) fail against uniform.
	r := rand.New(rand.NewPCG(3, 4))
	u := make([]float64, 5000)
	sq := make([]float64, 5000)
	for i := range u {
		u[i] = r.Float64()
		sq[i] = u[i] * u[i]
	}
	id := func(x float64) float64 { return math.Min(math.Max(x, 0), 1) }
	if _, p := KS(u, id); p < 1e-4 {
		t.Errorf("uniform rejected, p = %g", p)
	}
	if _, p := KS(sq, id); p > 1e-6 {
		t.Errorf("squared uniforms accepted as uniform, p = %g", p)
	}
}

// Google's StatisticalTestsUtilTest samples: counts 1..5 against 5..1. With
// ε = 1 only the last bin has c_a > e c_b, so the test value is
// (5 - e)/15 = 0.15211… in each direction.
func TestApproxDP(t *testing.T) {
	a := []int{1, 2, 3, 4, 5}
	b := []int{5, 4, 3, 2, 1}
	want := (5 - math.E) / 15
	if v := ApproxDPTestValue(a, b, 1); math.Abs(v-want) > 1e-15 {
		t.Errorf("test value %g, want %g", v, want)
	}
	if ok, err := VerifyApproximateDP(a, b, 1, 0, 1e-5); err != nil || ok {
		t.Errorf("VerifyApproximateDP accepted (ε=1, δ=0): %v %v", ok, err)
	}
	if ok, _ := VerifyApproximateDP(a, b, 1, 0.15, 0.01); !ok {
		t.Error("VerifyApproximateDP rejected at δ = 0.15 + 0.01 > 0.1521")
	}
	if ok, _ := VerifyApproximateDP(a, a, 0, 0, 1e-5); !ok {
		t.Error("identical samples rejected")
	}
	if _, err := VerifyApproximateDP(a, []int{1, 2, 3, 4, 6}, 1, 0, 0.1); err == nil {
		t.Error("unequal totals accepted")
	}
	// Error bound: n = 1e6, m = 10, ε = 0.5, α = 0.1.
	c := 1 + math.Exp(1)
	gap := 0.1 - math.Sqrt(1e-5)*c
	if b := ApproxDPErrorBound(1e6, 10, 0.5, 0.1); math.Abs(b-c/(1e6*gap*gap)) > 1e-15 {
		t.Errorf("error bound %g", b)
	}
	if b := ApproxDPErrorBound(100, 100, 1, 0.5); !math.IsInf(b, 1) {
		t.Errorf("vacuous bound = %g, want +Inf", b)
	}
}

func TestDPCheck(t *testing.T) {
	// Ratio exactly e^1 on both bins of equal mass is accepted.
	a := []int{7311, 2689} // ≈ e/(1+e), 1/(1+e)
	b := []int{2689, 7311}
	r, err := DPCheck{Epsilon: 1}.Check(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK {
		t.Errorf("ratio e accepted at ε = 1 should pass: %+v", r.Worst)
	}
	// Ratio 9 at ε = 1: excess 0.9 - e·0.1 = 0.628.
	r, _ = DPCheck{Epsilon: 1}.Check([]int{9000, 1000}, []int{1000, 9000})
	if r.OK || math.Abs(r.Worst.Excess-(0.9-math.E*0.1)) > 1e-12 || r.MaxRatio != 9 {
		t.Errorf("ratio 9 at ε = 1: %+v", r)
	}
	// δ absorbs it.
	if r, _ = (DPCheck{Epsilon: 1, Delta: 0.7}).Check([]int{9000, 1000}, []int{1000, 9000}); !r.OK {
		t.Error("δ = 0.7 should cover an excess of 0.628")
	}
	// Low-count bins are pooled, not dropped: three bins of 30 each are
	// one pooled event, which here violates the bound.
	r, _ = DPCheck{Epsilon: 0.1}.Check([]int{5000, 30, 30, 30, 4910}, []int{5000, 0, 0, 0, 5000})
	if r.Pooled != 3 || r.Tested != 3 {
		t.Errorf("pooled %d tested %d, want 3 and 3", r.Pooled, r.Tested)
	}
	if r.OK || r.Worst.Bin != -1 {
		t.Errorf("pooled violation missed: %+v", r.Worst)
	}
	if _, err := (DPCheck{Epsilon: 1}).Check([]int{1}, []int{1, 2}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := (DPCheck{Epsilon: -1}).Check([]int{1}, []int{1}); err == nil {
		t.Error("negative epsilon accepted")
	}
}

func TestBins(t *testing.T) {
	b := Bins{Lo: 0, Hi: 1, N: 4}
	for _, c := range []struct {
		x    float64
		want int
	}{{-5, 0}, {0, 0}, {0.25, 1}, {0.99, 3}, {1, 3}, {7, 3}, {math.NaN(), 0}} {
		t.Run(fmt.Sprintf("x=%g", c.x), func(t *testing.T) {
			if got := b.Index(c.x); got != c.want {
				t.Errorf("Index(%v) = %d, want %d", c.x, got, c.want)
			}
		})
	}
	if h := b.Histogram([]float64{0.1, 0.6, 0.6, 2}); fmt.Sprint(h) != "[1 0 2 1]" {
		t.Errorf("Histogram = %v", h)
	}
	if _, err := Counts([]int{0, 3}, 3); err == nil {
		t.Error("Counts accepted an out-of-range bin")
	}
}

func TestVote(t *testing.T) {
	calls := 0
	if !Vote(5, func(i int) bool { calls++; return i != 1 }) {
		t.Error("majority of true lost")
	}
	if calls != 4 {
		t.Errorf("Vote made %d calls, want 4 (stops once 3 of 5 agree)", calls)
	}
	if Vote(3, func(i int) bool { return i == 0 }) {
		t.Error("minority true won")
	}
}
