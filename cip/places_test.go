package cip

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// onesQuad returns 1' R^-1 1 for the unit-variance kernel's Gram matrix at
// ts, by Cholesky (ok false if it is numerically singular).
func onesQuad(k gp.Kernel, ts []float64) (float64, bool) {
	var ch mat.Cholesky
	if !ch.Factorize(gp.Gram(k, ts)) {
		return 0, false
	}
	one := mat.NewVecDense(len(ts), nil)
	for i := range ts {
		one.SetVec(i, 1)
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, one); err != nil {
		return 0, false
	}
	return mat.Dot(one, &x), true
}

// PlaceNorm bounds 1' R[S,S]^-1 1 for every sampling of an interval, and is
// its limit as the sampling densifies (the closed forms are the least RKHS
// norm of an extension of the constant). A wrong constant (a dropped
// boundary term, the interior's lam T/S(0) off by 2) fails one side.
func TestPlaceNorm(t *testing.T) {
	t.Parallel()
	for _, kernel := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		for _, x := range []float64{0.1, 0.5, 1, 3} {
			bound, ok := PlaceNorm(kernel, x)
			if !ok {
				t.Fatalf("%s: no bound", kernel)
			}
			k, _ := gp.NewKernel(kernel, 1, 1, 0)
			best := 0.0
			for _, n := range []int{2, 3, 7, 20, 60, 200} {
				// Even and uneven samplings of [0, x].
				for _, warp := range []float64{1, 2} {
					ts := make([]float64, n)
					for i := range ts {
						ts[i] = x * math.Pow(float64(i)/float64(n-1), warp)
					}
					v, ok := onesQuad(k, ts)
					if !ok {
						continue
					}
					if v > bound*(1+1e-9) {
						t.Errorf("%s x=%g n=%d warp %g: 1'R^-1 1 = %v above PlaceNorm %v", kernel, x, n, warp, v, bound)
					}
					best = math.Max(best, v)
				}
			}
			if best < bound*0.97 {
				t.Errorf("%s x=%g: densest sampling gives %v, PlaceNorm %v: the bound is not the limit", kernel, x, best, bound)
			}
		}
	}
	if _, ok := PlaceNorm(gp.KernelRBF, 1); ok {
		t.Error("RBF has a place bound")
	}
	// The RBF's quadratic form grows past any Matérn bound as the window
	// is sampled more densely: why it has none.
	k, _ := gp.NewKernel(gp.KernelRBF, 1, 1, 0)
	v, _ := onesQuad(k, []float64{0, 0.25, 0.5, 0.75, 1})
	v2, _ := onesQuad(k, []float64{0, 1.0 / 6, 2.0 / 6, 3.0 / 6, 4.0 / 6, 5.0 / 6, 1})
	if !(v2 > v && v2 > 2) {
		t.Errorf("RBF 1'R^-1 1: %v at 5 points, %v at 7", v, v2)
	}
	f, unc := PlaceFactor(prior.FamilySet{Kernels: []prior.Family{{Kernel: gp.KernelMatern32, LengthscaleMin: 1, LengthscaleMax: 2}, {Kernel: gp.KernelRBF, LengthscaleMin: 1, LengthscaleMax: 2}}})
	if math.Abs(f-(1+math.Sqrt(3)/4)) > 1e-9 || len(unc) != 1 {
		t.Errorf("PlaceFactor %v, uncovered %v", f, unc)
	}
}

// RouteFactor is 1' K^-1 1 of the route kernel's Gram matrix, checked
// densely on irregular times spanning years.
func TestRouteFactor(t *testing.T) {
	ts := []float64{0, 1, 5, 5, 3600, 86400, 3e7, 6e7}
	q := RouteFactor(ts)
	// Dense on the distinct times (a repeated time is one point).
	d := []float64{0, 1, 5, 3600, 86400, 3e7, 6e7}
	v, ok := onesQuad(RouteKernel(), d)
	if !ok || q < v*(1-1e-6) || q > v*(1+1e-6) || q < 1.0299 {
		t.Errorf("RouteFactor %v, dense %v (ok %v)", q, v, ok)
	}
}
