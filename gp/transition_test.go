package gp

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// seriesProcessNoise is Q(dt) = Qc ∫_0^dt a(s) a(s)^T ds, a(s) = exp(F s) L,
// from the Taylor series a(s) = Σ_j s^j F^j L / j! integrated term by term,
// in 256-bit arithmetic: an independent reference for Transition's Q (no
// matrix exponential, no quadrature, no difference of covariances).
func seriesProcessNoise(m *StateModel, dt float64, terms int) [][]float64 {
	const prec = 256
	d := m.StateDim()
	f := m.F()
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	// c[j][i] = (F^j L)_i / j!
	c := make([][]*big.Float, terms)
	v := make([]*big.Float, d)
	for i := range v {
		v[i] = nf(0)
	}
	v[d-1] = nf(1)
	fact := nf(1)
	for j := range terms {
		if j > 0 {
			fact.Mul(fact, nf(float64(j)))
			nv := make([]*big.Float, d)
			for r := range d {
				nv[r] = nf(0)
				for k := range d {
					nv[r].Add(nv[r], new(big.Float).SetPrec(prec).Mul(nf(f.At(r, k)), v[k]))
				}
			}
			v = nv
		}
		c[j] = make([]*big.Float, d)
		for i := range d {
			c[j][i] = new(big.Float).SetPrec(prec).Quo(v[i], fact)
		}
	}
	// ∫_0^dt s^(j+l) ds = dt^(j+l+1)/(j+l+1)
	pw := make([]*big.Float, 2*terms+1)
	pw[0] = nf(1)
	for k := 1; k < len(pw); k++ {
		pw[k] = new(big.Float).SetPrec(prec).Mul(pw[k-1], nf(dt))
	}
	q := make([][]float64, d)
	for i := range d {
		q[i] = make([]float64, d)
		for k := range d {
			sum := nf(0)
			for j := range terms {
				for l := range terms {
					t := new(big.Float).SetPrec(prec).Mul(c[j][i], c[l][k])
					t.Mul(t, pw[j+l+1])
					t.Quo(t, nf(float64(j+l+1)))
					sum.Add(sum, t)
				}
			}
			sum.Mul(sum, nf(m.Qc()))
			q[i][k], _ = sum.Float64()
		}
	}
	return q
}

// Transition's process noise Q agrees with the 256-bit series at every
// entry, relative to sqrt(Q_ii Q_kk), from steps of a millionth of the
// lengthscale to several lengthscales, for every order, on both sides of
// the switch from the integral to the difference. Its negative
// control: the difference Pinf - A Pinf A^T, which Transition used at
// every step before, misses the series by more than the tolerance at the
// short steps (it cancels to nothing there).
func TestTransitionProcessNoise(t *testing.T) {
	t.Parallel()
	const tol = 1e-11
	worstOld := 0.0
	for _, k := range maternKernels(2.5, 30) {
		m, err := StateSpace(k)
		if err != nil {
			t.Fatal(err)
		}
		d := m.StateDim()
		steps := []float64{1e-6, 1e-4, 1e-2, 0.3, 1, 3.99, 4.01, 6}
		if testing.Short() {
			steps = []float64{1e-4, 0.3, 3.99, 4.01} // both sides of the switch, and a short step
		}
		for _, u := range steps {
			dt := u / m.Lambda
			ref := seriesProcessNoise(m, dt, 50+15*int(math.Ceil(u)))
			a, q := m.Transition(dt)
			pinf := m.Pinf()
			var ap, apa mat.Dense
			ap.Mul(a, pinf)
			apa.Mul(&ap, a.T())
			worst := 0.0
			for i := range d {
				for c := range d {
					scale := math.Sqrt(ref[i][i] * ref[c][c])
					worst = math.Max(worst, math.Abs(q.At(i, c)-ref[i][c])/scale)
					old := pinf.At(i, c) - (apa.At(i, c)+apa.At(c, i))/2
					worstOld = math.Max(worstOld, math.Abs(old-ref[i][c])/scale)
				}
			}
			if worst > tol || math.IsNaN(worst) {
				t.Errorf("%T lambda·dt=%g: Q differs from the 256-bit series by %.3g relative (tolerance %g)", k, u, worst, tol)
			}
		}
	}
	t.Logf("the old difference form's worst relative error: %.3g", worstOld)
	if worstOld <= tol {
		t.Errorf("negative control: Pinf - A Pinf A^T is within %g of the series at every step; the test cannot tell the cancellation", tol)
	}
}
