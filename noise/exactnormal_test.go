package noise

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// binomialCheck fails the test if count is more than z binomial standard
// errors from n·p.
func binomialCheck(t *testing.T, what string, count, n int, p float64) {
	t.Helper()
	mean := float64(n) * p
	sd := math.Sqrt(mean * (1 - p))
	if d := math.Abs(float64(count) - mean); d > stattest.Z*sd {
		t.Errorf("%s: %d of %d, expected %.1f ± %.1f (z = %g)", what, count, n, mean, stattest.Z*sd, stattest.Z)
	} else {
		t.Logf("%s: %d of %d, expected %.1f", what, count, n, mean)
	}
}

// The exact normal sampler against N(0, 1): KS on the floats, moments, the
// frequency of |Z| > 3 and > 4, the sign, and a chi-square of the integer
// part k = floor|Z|.
func TestLazyNormalDistribution(t *testing.T) {
	t.Parallel()
	const n = 400000
	s := normalSampler{rd: digitReader{src: Seeded(41)}}
	var z LazyNormal
	xs := make([]float64, n)
	kCounts := make([]int, 5) // k = 0..3 and k >= 4
	over3, over4, neg := 0, 0, 0
	for i := range xs {
		s.sample(&z)
		x := z.Float64()
		xs[i] = x
		a := math.Abs(x)
		if a > 3 {
			over3++
		}
		if a > 4 {
			over4++
		}
		if z.neg {
			neg++
		}
		kCounts[min(int(z.k), 4)]++
		if int(z.k) != int(a) {
			t.Fatalf("integer part %d of %v", z.k, x)
		}
	}
	if d, p := stattest.KS(xs, distuv.UnitNormal.CDF); p < 1e-4 {
		t.Errorf("KS against Φ: D = %g, p = %g", d, p)
	}
	if err := stattest.CheckMoments(xs, 0, 1, stattest.KurtosisNormal, stattest.Z); err != nil {
		t.Error(err)
	}
	binomialCheck(t, "|Z| > 3", over3, n, math.Erfc(3/math.Sqrt2))
	binomialCheck(t, "|Z| > 4", over4, n, math.Erfc(4/math.Sqrt2))
	binomialCheck(t, "Z < 0", neg, n, 0.5)
	probs := make([]float64, 5)
	for k := range 4 { // P(k <= |Z| < k+1) = erfc(k/√2) - erfc((k+1)/√2)
		probs[k] = math.Erfc(float64(k)/math.Sqrt2) - math.Erfc(float64(k+1)/math.Sqrt2)
	}
	probs[4] = math.Erfc(4 / math.Sqrt2)
	chi2, df, p, err := stattest.ChiSquare(kCounts, probs)
	if err != nil {
		t.Fatal(err)
	}
	if p < 1e-4 {
		t.Errorf("integer part: chi2 = %g (df %d), p = %g, counts %v", chi2, df, p, kCounts)
	}
}

// The negative control for the test above: the same checks reject a
// normal with 2% too much spread.
func TestLazyNormalDistributionPower(t *testing.T) {
	t.Parallel()
	s := normalSampler{rd: digitReader{src: Seeded(42)}}
	var z LazyNormal
	xs := make([]float64, 400000)
	for i := range xs {
		s.sample(&z)
		xs[i] = 1.02 * z.Float64()
	}
	_, p := stattest.KS(xs, distuv.UnitNormal.CDF)
	if err := stattest.CheckMoments(xs, 0, 1, stattest.KurtosisNormal, stattest.Z); err == nil && p >= 1e-4 {
		t.Errorf("a normal with sd 1.02 passed both the moment check and KS (p = %g)", p)
	}
}

// Digits beyond the first are uniform: the conditional law of x given its
// first 16 bits is uniform to within a relative 2^-16·|z|, far below what
// 400,000 draws resolve, and digits drawn by Refine must be fair too. A
// chi-square of the top 4 bits of digits 2-8 (bits 17-128) per digit.
func TestLazyNormalLowDigitsUniform(t *testing.T) {
	t.Parallel()
	const n = 200000
	s := normalSampler{rd: digitReader{src: Seeded(43)}}
	var z LazyNormal
	counts := make([][]int, 8)
	for d := range counts {
		counts[d] = make([]int, 16)
	}
	for range n {
		s.sample(&z)
		z.refine(&s.rd, 128)
		for d := 1; d < 8; d++ {
			counts[d][z.digits[d]>>(digitBits-4)]++
		}
	}
	uniform := make([]float64, 16)
	for i := range uniform {
		uniform[i] = 1.0 / 16
	}
	for d := 1; d < 8; d++ {
		chi2, df, p, err := stattest.ChiSquare(counts[d], uniform)
		if err != nil {
			t.Fatal(err)
		}
		if p < 1e-4 {
			t.Errorf("digit %d: chi2 = %g (df %d), p = %g", d, chi2, df, p)
		}
	}
}

// expHalf is Bernoulli(e^{-1/2}); expB(k, x) for a fresh uniform x has
// success probability ∫₀¹ e^{-x(2k+x)/(2k+2)} dx.
func TestKarneyBernoullis(t *testing.T) {
	const n = 400000
	s := normalSampler{rd: digitReader{src: Seeded(44)}}
	hits := 0
	for range n {
		if s.expHalf() {
			hits++
		}
	}
	binomialCheck(t, "expHalf", hits, n, math.Exp(-0.5))
	for _, k := range []uint32{0, 1, 3} {
		want := quad.Fixed(func(x float64) float64 {
			kk := float64(k)
			return math.Exp(-x * (2*kk + x) / (2*kk + 2))
		}, 0, 1, 30, quad.Legendre{}, 0)
		hits := 0
		for range n / 4 {
			x := []uint32(nil)
			if s.expB(k, &x) {
				hits++
			}
		}
		binomialCheck(t, fmt.Sprintf("expB(k=%d)", k), hits, n/4, want)
	}
}

// Enclosure, ErrorBound and Refine agree: the float is within the bound of
// every point of the enclosure's midpoint, the enclosure has width
// 2^-Bits, and refining nests the enclosures without changing Float64.
func TestLazyNormalEnclosure(t *testing.T) {
	src := Seeded(45)
	var lo, hi, lo2, hi2, mid, d, f big.Float
	for range 2000 {
		z := NewLazyNormal(src)
		if z.Bits() < 64 {
			t.Fatalf("only %d bits", z.Bits())
		}
		z.Enclosure(&lo, &hi)
		d.SetPrec(2000).Sub(&hi, &lo)
		if want := new(big.Float).SetMantExp(big.NewFloat(1), -int(z.Bits())); d.Cmp(want) != 0 {
			t.Fatalf("enclosure width %v, want 2^-%d", &d, z.Bits())
		}
		mid.SetPrec(2000).Add(&lo, &hi)
		mid.Quo(&mid, big.NewFloat(2))
		fv := z.Float64()
		d.Sub(&mid, f.SetFloat64(fv))
		if e, _ := d.Abs(&d).Float64(); e > z.ErrorBound() {
			t.Fatalf("|mid - Float64| = %g > ErrorBound %g", e, z.ErrorBound())
		}
		if (fv < 0) != z.neg {
			t.Fatalf("sign of %v", fv)
		}
		z.Refine(src, 200)
		if z.Bits() < 200 || z.Float64() != fv {
			t.Fatalf("Refine: %d bits, float %v -> %v", z.Bits(), fv, z.Float64())
		}
		z.Enclosure(&lo2, &hi2)
		if lo2.Cmp(&lo) < 0 || hi2.Cmp(&hi) > 0 || lo2.Cmp(&hi2) >= 0 {
			t.Fatalf("refined enclosure (%v, %v) not inside (%v, %v)", &lo2, &hi2, &lo, &hi)
		}
		// Truncated enclosures contain the full one.
		z.enclose(5, &lo2, &hi2)
		if lo2.Cmp(&lo) > 0 || hi2.Cmp(&hi) < 0 {
			t.Fatalf("5-bit enclosure (%v, %v) does not contain (%v, %v)", &lo2, &hi2, &lo, &hi)
		}
	}
}

// Seeded draws are reproducible; secure draws pass a randomised moment
// check (z = 6, false alarm about 1e-9).
func TestLazyNormalSources(t *testing.T) {
	a, b := NewLazyNormal(Seeded(7)), NewLazyNormal(Seeded(7))
	if a.Float64() != b.Float64() || a.Bits() != b.Bits() {
		t.Errorf("seeded draws differ: %v, %v", a.Float64(), b.Float64())
	}
	src := Secure()
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = NewLazyNormal(src).Float64()
	}
	if err := stattest.CheckMoments(xs, 0, 1, stattest.KurtosisNormal, 6); err != nil {
		t.Error(err)
	}
}
