package gp

import (
	"math"
	"testing"
)

// FloatWhitenedTransition agrees with the rigorous WhitenedTransition to a
// few ulps for every order over lags from 1e-9 to 100 lengthscales, and
// KernelPolynomial reproduces the kernel.
func TestFloatWhitenedTransition(t *testing.T) {
	for _, k := range []Kernel{Matern12{2, 30}, Matern32{2, 30}, Matern52{2, 30}, Matern72{2, 30}} {
		m, err := StateSpace(k)
		if err != nil {
			t.Fatal(err)
		}
		d := m.StateDim()
		a, b := make([]float64, d*d), make([]float64, d*d)
		for _, dt := range []float64{0, 3e-8, 0.01, 1, 7.5, 30, 300, 3000} {
			if _, err := m.WhitenedTransition(a, dt, 0); err != nil {
				t.Fatal(err)
			}
			m.FloatWhitenedTransition(b, dt)
			for i := range a {
				if math.Abs(a[i]-b[i]) > 1e-14 {
					t.Errorf("%T dt=%v entry %d: float %v, rigorous %v", k, dt, i, b[i], a[i])
				}
			}
			q := m.KernelPolynomial()
			u := m.Lambda * dt
			v, pw := 0.0, 1.0
			for _, c := range q {
				v += c * pw
				pw *= u
			}
			if got, want := m.Variance*math.Exp(-u)*v, k.Eval(0, dt); math.Abs(got-want) > 1e-14*m.Variance {
				t.Errorf("%T at %v: polynomial gives %v, kernel %v", k, dt, got, want)
			}
		}
	}
}
