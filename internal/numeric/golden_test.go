package numeric

import (
	"math"
	"testing"
)

func TestMaximizeUnimodal(t *testing.T) {
	tol := Tol{Abs: 1e-13, Rel: 1e-13, MaxIter: 200}
	// Interior maximum of a concave function.
	x, v := MaximizeUnimodal(func(x float64) float64 { return -(x - 0.3) * (x - 0.3) }, 0, 1, tol)
	if math.Abs(x-0.3) > 1e-6 || v < -1e-12 {
		t.Errorf("interior: x %v, value %v", x, v)
	}
	// Maximum at an end point is found exactly.
	if x, v := MaximizeUnimodal(func(x float64) float64 { return x }, 0, 0.25, tol); x != 0.25 || v != 0.25 {
		t.Errorf("end point: x %v, value %v", x, v)
	}
	if x, v := MaximizeUnimodal(func(x float64) float64 { return -x }, 2, 1, tol); x != 2 || v != -2 {
		t.Errorf("empty interval: x %v, value %v", x, v)
	}
	// 1 − e^{−ε}/... : 1 − f(α) − α for the ε = 1 pure-DP trade-off peaks
	// at α = 1/(1+e) with value (e−1)/(e+1).
	e := math.E
	f := func(a float64) float64 { return 1 - math.Max(0, math.Max(1-e*a, (1-a)/e)) - a }
	x, v = MaximizeUnimodal(f, 0, 1, tol)
	if math.Abs(v-(e-1)/(e+1)) > 1e-12 || math.Abs(x-1/(1+e)) > 1e-6 {
		t.Errorf("pure DP: x %v, value %v", x, v)
	}
}
