package noise

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
)

func TestSeededReproducible(t *testing.T) {
	a, b, c := Seeded(11), Seeded(11), Seeded(12)
	same := true
	for range 100 {
		x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
		if x != y {
			t.Fatal("Seeded(11) streams differ")
		}
		same = same && x == z
	}
	if same {
		t.Error("Seeded(11) and Seeded(12) give the same stream")
	}
	p := PlanarLaplace{Epsilon: 0.01, Src: Seeded(5)}
	q := PlanarLaplace{Epsilon: 0.01, Src: Seeded(5)}
	if x1, y1 := p.Rand(); true {
		if x2, y2 := q.Rand(); x1 != x2 || y1 != y2 {
			t.Error("planar Laplace not reproducible with Seeded")
		}
	}
	if d := Describe(Seeded(5)); d != "seeded:5" {
		t.Errorf("Describe(Seeded(5)) = %q", d)
	}
	if IsSecure(Seeded(5)) {
		t.Error("IsSecure(Seeded) = true")
	}
}

// TestSecureSanity: the crypto source is described as such, does not
// repeat, and its uniforms pass a quick moment check.
func TestSecureSanity(t *testing.T) {
	s := Secure()
	if Describe(s) != "crypto" || !IsSecure(s) {
		t.Errorf("Describe(Secure()) = %q, IsSecure = %v", Describe(s), IsSecure(s))
	}
	if !strings.HasPrefix(Describe(orSecure(nil)), "crypto") {
		t.Error("nil source does not default to crypto/rand")
	}
	seen := map[uint64]bool{}
	for range 1000 {
		u := s.Uint64()
		if seen[u] {
			t.Fatal("crypto source repeated a 64-bit value in 1000 draws")
		}
		seen[u] = true
	}
	// Randomised (not seeded): z = 6 makes a false alarm ~1e-9.
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = Uniform(s)
	}
	if err := stattest.CheckMoments(xs, 0.5, 1.0/12, stattest.KurtosisUniform, 6); err != nil {
		t.Error(err)
	}
}

func TestUniform(t *testing.T) {
	t.Parallel()
	src := Seeded(21)
	const n = 200000
	xs := make([]float64, n)
	small := 0
	for i := range xs {
		u := Uniform(src)
		if !(u > 0 && u < 1) {
			t.Fatalf("Uniform = %v outside (0, 1)", u)
		}
		if u < 1.0/1024 {
			small++
		}
		xs[i] = u
	}
	if err := stattest.CheckMoments(xs, 0.5, 1.0/12, stattest.KurtosisUniform, stattest.Z); err != nil {
		t.Error(err)
	}
	if d, p := stattest.KS(xs, func(x float64) float64 { return math.Min(math.Max(x, 0), 1) }); p < 1e-4 {
		t.Errorf("KS D=%g p=%g", d, p)
	}
	// Full resolution near 0: ln U over the draws below 2^-10 is
	// -10 ln2 - Exp(1) (memoryless), mean -(10 ln 2 + 1), var 1.
	var logs []float64
	for _, u := range xs {
		if u < 1.0/1024 {
			logs = append(logs, math.Log(u*1024))
		}
	}
	if err := stattest.CheckMoments(logs, -1, 1, 9, stattest.Z); err != nil {
		t.Errorf("log of small uniforms (%d of them): %v", small, err)
	}
	// An all-zero source still yields a positive value (deep binade).
	if u := Uniform(zeroSource{}); !(u > 0 && u < 1e-290) {
		t.Errorf("Uniform(zero source) = %v", u)
	}
}

type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

func TestExponentialNormal(t *testing.T) {
	const n = 200000
	src := Seeded(22)
	es := make([]float64, n)
	ns := make([]float64, n)
	for i := range es {
		es[i] = Exponential(src)
		ns[i] = Normal(src)
	}
	// Exp(1): mean 1, variance 1, kurtosis 9.
	if err := stattest.CheckMoments(es, 1, 1, 9, stattest.Z); err != nil {
		t.Errorf("exponential: %v", err)
	}
	if err := stattest.CheckMoments(ns, 0, 1, stattest.KurtosisNormal, stattest.Z); err != nil {
		t.Errorf("normal: %v", err)
	}
}

func TestGeometric(t *testing.T) {
	t.Parallel()
	const n = 100000
	src := Seeded(23)
	for _, c := range []struct {
		lambda float64
		n      int
	}{{0.05, n}, {1, n}, {math.Ln2, n}, {5, n}, {1e-6, n}, {1e-12, n / 4}, {1e-18, n / 4} /* bisection path */} {
		t.Run(fmt.Sprintf("lambda=%g", c.lambda), func(t *testing.T) {
			lambda := c.lambda
			p := -math.Expm1(-lambda)
			xs := make([]float64, c.n)
			for i := range xs {
				k := Geometric(src, lambda)
				if k < 1 {
					t.Fatalf("Geometric(%g) = %d < 1", lambda, k)
				}
				xs[i] = float64(k)
			}
			// Mean 1/p, variance (1-p)/p², kurtosis 9 + p²/(1-p).
			q := 1 - p
			if err := stattest.CheckMoments(xs, 1/p, q/(p*p), 9+p*p/q, stattest.Z); err != nil {
				t.Errorf("lambda=%g: %v", lambda, err)
			}
		})
	}
	if Geometric(src, 0) != 0 || Geometric(src, math.NaN()) != 0 || TwoSidedGeometric(src, -1) != 0 {
		t.Error("invalid lambda not reported as 0")
	}
	if Geometric(src, math.Inf(1)) != 1 {
		t.Error("Geometric(+Inf) != 1")
	}
}

// TestTwoSidedGeometric checks the discrete Laplace law exactly with a
// chi-square test on P(k) = (1-α)/(1+α)·α^|k|, α = e^-λ.
func TestTwoSidedGeometric(t *testing.T) {
	const n = 100000
	src := Seeded(24)
	lambda := 0.7
	alpha := math.Exp(-lambda)
	const kmax = 8 // bins -8..8, tails pooled into the end bins
	counts := make([]int, 2*kmax+1)
	for range n {
		k := TwoSidedGeometric(src, lambda)
		k = max(-kmax, min(kmax, k))
		counts[k+kmax]++
	}
	probs := make([]float64, len(counts))
	c := (1 - alpha) / (1 + alpha)
	for k := -kmax; k <= kmax; k++ {
		pk := c * math.Pow(alpha, math.Abs(float64(k)))
		if k == kmax || k == -kmax { // P(K >= kmax) = α^kmax/(1+α)
			pk = math.Pow(alpha, kmax) / (1 + alpha)
		}
		probs[k+kmax] = pk
	}
	chi2, df, p, err := stattest.ChiSquare(counts, probs)
	if err != nil {
		t.Fatal(err)
	}
	if p < 1e-4 {
		t.Errorf("two-sided geometric chi2 = %g (df %d), p = %g", chi2, df, p)
	}
}

func TestBitsBoolInt(t *testing.T) {
	src := Seeded(25)
	for range 100 {
		if Bits(src, 5) >= 32 {
			t.Fatal("Bits(5) >= 32")
		}
		if v := Int64N(src, 7); v < 0 || v >= 7 {
			t.Fatalf("Int64N(7) = %d", v)
		}
	}
	ones := 0
	for range 10000 {
		if Bool(src) {
			ones++
		}
	}
	// Binomial(10000, 1/2): sd 50; z = 4.41717.
	if math.Abs(float64(ones)-5000) > stattest.Z*50 {
		t.Errorf("Bool gave %d ones in 10000", ones)
	}
	if Bits(src, 0) != 0 || Int64N(src, 0) != 0 {
		t.Error("degenerate Bits/Int64N not 0")
	}
}

func TestSecureMath(t *testing.T) {
	cases := []struct{ x, want float64 }{
		{1, 1}, {3, 4}, {4, 4}, {0.3, 0.5}, {0x1p-1074, 0x1p-1074}, {0x1.0000000000001p10, 0x1p11}, {1e-300, 0x1p-996},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("x=%g", c.x), func(t *testing.T) {
			if got := ceilPowerOfTwo(c.x); got != c.want {
				t.Errorf("ceilPowerOfTwo(%g) = %g, want %g", c.x, got, c.want)
			}
		})
	}
	if r := roundToMultipleOfPowerOfTwo(0.3, 0.25); r != 0.25 {
		t.Errorf("round(0.3, 1/4) = %g", r)
	}
	if r := roundToMultipleOfPowerOfTwo(-1.625, 0.25); r != -1.75 {
		t.Errorf("round(-1.625, 1/4) = %g", r)
	}
}

// TestSecureConcurrent: the shared default source (nil Src) is safe for
// concurrent use; run with -race to check.
func TestSecureConcurrent(t *testing.T) {
	done := make(chan float64)
	for range 4 {
		go func() {
			s := 0.0
			for range 500 {
				s += Laplace{Epsilon: 1, Sensitivity: 1}.Add(0)
				dx, _ := PlanarLaplace{Epsilon: 1}.Rand()
				s += dx
			}
			done <- s
		}()
	}
	for range 4 {
		if s := <-done; math.IsNaN(s) {
			t.Error("NaN from concurrent secure draws")
		}
	}
}

// Derived seeded streams depend on the seed and the label only; the secure
// source derives to itself.
func TestDerive(t *testing.T) {
	a, b, c := Derive(Seeded(3), "000"), Derive(Seeded(3), "000"), Derive(Seeded(3), "001")
	first := a.Uint64()
	if b.Uint64() != first || c.Uint64() == first || Seeded(3).Uint64() == first {
		t.Error("derived streams are not determined by (seed, label) alone")
	}
	if d := Describe(Derive(Seeded(3), "000")); d != "seeded:3/000" {
		t.Errorf("Describe = %q", d)
	}
	s := Secure()
	if Derive(s, "x") != s {
		t.Error("the secure source derived to something else")
	}
}
