package attack

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// noiseLaw is the public noise of one dimension of a release, as the
// adversary knows it: either an explicit covariance matrix or a
// stationary kernel at the release's times, plus white noise of variance
// white on the diagonal (the output grid's nugget, a certificate's
// jitters).
type noiseLaw struct {
	ts    []float64
	dense mat.Symmetric // explicit covariance, or nil
	// terms are the kernel's components (a gp.Sum flattened).
	terms []gp.Kernel
	white float64
}

// kernelTerms flattens sums of kernels into their components.
func kernelTerms(k gp.Kernel) []gp.Kernel {
	if s, ok := k.(gp.Sum); ok {
		return append(kernelTerms(s.K1), kernelTerms(s.K2)...)
	}
	return []gp.Kernel{k}
}

func (g *noiseLaw) n() int { return len(g.ts) }

// at returns the covariance of points i and j.
func (g *noiseLaw) at(i, j int) float64 {
	v := 0.0
	if g.dense != nil {
		v = g.dense.At(i, j)
	} else {
		for _, k := range g.terms {
			v += k.Eval(g.ts[i], g.ts[j])
		}
	}
	if i == j {
		v += g.white
	}
	return v
}

// diag returns the noise variance of every point.
func (g *noiseLaw) diag() []float64 {
	out := make([]float64, g.n())
	for i := range out {
		out[i] = g.at(i, i)
	}
	return out
}

// block returns the covariance of the points idx (increasing).
func (g *noiseLaw) block(idx []int) *mat.SymDense {
	n := len(idx)
	out := mat.NewSymDense(n, nil)
	if g.dense == nil {
		ts := make([]float64, n)
		for a, i := range idx {
			ts[a] = g.ts[i]
		}
		for _, k := range g.terms {
			kg := gp.Gram(k, ts)
			out.AddSym(out, kg)
		}
		for a := range n {
			out.SetSym(a, a, out.At(a, a)+g.white)
		}
		return out
	}
	for a, i := range idx {
		for b := a; b < n; b++ {
			out.SetSym(a, b, g.at(i, idx[b]))
		}
	}
	return out
}

// stateSpace reports whether every component has a state-space form.
func (g *noiseLaw) stateSpace() bool {
	if g.dense != nil {
		return false
	}
	for _, k := range g.terms {
		if _, err := gp.StateSpace(k); err != nil {
			return false
		}
	}
	return true
}

// dofSample is the number of points over which dof estimates the noise's
// degrees of freedom when it has neither a state-space form nor at most
// this many points.
const dofSample = 4000

// dof returns the noise's effective degrees of freedom (tr G)^2 / |G|_F^2
// (noiseDOF) and whether it is exact. For Matérn components it is exact in
// O(n) time (matérnFrobenius); for an explicit matrix or up to dofSample
// points, by summing every entry; otherwise |G|_F^2 is estimated from the
// entries between dofSample evenly spaced points (exact diagonal, the
// off-diagonal sum scaled by the number of pairs).
func (g *noiseLaw) dof() (float64, bool) {
	n := g.n()
	tr := 0.0
	diag := g.diag()
	for _, v := range diag {
		tr += v
	}
	if g.dense == nil && g.stateSpace() {
		fro, err := g.maternFrobenius()
		if err == nil {
			return tr * tr / fro, true
		}
	}
	if g.dense != nil || n <= dofSample {
		fro := 0.0
		for i := range n {
			for j := range n {
				v := g.at(i, j)
				fro += v * v
			}
		}
		return tr * tr / fro, true
	}
	idx := make([]int, dofSample)
	for a := range idx {
		idx[a] = a * (n - 1) / (dofSample - 1)
	}
	off := 0.0
	for a, i := range idx {
		for b := a + 1; b < len(idx); b++ {
			v := g.at(i, idx[b])
			off += 2 * v * v
		}
	}
	m := float64(dofSample)
	fro := off * float64(n) * float64(n-1) / (m * (m - 1))
	for _, v := range diag {
		fro += v * v
	}
	return tr * tr / fro, false
}

// maternFrobenius returns |G|_F^2 = sum over i, j of G_ij^2 for Matérn
// components at sorted times, plus white noise, in O(n) per pair of
// components. A Matérn kernel is v e^(-lambda tau) q(lambda tau) (q a
// polynomial, gp.StateModel.KernelPolynomial), so the product of two is
// e^(-L tau) times a polynomial in tau, L the sum of their rates, and
// sum over i < j of (t_j - t_i)^m e^(-L (t_j - t_i)) follows from a
// forward recursion on the moments S_m(j) = sum over i < j of
// s_ij^m e^(-s_ij), s = L tau, by the binomial expansion of
// s_ij = delta + s_i(j-1). Every term is positive, so nothing cancels.
func (g *noiseLaw) maternFrobenius() (float64, error) {
	n := g.n()
	for i := 1; i < n; i++ {
		if g.ts[i] < g.ts[i-1] {
			return 0, fmt.Errorf("attack: times not sorted")
		}
	}
	type comp struct {
		v, lam float64
		q      []float64
	}
	var cs []comp
	g0 := 0.0
	for _, k := range g.terms {
		sm, err := gp.StateSpace(k)
		if err != nil {
			return 0, err
		}
		cs = append(cs, comp{sm.MarginalVariance(), sm.Lambda, sm.KernelPolynomial()})
		g0 += sm.MarginalVariance()
	}
	off := 0.0 // sum over i < j of G_c(ij)^2
	for a := range cs {
		for b := a; b < len(cs); b++ {
			ca, cb := cs[a], cs[b]
			lam := ca.lam + cb.lam
			ra, rb := ca.lam/lam, cb.lam/lam
			// The product's polynomial in s = lam tau.
			poly := make([]float64, len(ca.q)+len(cb.q)-1)
			for i, x := range ca.q {
				for j, y := range cb.q {
					poly[i+j] += x * math.Pow(ra, float64(i)) * y * math.Pow(rb, float64(j))
				}
			}
			w := ca.v * cb.v
			if a != b {
				w *= 2
			}
			off += w * momentSum(g.ts, lam, poly)
		}
	}
	fro := float64(n)*g0*g0 + 2*off
	// White noise adds w on the diagonal: 2 w tr(G_c) + n w^2.
	fro += 2*g.white*float64(n)*g0 + float64(n)*g.white*g.white
	return fro, nil
}

// momentSum returns sum over i < j of poly(s_ij) e^(-s_ij), s_ij =
// lam (t_j - t_i), for sorted ts.
func momentSum(ts []float64, lam float64, poly []float64) float64 {
	deg := len(poly) - 1
	s := make([]float64, deg+1)    // S_m(j)
	next := make([]float64, deg+1) // S_m(j+1)
	pw := make([]float64, deg+1)
	binom := make([][]float64, deg+1)
	for m := range binom {
		binom[m] = make([]float64, m+1)
		binom[m][0] = 1
		for k := 1; k <= m; k++ {
			binom[m][k] = binom[m][k-1] * float64(m-k+1) / float64(k)
		}
	}
	total := 0.0
	for j := 1; j < len(ts); j++ {
		delta := lam * (ts[j] - ts[j-1])
		e := math.Exp(-delta)
		if e == 0 {
			// Every older pair is at least as far: all terms underflow.
			clear(s)
			continue
		}
		pw[0] = 1
		for m := 1; m <= deg; m++ {
			pw[m] = pw[m-1] * delta
		}
		for m := 0; m <= deg; m++ {
			// The new pair (j-1, j) has s = delta; the older ones move by
			// delta.
			acc := pw[m]
			for k := 0; k <= m; k++ {
				acc += binom[m][k] * pw[m-k] * s[k]
			}
			next[m] = e * acc
		}
		s, next = next, s
		for m, c := range poly {
			total += c * s[m]
		}
	}
	return total
}
