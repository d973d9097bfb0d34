package gp

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Gram returns the covariance matrix Sigma_ij = k(ts[i], ts[j]).
func Gram(k Kernel, ts []float64) *mat.SymDense {
	n := len(ts)
	if n == 0 {
		return &mat.SymDense{}
	}
	g := mat.NewSymDense(n, nil)
	gramUpper(g.RawSymmetric(), k, ts)
	return g
}

// gramUpper writes k(ts[i], ts[j]) into the upper triangle of a, straight
// into its storage: SetSym's checks per entry cost as much as a kernel
// evaluation, and fits build a Gram matrix per likelihood evaluation.
func gramUpper(a blas64.Symmetric, k Kernel, ts []float64) {
	for i, ti := range ts {
		row := a.Data[i*a.Stride : i*a.Stride+len(ts)]
		for j := i; j < len(ts); j++ {
			row[j] = k.Eval(ti, ts[j])
		}
	}
}

// Cross returns the cross-covariance matrix k(s[i], t[j]), len(s) x len(t).
func Cross(k Kernel, s, t []float64) *mat.Dense {
	c := mat.NewDense(len(s), len(t), nil)
	for i, si := range s {
		for j, tj := range t {
			c.Set(i, j, k.Eval(si, tj))
		}
	}
	return c
}

// Sub returns the principal submatrix a[idx, idx].
func Sub(a mat.Symmetric, idx []int) *mat.SymDense {
	s := mat.NewSymDense(len(idx), nil)
	for i, p := range idx {
		for j := i; j < len(idx); j++ {
			s.SetSym(i, j, a.At(p, idx[j]))
		}
	}
	return s
}

// Block returns the submatrix a[rows, cols].
func Block(a mat.Matrix, rows, cols []int) *mat.Dense {
	b := mat.NewDense(len(rows), len(cols), nil)
	for i, r := range rows {
		for j, c := range cols {
			b.Set(i, j, a.At(r, c))
		}
	}
	return b
}
