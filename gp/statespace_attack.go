package gp

import (
	"math"
	"sync"
)

// FloatWhitenedTransition writes into a (row-major, (p+1)^2 entries) the
// whitened transition Ã(dt) of WhitenedTransition, evaluated in plain
// float64 arithmetic from the same matrices M_k (Ã(u) = e^-u Σ u^k M_k,
// u = lambda·dt), without a bound on its rounding: a few ulps per entry,
// at a few tens of nanoseconds a call. It is for Kalman filtering and
// smoothing (package attack), where such errors are harmless; exact
// samplers use WhitenedTransition. dt must be finite and >= 0; dt = 0
// gives the identity.
func (m *StateModel) FloatWhitenedTransition(a []float64, dt float64) {
	mk := floatMk(m.Order)
	p := m.Order
	d := p + 1
	u := m.Lambda * dt
	if u == 0 {
		for i := range a[:d*d] {
			a[i] = 0
		}
		for i := range d {
			a[i*d+i] = 1
		}
		return
	}
	e := math.Exp(-u)
	for i := range d * d {
		v := mk[p][i]
		for k := p - 1; k >= 0; k-- {
			v = v*u + mk[k][i]
		}
		a[i] = v * e
	}
}

// KernelPolynomial returns the coefficients q_k of the Matérn polynomial:
// the kernel at lag tau is Variance·e^(-u)·Σ_k q_k u^k with
// u = Lambda·|tau| (1; 1, 1; 1, 1, 1/3; 1, 1, 2/5, 1/15).
func (m *StateModel) KernelPolynomial() []float64 {
	q := maternPoly(m.Order)
	out := make([]float64, len(q))
	for k, r := range q {
		out[k], _ = r.Float64()
	}
	return out
}

var (
	mkfOnce [maxStateOrder + 1]sync.Once
	mkfTab  [maxStateOrder + 1][][]float64
)

// floatMk returns the matrices M_k of order p rounded to float64 (the
// midpoints of WhitenedTransition's balls).
func floatMk(p int) [][]float64 {
	mkfOnce[p].Do(func() {
		c := orderData(p)
		mkfTab[p] = make([][]float64, len(c.mkb))
		for k, row := range c.mkb {
			for _, b := range row {
				mkfTab[p][k] = append(mkfTab[p][k], b.x+b.y)
			}
		}
	})
	return mkfTab[p]
}
