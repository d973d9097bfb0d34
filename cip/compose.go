package cip

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// BlockDiag returns blkdiag(gs...), the noise covariance of independent
// releases stacked in order.
func BlockDiag(gs ...mat.Symmetric) *mat.SymDense {
	n := 0
	for _, g := range gs {
		n += g.SymmetricDim()
	}
	if n == 0 {
		return &mat.SymDense{}
	}
	out := mat.NewSymDense(n, nil)
	off := 0
	for _, g := range gs {
		m := g.SymmetricDim()
		for i := range m {
			for j := i; j < m; j++ {
				out.SetSym(off+i, off+j, g.At(i, j))
			}
		}
		off += m
	}
	return out
}

// ComposeLoss returns the exact joint loss factor of several releases of
// one person's traces (Corollary 3.4.1, computed exactly by (E1) instead
// of bounded): the prior covariance is the kernel over all releases'
// timestamps concatenated in order, the noise is block diagonal, and s
// indexes the concatenated vector.
func ComposeLoss(k gp.Kernel, times [][]float64, noises []mat.Symmetric, s Secret) (float64, error) {
	if len(times) != len(noises) {
		return 0, param.Invalid("noises", len(noises), fmt.Sprintf("must be one noise covariance per time vector (%d)", len(times)))
	}
	var all []float64
	for i, ts := range times {
		if noises[i].SymmetricDim() != len(ts) {
			return 0, param.Invalid(fmt.Sprintf("noises[%d]", i), noises[i].SymmetricDim(), fmt.Sprintf("the noise covariance must have the dimension of release %d's %d times", i, len(ts)))
		}
		all = append(all, ts...)
	}
	return LossFactor(gp.Gram(k, all), BlockDiag(noises...), s)
}
