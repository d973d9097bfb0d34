package bdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
)

// The generators here make synthetic data for experiments. Their randomness
// is not privacy noise, so they use simple samplers over a noise.Source.

func uniform01(src noise.Source) float64 { return (float64(src.Uint64()>>11) + 0.5) / (1 << 53) }

// stdNormal is a Box–Muller draw.
func stdNormal(src noise.Source) float64 {
	return math.Sqrt(-2*math.Log(uniform01(src))) * math.Cos(2*math.Pi*uniform01(src))
}

// GaussianBlocks draws `blocks` independent vectors from N(mean, cov), one
// block after another, as the thesis's Gaussian datasets are built from
// independent groups of m correlated records (Sec. 6.5.1; SyntheticIQ is
// 10,000 parent–child pairs with mean 100, σ = 15 and ρ = 0.45). cov is
// factorised once by Cholesky.
func GaussianBlocks(blocks int, mean []float64, cov mat.Symmetric, src noise.Source) ([]float64, error) {
	m := cov.SymmetricDim()
	if m == 0 {
		return nil, fmt.Errorf("bdp: empty covariance matrix")
	}
	if len(mean) != m {
		return nil, fmt.Errorf("bdp: mean has %d entries for a %d×%d covariance", len(mean), m, m)
	}
	if blocks < 1 {
		return nil, fmt.Errorf("bdp: need at least one block, got %d", blocks)
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("bdp: covariance is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	out := make([]float64, 0, blocks*m)
	z := make([]float64, m)
	for range blocks {
		for i := range z {
			z[i] = stdNormal(src)
		}
		for i := range m {
			v := mean[i]
			for k := 0; k <= i; k++ {
				v += l.At(i, k) * z[k]
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// Equicorrelated returns σ²·((1−ρ)I + ρ11ᵀ), the m×m covariance with
// constant variance σ² and every correlation ρ.
func Equicorrelated(m int, sigma2, rho float64) *mat.SymDense {
	c := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			v := rho * sigma2
			if i == j {
				v = sigma2
			}
			c.SetSym(i, j, v)
		}
	}
	return c
}

// MarkovChain draws n steps of the chain with transition matrix p, starting
// from its stationary distribution (hypothesis H2 of Theorem 6.20).
func MarkovChain(p [][]float64, n int, src noise.Source) ([]int, error) {
	w, err := Stationary(p)
	if err != nil {
		return nil, err
	}
	if err := param.AtLeastInt("n", n, 1); err != nil {
		return nil, err
	}
	draw := func(dist []float64) int {
		u := uniform01(src)
		for k, q := range dist {
			if u < q {
				return k
			}
			u -= q
		}
		return len(dist) - 1
	}
	out := make([]int, n)
	out[0] = draw(w)
	for t := 1; t < n; t++ {
		out[t] = draw(p[out[t-1]])
	}
	return out, nil
}

// TransitionCounts estimates a transition matrix from a state sequence by
// counting and row-normalising, as the thesis fits its Markov datasets. It
// also returns the number of zero cells: any zero breaks H1.
func TransitionCounts(seq []int, states int) (p [][]float64, zeros int, err error) {
	c := make([][]float64, states)
	for i := range c {
		c[i] = make([]float64, states)
	}
	for t := 1; t < len(seq); t++ {
		a, b := seq[t-1], seq[t]
		if a < 0 || a >= states || b < 0 || b >= states {
			return nil, 0, fmt.Errorf("bdp: state %d or %d at step %d outside [0, %d)", a, b, t, states)
		}
		c[a][b]++
	}
	for i, row := range c {
		s := 0.0
		for _, v := range row {
			s += v
		}
		if s == 0 {
			return nil, 0, fmt.Errorf("bdp: state %d is never left; its transition row is unknown", i)
		}
		for j := range row {
			row[j] /= s
			if row[j] == 0 {
				zeros++
			}
		}
	}
	return c, zeros, nil
}
