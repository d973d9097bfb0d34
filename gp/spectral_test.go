package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// cosTransform returns (1/pi) * integral over [0, inf) of S(w) cos(w tau)
// dw by Gauss-Legendre quadrature after w = c u/(1-u), which must equal the
// kernel at lag tau if S is its spectral density in this package's
// normalisation.
func cosTransform(k Spectral, tau, c float64) float64 {
	f := func(u float64) float64 {
		w := c * u / (1 - u)
		dw := c / ((1 - u) * (1 - u))
		return k.SpectralDensity(w) * math.Cos(w*tau) * dw
	}
	// Split [0, 1) so that the quadrature resolves the peak and the tail.
	s := 0.0
	for _, iv := range [][2]float64{{0, 0.5}, {0.5, 0.9}, {0.9, 0.99}, {0.99, 0.9999}, {0.9999, 1 - 1e-9}} {
		s += quad.Fixed(f, iv[0], iv[1], 2000, nil, 0)
	}
	return s / math.Pi
}

// Each spectral density is the Fourier transform of its kernel: checked at
// lag 0 (the variance) and at two other lags, and its logarithm agrees.
func TestSpectralDensities(t *testing.T) {
	for _, k := range []Spectral{
		RBF{Variance: 2, Lengthscale: 3},
		Matern12{Variance: 1.5, Lengthscale: 2},
		Matern32{Variance: 1, Lengthscale: 4},
		Matern52{Variance: 0.7, Lengthscale: 1.5},
		Matern72{Variance: 3, Lengthscale: 5},
	} {
		l := k.Params()[1].Value
		tol := 1e-6
		if _, ok := k.(Matern12); ok {
			tol = 1e-4 // its w^-2 tail is slow
		}
		for _, tau := range []float64{0, 0.7 * l, 2 * l} {
			got, want := cosTransform(k, tau, 1/l), k.Eval(0, tau)
			if math.Abs(got-want) > tol*k.Eval(0, 0) {
				t.Errorf("%T at lag %g: transform %v, kernel %v", k, tau, got, want)
			}
		}
		for _, w := range []float64{0, 0.3 / l, 5 / l} {
			if a, b := math.Log(k.SpectralDensity(w)), k.LogSpectralDensity(w); math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(a)) {
				t.Errorf("%T at %g: log density %v, log of density %v", k, w, b, a)
			}
		}
	}
}

// The density ratio s_l / s_l' (l <= l') is at least l/l' at every
// frequency, the fact cip.FamilyMinEigen rests on.
func TestDensityRatioBound(t *testing.T) {
	t.Parallel()
	for _, mk := range []func(l float64) Spectral{
		func(l float64) Spectral { return RBF{1, l} },
		func(l float64) Spectral { return Matern12{1, l} },
		func(l float64) Spectral { return Matern32{1, l} },
		func(l float64) Spectral { return Matern52{1, l} },
		func(l float64) Spectral { return Matern72{1, l} },
	} {
		for _, p := range [][2]float64{{1, 1.001}, {2, 7}, {8.6, 35}} {
			a, b := mk(p[0]), mk(p[1])
			for w := 0.0; w < 50; w += 0.001 {
				if r := math.Exp(a.LogSpectralDensity(w) - b.LogSpectralDensity(w)); r < p[0]/p[1]*(1-1e-12) {
					t.Fatalf("%T lengthscales %v at %v: ratio %v < %v", a, p, w, r, p[0]/p[1])
				}
			}
		}
	}
}

func TestNewKernel(t *testing.T) {
	for _, name := range KernelNames {
		k, err := NewKernel(name, 2, 3, 10)
		if err != nil || KernelName(k) != name {
			t.Errorf("%s: %v, %v", name, k, err)
		}
	}
	if _, err := NewKernel("cosine", 1, 1, 0); err == nil {
		t.Error("unknown kernel accepted")
	}
	if _, err := NewKernel("rbf", 1, -1, 0); err == nil {
		t.Error("negative lengthscale accepted")
	}
}
