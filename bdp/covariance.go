package bdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/disjoint"
	"github.com/tracepriv/tracepriv/param"
)

// GaussianFromCovariance reads the Gaussian model's parameters from a
// covariance matrix (Def 6.9): it checks that Σ is positive definite (by
// Cholesky), that its diagonal is constant within a relative tol, finds the
// independent blocks as connected components of |Σ_ij| > tol·σ², and
// returns m = the largest block and ρ = max_{i≠j} |Σ_ij|/σ². The returned
// model may still fail ρ(m−2) < 1; its methods say so.
func GaussianFromCovariance(sigma mat.Symmetric, tol float64) (Gaussian, error) {
	n := sigma.SymmetricDim()
	if n < 1 {
		return Gaussian{}, fmt.Errorf("bdp: empty covariance matrix")
	}
	if math.IsNaN(tol) || tol < 0 {
		return Gaussian{}, param.Invalid("tol", tol, "must be non-negative")
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(sigma); !ok {
		return Gaussian{}, fmt.Errorf("bdp: covariance matrix is not positive definite")
	}
	s2 := sigma.At(0, 0)
	for i := 1; i < n; i++ {
		if d := sigma.At(i, i); math.Abs(d-s2) > tol*s2 {
			return Gaussian{}, fmt.Errorf("bdp: the Gaussian bound needs a constant diagonal: Σ[%d][%d] = %v but Σ[0][0] = %v", i, i, d, s2)
		}
	}
	// Union-find over the correlation graph.
	sets := disjoint.New(n)
	rho := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			c := math.Abs(sigma.At(i, j)) / s2
			if c > tol {
				sets.Union(i, j)
				rho = math.Max(rho, c)
			}
		}
	}
	size := map[int]int{}
	m := 0
	for i := range n {
		r := sets.Find(i)
		size[r]++
		m = max(m, size[r])
	}
	return Gaussian{M: m, Rho: rho}, nil
}
