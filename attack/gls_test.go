package attack

import (
	"math"
	"math/big"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

const bigPrec = 256

// bigWhiten returns L^-1 b for the columns of b, with L L^T = a + jitter I
// factorised in 256-bit arithmetic: the float64 matrix is taken as exact.
func bigWhiten(a mat.Symmetric, jitter float64, b *mat.Dense) [][]*big.Float {
	n := a.SymmetricDim()
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }
	l := make([][]*big.Float, n)
	tmp := new(big.Float).SetPrec(bigPrec)
	for i := range n {
		l[i] = make([]*big.Float, i+1)
		for j := 0; j <= i; j++ {
			s := nf(a.At(i, j))
			if i == j {
				s.Add(s, nf(jitter))
			}
			for k := range j {
				s.Sub(s, tmp.Mul(l[i][k], l[j][k]))
			}
			if i == j {
				l[i][i] = s.Sqrt(s)
			} else {
				l[i][j] = s.Quo(s, l[j][j])
			}
		}
	}
	_, c := b.Dims()
	out := make([][]*big.Float, c)
	for col := range c {
		w := make([]*big.Float, n)
		for i := range n {
			s := nf(b.At(i, col))
			for k := range i {
				s.Sub(s, tmp.Mul(l[i][k], w[k]))
			}
			w[i] = s.Quo(s, l[i][i])
		}
		out[col] = w
	}
	return out
}

// bigGLS solves the GLS normal equations of the whitened data in 256-bit
// arithmetic (p <= 2): the coefficients and their standard errors.
func bigGLS(w [][]*big.Float, p int) (beta, se []float64) {
	dot := func(x, y []*big.Float) *big.Float {
		s := new(big.Float).SetPrec(bigPrec)
		t := new(big.Float).SetPrec(bigPrec)
		for i := range x {
			s.Add(s, t.Mul(x[i], y[i]))
		}
		return s
	}
	f := func(x *big.Float) float64 { v, _ := x.Float64(); return v }
	if p == 1 {
		a, r := dot(w[1], w[1]), dot(w[1], w[0])
		b := new(big.Float).SetPrec(bigPrec).Quo(r, a)
		return []float64{f(b)}, []float64{1 / math.Sqrt(f(a))}
	}
	a11, a12, a22 := dot(w[1], w[1]), dot(w[1], w[2]), dot(w[2], w[2])
	r1, r2 := dot(w[1], w[0]), dot(w[2], w[0])
	t := new(big.Float).SetPrec(bigPrec)
	det := new(big.Float).SetPrec(bigPrec).Mul(a11, a22)
	det.Sub(det, t.Mul(a12, a12))
	b1 := new(big.Float).SetPrec(bigPrec).Mul(a22, r1)
	b1.Sub(b1, t.Mul(a12, r2))
	b1.Quo(b1, det)
	b2 := new(big.Float).SetPrec(bigPrec).Mul(a11, r2)
	b2.Sub(b2, t.Mul(a12, r1))
	b2.Quo(b2, det)
	d := f(det)
	return []float64{f(b1), f(b2)}, []float64{math.Sqrt(f(a22) / d), math.Sqrt(f(a11) / d)}
}

// naiveGLS is the textbook formula the old documentation called dominated
// by rounding: the normal equations H^T M^-1 H beta = H^T M^-1 z with
// M^-1 applied by Cholesky solves.
func naiveGLS(f *gp.Factor, h *mat.Dense, z []float64) []float64 {
	n, p := h.Dims()
	var mh mat.Dense
	var mz mat.VecDense
	f.SolveTo(&mh, h)
	f.SolveVecTo(&mz, mat.NewVecDense(n, z))
	var a mat.Dense
	a.Mul(h.T(), &mh)
	var r, beta mat.VecDense
	r.MulVec(h.T(), &mz)
	if err := beta.SolveVec(&a, &r); err != nil {
		return make([]float64, p)
	}
	return mat.Col(nil, 0, &beta)
}

// The claim of the earlier documentation, checked: GLS mean coefficients
// computed by triangular whitening and QR agree with a 256-bit solution of
// the same (jittered) system to within a tiny fraction of their standard
// error, also when M = Sigma + SigmaG is numerically singular. The naive
// normal equations are reported beside them.
func TestGLSMatchesExtendedPrecision(t *testing.T) {
	n := 120
	ts := make([]float64, n)
	z := make([]float64, n)
	for i := range n {
		ts[i] = 5 * float64(i)
		z[i] = 40*math.Sin(ts[i]/90) + 0.3*ts[i] + 7*math.Cos(1.3*float64(i)) + 500
	}
	cert := gp.Gram(gp.RBF{Variance: 182.67, Lengthscale: 33.89}, ts) // the bundled prior
	white := func(v float64) *mat.SymDense {
		g := mat.NewSymDense(n, nil)
		for i := range n {
			g.SetSym(i, i, v)
		}
		return g
	}
	var prop mat.SymDense
	prop.ScaleSym(2, cert)
	// The same with the white noise of rounding the release to the
	// sanitizer's output grid 2^-10 m, variance g^2/12.
	propGrid := mat.NewSymDense(n, nil)
	propGrid.CopySym(&prop)
	for i := range n {
		propGrid.SetSym(i, i, propGrid.At(i, i)+math.Pow(0x1p-10, 2)/12)
	}
	corr := gp.Gram(gp.Matern52{Variance: 100, Lengthscale: 30}, ts)
	for i := range n {
		corr.SetSym(i, i, corr.At(i, i)*(1+1e-9))
	}
	// tol is the largest error allowed, in standard errors; the singular
	// case is ill-posed (its answer is decided by the jitter and by
	// rounding, whatever the algorithm) and only reported.
	cases := []struct {
		name          string
		sigma, sigmaG mat.Symmetric
		tol           float64
	}{
		{"certificate prior, white noise", cert, white(100), 1e-9},
		{"certificate prior, noise proportional to it (M singular)", cert, &prop, math.Inf(1)},
		{"certificate prior, noise proportional to it plus 1 mm grid rounding", cert, propGrid, 0.02},
		{"certificate prior, smooth correlated noise", cert, corr, 1e-9},
		{"variance 1e6, lengthscale 600 s, white noise", gp.Gram(gp.RBF{Variance: 1e6, Lengthscale: 600}, ts), white(100), 1e-9},
	}
	for _, c := range cases {
		for _, mm := range []MeanModel{MeanConstant, MeanLinear} {
			d, err := newDesign(ts, mm)
			if err != nil {
				t.Fatal(err)
			}
			var m mat.SymDense
			m.AddSym(c.sigma, c.sigmaG)
			g, err := solveGLS(&m, z, d)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			b := mat.NewDense(n, 1+d.p, nil)
			for i := range n {
				b.Set(i, 0, z[i])
				for j := range d.p {
					b.Set(i, 1+j, d.h.At(i, j))
				}
			}
			ref, se := bigGLS(bigWhiten(&m, g.f.Jitter(), b), d.p)
			naive := naiveGLS(g.f, d.h, z)
			worstQR, worstNaive := 0.0, 0.0
			for j := range d.p {
				worstQR = math.Max(worstQR, math.Abs(g.beta[j]-ref[j])/se[j])
				worstNaive = math.Max(worstNaive, math.Abs(naive[j]-ref[j])/se[j])
			}
			t.Logf("%s, %s mean: jitter %.3g (relative %.1g); |error|/SE: QR %.1e, normal equations %.1e; SE %.3g",
				c.name, mm, g.f.Jitter(), g.f.Jitter()/m.At(0, 0), worstQR, worstNaive, se)
			if worstQR > c.tol {
				t.Errorf("%s, %s mean: GLS error %.2g standard errors", c.name, mm, worstQR)
			}
		}
	}
}
