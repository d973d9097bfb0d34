package gp

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// DefaultMaxJitter is the largest diagonal jitter Factorize adds, relative
// to the mean diagonal of the matrix. Beyond it the matrix is treated as
// not positive definite: a larger perturbation would change the privacy
// accounting by more than rounding does.
const DefaultMaxJitter = 1e-6

// ErrNotPositiveDefinite is returned (wrapped) when a matrix cannot be
// factorised even with the largest permitted jitter.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// Factor is a Cholesky factorisation of a symmetric positive definite
// matrix, possibly of the matrix plus Jitter on its diagonal.
//
// It keeps the upper factor U (a + Jitter I = U^T U) and solves with it
// through LAPACK directly: mat.Cholesky estimates the condition number
// after every factorisation and mat.TriDense after every triangular solve,
// O(n^2) work each that cost a third of a likelihood search in attack and
// that Factor's callers never read (the jitter accounts for
// near-singularity). The arithmetic is that of mat.Cholesky (the same
// Potrf, Potrs and Trsm calls on the same storage), so the results are
// the same to the last bit (TestFactorSameAsMatCholesky).
type Factor struct {
	u      blas64.Triangular
	jitter float64
	n      int

	cholOnce sync.Once
	chol     mat.Cholesky
}

// Jitter returns the absolute value added to the diagonal before the
// factorisation succeeded; zero means the matrix was factorised as given.
func (f *Factor) Jitter() float64 { return f.jitter }

// Size returns the order of the factorised matrix.
func (f *Factor) Size() int { return f.n }

// U returns the upper Cholesky factor, a + Jitter I = U^T U. It is the
// factor's own storage: callers read it and must not write to it.
func (f *Factor) U() blas64.Triangular { return f.u }

// Cholesky returns the factorisation (of a + Jitter I) as a mat.Cholesky,
// built on first use from U. Its condition estimate is mat.Cholesky's
// from the factor (SetFromU), an upper bound on the one a fresh
// mat.Cholesky.Factorize states.
func (f *Factor) Cholesky() *mat.Cholesky {
	f.cholOnce.Do(func() {
		f.chol.SetFromU(mat.NewTriDense(f.n, mat.Upper, f.u.Data))
	})
	return &f.chol
}

// Factorize computes the Cholesky factorisation of a, adding the smallest
// jitter from the ladder 0, 1e-15, 1e-14, ..., maxRel (all relative to the
// mean diagonal of a; the tenfold steps of numeric.JitterLadder, capped at
// maxRel) with which it succeeds. maxRel <= 0 means
// DefaultMaxJitter. The jitter used is reported by Factor.Jitter.
func Factorize(a mat.Symmetric, maxRel float64) (*Factor, error) {
	n := a.SymmetricDim()
	f := &Factor{n: n}
	f.u = blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: make([]float64, n*n)}
	sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: f.u.Data}
	j, err := jitterLadder(n, a.At, maxRel, func(j float64) bool {
		copyUpper(f.u.Data, n, a)
		if j != 0 {
			for i := range n {
				f.u.Data[i*n+i] += j
			}
		}
		_, ok := lapack64.Potrf(sym)
		return ok
	})
	if err != nil {
		return nil, err
	}
	f.jitter = j
	return f, nil
}

// copyUpper writes the upper triangle of a into the row-major n x n dst.
func copyUpper(dst []float64, n int, a mat.Symmetric) {
	if rs, ok := a.(mat.RawSymmetricer); ok {
		if s := rs.RawSymmetric(); s.Uplo == blas.Upper {
			for i := range n {
				copy(dst[i*n+i:i*n+n], s.Data[i*s.Stride+i:i*s.Stride+n])
			}
			return
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			dst[i*n+j] = a.At(i, j)
		}
	}
}

// jitterLadder is Factorize's search, shared with logLik's factorisation
// on raw storage: it checks the diagonal at(i, i) of the n x n matrix, then
// calls factor with the absolute jitters 0, then 1e-15, 1e-14, ..., maxRel
// times the mean diagonal (maxRel <= 0 means DefaultMaxJitter), and
// returns the first jitter with which factor succeeds.
func jitterLadder(n int, at func(i, j int) float64, maxRel float64, factor func(jitter float64) bool) (float64, error) {
	if maxRel <= 0 {
		maxRel = DefaultMaxJitter
	}
	if n == 0 {
		return 0, fmt.Errorf("gp: factorize: empty matrix")
	}
	scale := 0.0
	for i := range n {
		d := at(i, i)
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, fmt.Errorf("gp: factorize: diagonal entry %d is %v", i, d)
		}
		scale += d
	}
	scale /= float64(n)
	if !(scale > 0) {
		return 0, fmt.Errorf("gp: factorize: mean diagonal %v: %w", scale, ErrNotPositiveDefinite)
	}
	if factor(0) {
		return 0, nil
	}
	// The ladder runs in units of the mean diagonal.
	ladder := numeric.JitterLadder{Floor: 1e-15, Factor: 10, Cap: maxRel}
	for rel, ok := ladder.Next(0); ok; rel, ok = ladder.Next(rel) {
		if j := rel * scale; factor(j) {
			return j, nil
		}
	}
	return 0, fmt.Errorf("gp: factorize: no jitter up to %g x mean diagonal suffices: %w", maxRel, ErrNotPositiveDefinite)
}

// ignoreCondition drops mat.Condition errors: the solve has been carried
// out, and near-singularity is already accounted for by the jitter.
func ignoreCondition(err error) error {
	var c mat.Condition
	if errors.As(err, &c) {
		return nil
	}
	return err
}

// SolveTo solves (a + Jitter I) x = b into dst.
func (f *Factor) SolveTo(dst *mat.Dense, b mat.Matrix) error {
	f.into(dst, b)
	lapack64.Potrs(f.u, dst.RawMatrix())
	return nil
}

// SolveVecTo solves (a + Jitter I) x = b into dst.
func (f *Factor) SolveVecTo(dst *mat.VecDense, b mat.Vector) error {
	if r, c := b.Dims(); r != f.n || c != 1 {
		panic(mat.ErrShape)
	}
	switch {
	case dst.IsEmpty():
		dst.CloneFromVec(b)
	case dst.Len() != f.n:
		panic(mat.ErrShape)
	case dst != b:
		dst.CopyVec(b)
	}
	v := dst.RawVector()
	lapack64.Potrs(f.u, blas64.General{Rows: f.n, Cols: 1, Stride: v.Inc, Data: v.Data})
	return nil
}

// HalfSolveTo writes L^-1 b into dst, where a + Jitter I = L L^T. Then
// b^T a^-1 b = (L^-1 b)^T (L^-1 b), which is how quadratic forms are
// evaluated without cancellation. L = U^T, and Trsm with U transposed
// does the forward substitution in the order it does with a copy of L.
func (f *Factor) HalfSolveTo(dst *mat.Dense, b mat.Matrix) error {
	f.into(dst, b)
	blas64.Trsm(blas.Left, blas.Trans, 1, f.u, dst.RawMatrix())
	return nil
}

// into copies b (n rows) into dst, which the solves then overwrite; a
// non-empty dst (a view, say) is written in place, as mat's solves do.
func (f *Factor) into(dst *mat.Dense, b mat.Matrix) {
	r, c := b.Dims()
	if r != f.n {
		panic(mat.ErrShape)
	}
	switch {
	case dst.IsEmpty():
		dst.CloneFrom(b)
	case dst != b:
		if dr, dc := dst.Dims(); dr != r || dc != c {
			panic(mat.ErrShape)
		}
		dst.Copy(b)
	}
}

// LogDet returns log det(a + Jitter I), summed as mat.Cholesky sums it.
func (f *Factor) LogDet() float64 {
	var det float64
	for i := range f.n {
		det += 2 * math.Log(f.u.Data[i*f.u.Stride+i])
	}
	return det
}

// Quad returns b^T (a + Jitter I)^-1 b.
func (f *Factor) Quad(b mat.Vector) (float64, error) {
	var w mat.Dense
	if err := f.HalfSolveTo(&w, b); err != nil {
		return 0, err
	}
	q := 0.0
	for i := range f.n {
		v := w.At(i, 0)
		q += v * v
	}
	return q, nil
}

// EigenFactor is an eigendecomposition a = V diag(values) V^T of a
// symmetric positive semidefinite matrix, for callers that want
// pseudo-inverse semantics instead of jitter.
type EigenFactor struct {
	Values  []float64
	Vectors *mat.Dense
	// Cutoff is the threshold below which eigenvalues are treated as zero
	// by PseudoSolveVecTo: n * machine epsilon * the largest eigenvalue.
	Cutoff float64
}

// FactorizeEigen eigendecomposes a. Eigenvalues are ascending.
func FactorizeEigen(a mat.Symmetric) (*EigenFactor, error) {
	var e mat.EigenSym
	if !e.Factorize(a, true) {
		return nil, fmt.Errorf("gp: eigendecomposition did not converge")
	}
	ef := &EigenFactor{Values: e.Values(nil), Vectors: &mat.Dense{}}
	e.VectorsTo(ef.Vectors)
	n := len(ef.Values)
	ef.Cutoff = float64(n) * 0x1p-52 * math.Abs(ef.Values[n-1])
	return ef, nil
}

// PseudoSolveVecTo writes the minimum-norm least-squares solution of
// a x = b, ignoring eigenvalues below Cutoff, into dst.
func (e *EigenFactor) PseudoSolveVecTo(dst *mat.VecDense, b mat.Vector) {
	n := len(e.Values)
	var c mat.VecDense
	c.MulVec(e.Vectors.T(), b)
	for i := range n {
		if e.Values[i] > e.Cutoff {
			c.SetVec(i, c.AtVec(i)/e.Values[i])
		} else {
			c.SetVec(i, 0)
		}
	}
	dst.MulVec(e.Vectors, &c)
}
