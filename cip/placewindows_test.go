package cip

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// windowScanCheck returns the largest relative difference between the
// every-window scan (with the planted error plant) and v_S' G^-1 v_S
// recomputed per window: v_S by the Kalman conditionalMean, then a dense
// Cholesky solve with G. It also counts the windows visited.
func windowScanCheck(t *testing.T, ts []float64, g *mat.SymDense, mem PlaceLowerMember, plant float64) (float64, int) {
	t.Helper()
	n := len(ts)
	lm, err := newLowerModel(mem, ts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gp.Factorize(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	var chol mat.Cholesky
	if !chol.Factorize(g) {
		t.Fatal("trial not positive definite")
	}
	s := newWindowScan(f)
	s.plant = plant
	worst, visited := 0.0, 0
	seen := make([]bool, n*n)
	v := make([]float64, n)
	s.run(lm, func(a, b int, q float64) {
		visited++
		seen[a*n+b] = true
		lm.conditionalMean(PlaceWindow{First: a, Last: b}, v)
		vv := mat.NewVecDense(n, v)
		var x mat.VecDense
		if err := chol.SolveVecTo(&x, vv); err != nil {
			t.Fatal(err)
		}
		want := mat.Dot(vv, &x)
		worst = math.Max(worst, math.Abs(q-want)/want)
	})
	for a := range n {
		for b := a; b < n; b++ {
			if !seen[a*n+b] {
				t.Fatalf("%s at %g s: window [%d, %d] not visited", mem.Kernel, mem.Lengthscale, a, b)
			}
		}
	}
	return worst, visited
}

// TestEveryWindowQuad checks the every-window scan (EveryWindowQuad's
// recursions over the windows' ends) against v_S' G^-1 v_S recomputed per
// window (Kalman conditional mean, dense Cholesky solve) for every window
// of a 40-point trace, Matérn 1/2, 3/2 and 5/2 at 20 s and 300 s: within
// 1e-9 relative. Negative control: the first derivative response past the
// window's end off by 1e-4 (Matérn 3/2 and 5/2) is caught.
func TestEveryWindowQuad(t *testing.T) {
	ts := lowerTimes(40, 3, 12, 5)
	k := gp.Sum{K1: gp.Matern12{Variance: 1, Lengthscale: 200}, K2: gp.Matern32{Variance: 0.5, Lengthscale: 15}}
	g := gp.Gram(k, ts)
	for i := range ts {
		g.SetSym(i, i, g.At(i, i)+0.05)
	}
	n := len(ts)
	for _, kern := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		for _, l := range []float64{20, 300} {
			mem := PlaceLowerMember{Kernel: kern, Lengthscale: l, Variance: 400}
			rel, visited := windowScanCheck(t, ts, g, mem, 0)
			if visited != n*(n+1)/2 {
				t.Errorf("%s at %g s: %d windows visited, want %d", kern, l, visited, n*(n+1)/2)
			}
			if rel > 1e-9 {
				t.Errorf("%s at %g s: scan off the per-window solve by %.3g relative", kern, l, rel)
			}
			t.Logf("%s at %g s: relative %.2g", kern, l, rel)
			if kern == gp.KernelMatern12 {
				continue
			}
			if bad, _ := windowScanCheck(t, ts, g, mem, 1e-4); bad <= 1e-9 {
				t.Errorf("%s at %g s: a derivative response off by 1e-4 passes the check (%.3g)", kern, l, bad)
			} else {
				t.Logf("%s at %g s: planted error caught at %.2g relative", kern, l, bad)
			}
		}
	}
}
