package geoind

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/noise"
)

func TestGridCorrection(t *testing.T) {
	for _, eps := range []float64{1e-4, 1e-3, 0.0230, 1} {
		for _, u := range []float64{0.01, 1, 10} {
			c := GridCorrection(eps, u)
			// Recompute the bound from its definition.
			R := -(numeric.LambertWm1(-math.Pow(2, -64)/math.E) + 1) / eps
			delta := (R + 1e7) * math.Pow(2, -46)
			eta := 4 * delta / u * (1 + delta/u) * math.Exp(math.Sqrt2*eps*(u+delta))
			want := math.Log((1+eta)/(1-eta)) / u
			if eta >= 0.5 {
				if !math.IsInf(c, 1) {
					t.Errorf("ε=%g u=%g: η=%g but correction %g", eps, u, eta, c)
				}
				continue
			}
			if math.Abs(c-want) > 1e-9*want {
				t.Errorf("GridCorrection(%g, %g) = %g, want %g", eps, u, c, want)
			}
			es, err := SamplingEpsilon(eps, u)
			if err != nil {
				// Refused only when the correction is a sizeable part of ε.
				if c < eps/4 {
					t.Errorf("ε=%g u=%g: refused with correction %g: %v", eps, u, c, err)
				}
				continue
			}
			if e := EffectiveEpsilon(es, u); e > eps {
				t.Errorf("ε=%g u=%g: effective ε' = %.17g > ε", eps, u, e)
			}
		}
	}
	// The tail radius: (1+εR)e^{-εR} = 2^-64.
	for _, eps := range []float64{0.01, 1} {
		R := TailRadius(eps)
		if tail := (1 + eps*R) * math.Exp(-eps*R); math.Abs(tail/math.Pow(2, -64)-1) > 1e-9 {
			t.Errorf("tail at R_max(%g) = %g", eps, tail)
		}
	}
}

func TestGridAndRegion(t *testing.T) {
	src := noise.Seeded(30)
	reg := &Rect{Min: Vec{-95, -95}, Max: Vec{95, 95}}
	m := PlanarLaplace{Grid: 10, Region: reg}
	hitBorder := 0
	for range 2000 {
		z, err := m.Release(Vec{80, 3}, 0.01, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{z.X, z.Y} {
			if v != math.Round(v/10)*10 {
				t.Fatalf("release %v is off the 10 m grid", z)
			}
			if v < -90 || v > 90 {
				t.Fatalf("release %v outside the region's grid points", z)
			}
			if v == 90 || v == -90 {
				hitBorder++
			}
		}
	}
	if hitBorder == 0 {
		t.Error("no release was remapped to the border")
	}
	// A far secret is remapped to the nearest in-region grid point.
	z, err := PlanarLaplace{Grid: 0.25, Region: &Rect{Min: Vec{0, 0}, Max: Vec{1, 1}}}.Release(Vec{1e6, -1e6}, 1, src)
	if err != nil {
		t.Fatal(err)
	}
	if z != (Vec{1, 0}) {
		t.Errorf("far secret remapped to %v, want (1, 0)", z)
	}
	for _, bad := range []PlanarLaplace{
		{}, // continuous output is refused
		{Region: &Rect{Min: Vec{0, 0}, Max: Vec{1, 1}}},
		{Grid: math.NaN()},
		{Grid: 1, Region: &Rect{Min: Vec{1, 0}, Max: Vec{0, 1}}},
		{Grid: 10, Region: &Rect{Min: Vec{1, 1}, Max: Vec{9, 9}}},
	} {
		if _, err := bad.Release(Vec{}, 1, src); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestSamplingEpsilonRemembered checks SamplingEpsilon's one-entry memo:
// after each call, a call that changes either input gets the fresh
// computation (a memo keyed by ε alone, or by the grid alone, returns the
// previous answer here and fails), a repeated call the same value, and a
// refused grid is refused again rather than remembered.
func TestSamplingEpsilonRemembered(t *testing.T) {
	calls := [][2]float64{{0.01, 1}, {0.01, 1}, {0.02, 1}, {0.02, 3}, {0.01, 3}, {0.01, 1}, {1, 20}, {0.01, 1}}
	for _, c := range calls {
		want, werr := samplingEpsilon(c[0], c[1])
		got, err := SamplingEpsilon(c[0], c[1])
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("SamplingEpsilon(%g, %g) = %v, %v after the previous call; computed afresh %v, %v", c[0], c[1], got, err, want, werr)
		}
	}
	if _, err := SamplingEpsilon(1, 20); err == nil {
		t.Error("a grid too coarse for ε was accepted the second time")
	}
}
