package sanitize

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// rigidLosses is rigidLoss under each noise of gs. It fails the test when
// sigma[S,S] or Ct + G has no Cholesky factorisation.
func rigidLosses(t *testing.T, sigma mat.Symmetric, idx []int, lambda, r float64, gs ...mat.Symmetric) []float64 {
	t.Helper()
	if sigma == nil {
		out := make([]float64, len(gs))
		for gi, g := range gs {
			gss := mat.NewSymDense(len(idx), nil)
			for a, i := range idx {
				for b, j := range idx {
					gss.SetSym(a, b, g.At(i, j))
				}
			}
			out[gi] = lambda / 2 * r * r * quadOnes(t, gss)
		}
		return out
	}
	out, ok := newRigidSet(t, idx, gs...).losses(t, sigma, lambda, r)
	if !ok {
		t.Fatalf("prior on the window is not positive definite")
	}
	return out
}

// rigidSet is the noises' part of rigidLoss for one set of points S, kept
// to evaluate several priors: v' K^-1 v with K = Ct + G, v = [1_S; A 1_S],
// is |L^-1 v|^2 for K's Cholesky factor L in the order [S, U], a blocked
// Cholesky factorisation. As Ct is zero on S, K[S,S] = G[S,S] = Ls Ls', the
// off-diagonal block is B = G[U,S] Ls^-T and the last block factors the
// Schur complement Ct + D, D = G[U,U] - B B', so that
//
//	v' K^-1 v = |zs|^2 + |Lc^-1 (A 1 - B zs)|^2, zs = Ls^-1 1, Lc Lc' = Ct + D.
//
// Ls, B, zs and D depend on the noise and S only (computed once here);
// each prior costs Ct and the factorisation of Ct + D, of the order of U.
type rigidSet struct {
	n      int
	idx, u []int
	noises []rigidNoise
}

// rigidNoise is one noise's |zs|^2, B zs and D (upper triangle, row-major).
type rigidNoise struct {
	zz float64
	bz []float64
	d  []float64
}

func newRigidSet(t *testing.T, idx []int, gs ...mat.Symmetric) *rigidSet {
	t.Helper()
	n := gs[0].SymmetricDim()
	rs := &rigidSet{n: n, idx: idx, u: gp.Complement(idx, n)}
	k, m := len(idx), len(rs.u)
	for _, g := range gs {
		if g.SymmetricDim() != n {
			t.Fatalf("noises of orders %d and %d", n, g.SymmetricDim())
		}
		ls, b := factorBlocks(g, idx, rs.u)
		if ls.Data == nil {
			t.Fatalf("G[S,S] is not positive definite")
		}
		zs := ones(k)
		blas64.Trsv(blas.Trans, ls, blas64.Vector{N: k, Inc: 1, Data: zs})
		nz := rigidNoise{zz: dot(zs, zs), bz: make([]float64, m), d: make([]float64, m*m)}
		if m > 0 {
			blas64.Gemv(blas.NoTrans, 1, b, blas64.Vector{N: k, Inc: 1, Data: zs}, 0, blas64.Vector{N: m, Inc: 1, Data: nz.bz})
			upper(nz.d, g, rs.u)
			blas64.Syrk(blas.NoTrans, -1, b, 1, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: nz.d})
		}
		rs.noises = append(rs.noises, nz)
	}
	return rs
}

// factorBlocks returns the upper Cholesky factor U of a[S,S] (a[S,S] = U'U,
// so U' is the lower factor Ls) and X = a[U,S] U^-1 (X X' = a[U,S]
// a[S,S]^-1 a[S,U]); a zero ls when a[S,S] is not positive definite.
func factorBlocks(a mat.Symmetric, idx, u []int) (ls blas64.Triangular, x blas64.General) {
	k, m := len(idx), len(u)
	sss := make([]float64, k*k)
	for p, i := range idx {
		for q := p; q < k; q++ {
			sss[p*k+q] = a.At(i, idx[q])
		}
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: sss}); !ok {
		return blas64.Triangular{}, blas64.General{}
	}
	ls = blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: k, Stride: k, Data: sss}
	x = blas64.General{Rows: m, Cols: k, Stride: k, Data: make([]float64, m*k)}
	for c, j := range u {
		for p, i := range idx {
			x.Data[c*k+p] = a.At(j, i)
		}
	}
	if m > 0 {
		blas64.Trsm(blas.Right, blas.NoTrans, 1, ls, x)
	}
	return ls, x
}

// losses returns lambda/2 r^2 v' (Ct + G)^-1 v under each noise for the
// prior sigma, and false when sigma[S,S] is not positive definite (a
// member far longer than the window, singular in double precision). It
// fails the test when Ct + D is not positive definite.
func (rs *rigidSet) losses(t *testing.T, sigma mat.Symmetric, lambda, r float64) ([]float64, bool) {
	t.Helper()
	if sigma.SymmetricDim() != rs.n {
		t.Fatalf("prior of order %d for noises of order %d", sigma.SymmetricDim(), rs.n)
	}
	k, m := len(rs.idx), len(rs.u)
	ls, x := factorBlocks(sigma, rs.idx, rs.u)
	if ls.Data == nil {
		return nil, false
	}
	out := make([]float64, len(rs.noises))
	if m == 0 {
		for i, nz := range rs.noises {
			out[i] = lambda / 2 * r * r * nz.zz
		}
		return out, true
	}
	// A 1 = sigma[U,S] sigma[S,S]^-1 1 = X (U'^-1 1); Ct = sigma[U,U] - X X'.
	w := ones(k)
	blas64.Trsv(blas.Trans, ls, blas64.Vector{N: k, Inc: 1, Data: w})
	a1 := make([]float64, m)
	blas64.Gemv(blas.NoTrans, 1, x, blas64.Vector{N: k, Inc: 1, Data: w}, 0, blas64.Vector{N: m, Inc: 1, Data: a1})
	ct := make([]float64, m*m)
	upper(ct, sigma, rs.u)
	blas64.Syrk(blas.NoTrans, -1, x, 1, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: ct})
	kc := make([]float64, m*m)
	for i, nz := range rs.noises {
		for p := range m {
			for q := p; q < m; q++ {
				kc[p*m+q] = ct[p*m+q] + nz.d[p*m+q]
			}
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: kc}); !ok {
			t.Fatalf("Ct + G is not positive definite")
		}
		z := make([]float64, m)
		for p := range m {
			z[p] = a1[p] - nz.bz[p]
		}
		blas64.Trsv(blas.Trans, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: m, Stride: m, Data: kc}, blas64.Vector{N: m, Inc: 1, Data: z})
		out[i] = lambda / 2 * r * r * (nz.zz + dot(z, z))
	}
	return out, true
}

// upper writes a[U,U]'s upper triangle into dst (row-major, order len(u)).
func upper(dst []float64, a mat.Symmetric, u []int) {
	m := len(u)
	for p, i := range u {
		for q := p; q < m; q++ {
			dst[p*m+q] = a.At(i, u[q])
		}
	}
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func dot(a, b []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(a), Inc: 1, Data: a}, blas64.Vector{N: len(b), Inc: 1, Data: b})
}

// rigidLossLiteral is rigidLoss as its definition reads, in the original
// coordinates: A and Ct from gp.Condition, K = Ct + G assembled whole and
// factorised, v = [1_S; A 1_S]. It is TestRigidSetLiteral's reference for
// the blocked rigidSet.
func rigidLossLiteral(t *testing.T, sigma, g mat.Symmetric, idx []int, lambda, r float64) float64 {
	t.Helper()
	cond, err := gp.Condition(sigma, idx)
	if err != nil || cond.Jitter != 0 {
		t.Fatalf("conditioning on %d points: %v (jitter %g)", len(idx), err, cond.Jitter)
	}
	n := g.SymmetricDim()
	k := mat.NewSymDense(n, nil)
	k.CopySym(g)
	v := mat.NewVecDense(n, nil)
	for _, i := range idx {
		v.SetVec(i, 1)
	}
	for a, i := range cond.U {
		for b := a; b < len(cond.U); b++ {
			k.SetSym(i, cond.U[b], k.At(i, cond.U[b])+cond.C.At(a, b))
		}
		v.SetVec(i, mat.Sum(cond.A.RowView(a)))
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("Ct + G is not positive definite")
	}
	var y mat.VecDense
	if err := ch.SolveVecTo(&y, v); err != nil {
		t.Fatal(err)
	}
	return lambda / 2 * r * r * mat.Dot(v, &y)
}

// TestRigidSetLiteral: the blocked evaluation (rigidSet, shared across
// priors) equals the literal one within rounding, for points, windows at
// the start, middle and end, and non-contiguous sets, under two noises
// and two priors; and a singular window is reported, not computed.
func TestRigidSetLiteral(t *testing.T) {
	t.Parallel()
	tr := stayTrace(30, 12)
	ts := secondsOf(t, tr.Points)
	n := len(ts)
	var gs []mat.Symmetric
	for _, k := range []gp.Kernel{gp.Matern32{Variance: 400, Lengthscale: 40}, gp.Matern12{Variance: 900, Lengthscale: 300}} {
		g := gp.Gram(k, ts)
		for i := range n {
			g.SetSym(i, i, g.At(i, i)+1)
		}
		gs = append(gs, g)
	}
	sets := [][]int{{0}, {n / 2}, seq(0, 20), seq(n/3, n/3+25), seq(n-15, n), {2, 9, 30, n - 3}}
	for _, s := range sets {
		rs := newRigidSet(t, s, gs...)
		for _, k := range []gp.Kernel{gp.Matern52{Variance: 2500, Lengthscale: 120}, gp.RBF{Variance: 2500, Lengthscale: 5}} {
			sigma := gp.Gram(k, ts)
			got, ok := rs.losses(t, sigma, 2, 100)
			if !ok {
				t.Fatalf("%T on %d points: not positive definite", k, len(s))
			}
			for i, g := range gs {
				if want := rigidLossLiteral(t, sigma, g, s, 2, 100); math.Abs(got[i]/want-1) > 1e-9 {
					t.Errorf("%T, %d points from %d, noise %d: blocked %.15g, literal %.15g", k, len(s), s[0], i, got[i], want)
				}
			}
		}
	}
	if _, ok := newRigidSet(t, seq(0, n), gs...).losses(t, gp.Gram(gp.RBF{Variance: 2500, Lengthscale: 1e5}, ts), 2, 100); ok {
		t.Error("an RBF prior at 100,000 s on every point factorised")
	}
}
