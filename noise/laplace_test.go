package noise

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/param"
)

func TestLaplaceQuantile(t *testing.T) {
	// Stronati's worst_noise_linear: the 0.9 quantile is ln5/ε.
	for _, eps := range []float64{10, 1, 0.1, 0.01, 0.001} {
		l := Laplace{Epsilon: eps, Sensitivity: 1}
		if e := relErr(l.Quantile(0.9)*eps, 1.6094379124341005); e > 1e-15 {
			t.Errorf("eps=%g: Quantile(0.9)·eps = %.17g", eps, l.Quantile(0.9)*eps)
		}
		for _, p := range []float64{1e-12, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-9} {
			if got := l.CDF(l.Quantile(p)); math.Abs(got-p) > 1e-14*math.Min(p, 1-p)+0x1p-53 {
				t.Errorf("eps=%g: CDF(Quantile(%g)) = %.17g", eps, p, got)
			}
		}
	}
	l := Laplace{Epsilon: 1, Sensitivity: 2}
	if q := l.Quantile(0.5); q != 0 {
		t.Errorf("median = %v", q)
	}
	if !math.IsNaN(l.Quantile(2)) {
		t.Error("Quantile(2) not NaN")
	}
}

func TestLaplaceValidate(t *testing.T) {
	bad := []Laplace{
		{Epsilon: 0, Sensitivity: 1},
		{Epsilon: -1, Sensitivity: 1},
		{Epsilon: math.NaN(), Sensitivity: 1},
		{Epsilon: math.Inf(1), Sensitivity: 1},
		{Epsilon: 0x1p-51, Sensitivity: 1},
		{Epsilon: 1, Sensitivity: 0},
		{Epsilon: 1, Sensitivity: math.Inf(1)},
		{Epsilon: 1e-10, Sensitivity: math.MaxFloat64},
	}
	for _, l := range bad {
		t.Run(fmt.Sprintf("eps=%g,sens=%g", l.Epsilon, l.Sensitivity), func(t *testing.T) {
			err := l.Validate()
			if !errors.Is(err, param.ErrInvalid) {
				t.Errorf("Validate(%+v) = %v, want param.ErrInvalid", l, err)
			}
			l.Src = Seeded(1)
			if got := l.Add(3); !math.IsNaN(got) {
				t.Errorf("Add with %+v = %v, want NaN", l, got)
			}
		})
	}
}

// TestLaplaceRoundsToGranularity: outputs lie on gZ, g a power of two >=
// b/2^40 and < 2b/2^40, whatever the input's low bits.
func TestLaplaceRoundsToGranularity(t *testing.T) {
	src := Seeded(3)
	for _, c := range []struct{ eps, sens float64 }{{1, 1}, {0.1, 3}, {1e-3, 1e5}, {5, 1e-6}, {math.Ln2, 0.5}} {
		t.Run(fmt.Sprintf("eps=%g,sens=%g", c.eps, c.sens), func(t *testing.T) {
			l := Laplace{Epsilon: c.eps, Sensitivity: c.sens, Src: src}
			g := l.Granularity()
			b := l.Scale()
			if !isPowerOfTwo(g) || g < b/0x1p40 || g >= 2*b/0x1p40 {
				t.Errorf("%+v: granularity %g is not the power of two in [b/2^40, 2b/2^40)", c, g)
			}
			for _, x := range []float64{0, 0.1, -7.3, 1e6 + 1.0/3, math.Pi} {
				for range 20 {
					y := l.Add(x)
					if k := y / g; k != math.Trunc(k) {
						t.Errorf("%+v: Add(%g) = %.17g is not a multiple of %g", c, x, y, g)
					}
				}
			}
		})
	}
}

func TestLaplaceVariance(t *testing.T) {
	// The lattice variance is within O(g/Δ) of the continuous 2b².
	for _, c := range []struct{ eps, sens float64 }{{1, 1}, {0.01, 1}, {math.Log(3), 1}, {2, 10}} {
		t.Run(fmt.Sprintf("eps=%g,sens=%g", c.eps, c.sens), func(t *testing.T) {
			l := Laplace{Epsilon: c.eps, Sensitivity: c.sens}
			want := 2 * l.Scale() * l.Scale()
			if e := relErr(l.Variance(), want); e > 1e-9 {
				t.Errorf("%+v: Variance %g vs 2b² %g (rel %g)", c, l.Variance(), want, e)
			}
		})
	}
	// Google's table: ε = ln 3, Δ = 1 gives 2/ln²3.
	l := Laplace{Epsilon: math.Log(3), Sensitivity: 1}
	if e := relErr(l.Variance(), 2/(math.Log(3)*math.Log(3))); e > 1e-9 {
		t.Errorf("Variance(ln 3) = %g", l.Variance())
	}
}

// TestLaplaceStatistics is Google's TestLaplaceStatistics: 125,000 draws,
// mean within z√(var/n), variance within z√5·var/√n, z = 4.41717.
func TestLaplaceStatistics(t *testing.T) {
	t.Parallel()
	const n = 125000
	cases := []struct{ x, eps, sens float64 }{
		{0, math.Log(3), 1},
		{-5, 0.5, 2},
		{1e3, 0.01, 1},
		{3.25, 10, 0.1},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("x=%g,eps=%g,sens=%g", c.x, c.eps, c.sens), func(t *testing.T) {
			l := Laplace{Epsilon: c.eps, Sensitivity: c.sens, Src: Seeded(uint64(200 + i))}
			xs := make([]float64, n)
			for k := range xs {
				xs[k] = l.Add(c.x)
			}
			if err := stattest.CheckMoments(xs, c.x, l.Variance(), stattest.KurtosisLaplace, stattest.Z); err != nil {
				t.Errorf("%+v: %v", c, err)
			}
			if d, p := stattest.KS(xs, func(v float64) float64 { return l.CDF(v - c.x) }); p < 1e-4 {
				t.Errorf("%+v: KS D=%g p=%g", c, d, p)
			}
		})
	}
}

func TestLaplaceRandStatistics(t *testing.T) {
	const n = 100000
	src := Seeded(9)
	xs := make([]float64, n)
	for k := range xs {
		xs[k] = LaplaceRand(src, 2)
	}
	if err := stattest.CheckMoments(xs, 0, 8, stattest.KurtosisLaplace, stattest.Z); err != nil {
		t.Error(err)
	}
}

// laplaceHistogram releases x n times and bins the outputs.
func laplaceHistogram(l Laplace, x float64, n int, bins stattest.Bins) []int {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = l.Add(x)
	}
	return bins.Histogram(xs)
}

// TestLaplaceDPFalsifier runs the histogram DP test on adjacent inputs 0 and
// Δ. The tails have ratio exactly e^ε, so the check is tight. The negative
// control releases with half the scale (2ε) but is tested at ε, and must be
// rejected.
func TestLaplaceDPFalsifier(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("statistical falsifier")
	}
	const (
		eps  = 1.0
		sens = 1.0
		n    = 100000
	)
	bins := stattest.Bins{Lo: -6, Hi: 7, N: 26}
	run := func(sampleEps float64, seed uint64) stattest.DPResult {
		a := laplaceHistogram(Laplace{Epsilon: sampleEps, Sensitivity: sens, Src: Seeded(seed)}, 0, n, bins)
		b := laplaceHistogram(Laplace{Epsilon: sampleEps, Sensitivity: sens, Src: Seeded(seed + 1)}, sens, n, bins)
		r, err := stattest.DPCheck{Epsilon: eps}.Check(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var last stattest.DPResult
	if !stattest.Vote(3, func(i int) bool { last = run(eps, uint64(300+10*i)); return last.OK }) {
		t.Errorf("secure Laplace rejected at e^eps: %+v", last.Worst)
	}
	t.Logf("genuine: max bin ratio %.3f vs e^eps %.3f", last.MaxRatio, math.Exp(eps))
	if stattest.Vote(3, func(i int) bool { last = run(2*eps, uint64(400+10*i)); return last.OK }) {
		t.Errorf("falsifier accepted Laplace at half the scale: %+v", last.Worst)
	}
	t.Logf("broken: max bin ratio %.3f", last.MaxRatio)
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}
