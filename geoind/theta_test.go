package geoind

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
)

func testCounts(th Test, d float64, n int, src noise.Source) []int {
	c := make([]int, 2)
	for range n {
		if th.EasyDist(d, src) {
			c[0]++
		} else {
			c[1]++
		}
	}
	return c
}

// TestThetaPassProbability compares the empirical pass rate with
// 1 - ½e^{-ε(l-d)} (d <= l) and ½e^{-ε(d-l)} (d > l).
func TestThetaPassProbability(t *testing.T) {
	th := Test{Epsilon: 0.01, Threshold: 500}
	src := noise.Seeded(4)
	const n = 20000
	for _, d := range []float64{0, 300, 500, 600, 900} {
		c := testCounts(th, d, n, src)
		p := th.PassProbability(d)
		want := 0.0
		if d <= 500 {
			want = 1 - 0.5*math.Exp(-0.01*(500-d))
		} else {
			want = 0.5 * math.Exp(-0.01*(d-500))
		}
		if math.Abs(p-want) > 1e-15 {
			t.Errorf("PassProbability(%g) = %g, want %g", d, p, want)
		}
		got := float64(c[0]) / n
		if tol := stattest.Z * math.Sqrt(p*(1-p)/n); math.Abs(got-p) > tol {
			t.Errorf("d = %g: pass rate %.4f, want %.4f ± %.4f", d, got, p, tol)
		}
	}
}

// TestThetaPrivacy is the DP falsification of the test (Fact 1): for
// secrets whose distances to the prediction differ by Δ, the outcome
// probabilities differ by at most e^{ε_θ Δ}. Beyond the threshold the pass
// probability is ½e^{-ε(d-l)}, so the bound is attained exactly there.
func TestThetaPrivacy(t *testing.T) {
	n := 60000
	if testing.Short() {
		n = 20000
	}
	const eps, l = 1.0, 3.0
	src := noise.Seeded(5)
	for _, pair := range [][2]float64{{l + 1, l + 2}, {l - 1, l}, {0, 1.5}} {
		delta := pair[1] - pair[0]
		a := testCounts(Test{eps, l}, pair[0], n, src)
		b := testCounts(Test{eps, l}, pair[1], n, src)
		res, err := stattest.DPCheck{Epsilon: eps * delta}.Check(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK {
			t.Errorf("distances %v: test violates ε_θ·d-privacy: %+v", pair, res.Worst)
		}
	}
	// Negative control: a test whose noise is Lap(2ε) but claims ε.
	a := testCounts(Test{2 * eps, l}, l+1, n, src)
	b := testCounts(Test{2 * eps, l}, l+2, n, src)
	res, err := stattest.DPCheck{Epsilon: eps}.Check(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Errorf("falsifier accepted a test with half the noise: %+v", res)
	}
}

func TestThetaValidate(t *testing.T) {
	for _, th := range []Test{{0, 1}, {math.NaN(), 1}, {1, -1}, {1, math.Inf(1)}} {
		if _, err := th.Easy(Vec{}, Vec{}, noise.Seeded(1)); err == nil {
			t.Errorf("%+v: expected an error", th)
		}
	}
}
