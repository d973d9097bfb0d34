package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// spectralCutoff is the relative eigenvalue below which a direction of
// Sigma is dropped from the reduced problem. Dropping is exact bookkeeping,
// not an approximation of the constraints: the variance E = Sigma - L L^T
// that the dropped directions carry is subtracted from every secret's
// right-hand side (e3Block.corr), so a design in the kept directions meets
// the (E1) targets under the full Sigma. What is lost is only the option of
// placing noise in directions of relative variance below the cutoff.
const spectralCutoff = 1e-13

// e3Spectrum is Sigma = V Lambda V^T truncated to its r leading directions,
// with L = V Lambda^1/2 (n x r) so that L L^T is the kept part of Sigma.
type e3Spectrum struct {
	n, r    int
	lam     []float64  // Lambda, descending
	l       *mat.Dense // n x r
	trSigma float64
	trLam   float64
}

func newSpectrum(sigma mat.Symmetric) (*e3Spectrum, error) {
	n := sigma.SymmetricDim()
	var e mat.EigenSym
	if !e.Factorize(sigma, true) {
		return nil, fmt.Errorf("eigendecomposition of Sigma: %w", ErrNoConvergence)
	}
	vals := e.Values(nil)
	var v mat.Dense
	e.VectorsTo(&v)
	top := vals[n-1]
	if !(top > 0) {
		return nil, param.Invalid("sigma", "", "has no positive eigenvalue")
	}
	// Rounding leaves eigenvalues of order n eps top of either sign; more
	// negative than that, Sigma is not a covariance.
	if vals[0] < -1e-8*top {
		return nil, param.Invalid("sigma", "", fmt.Sprintf("is not positive semidefinite (eigenvalue %g)", vals[0]))
	}
	sp := &e3Spectrum{n: n}
	for i := range n {
		sp.trSigma += sigma.At(i, i)
	}
	// Eigenvalues come ascending; keep the leading ones, largest first.
	var keep []int
	for j := n - 1; j >= 0; j-- {
		if vals[j] > spectralCutoff*top {
			keep = append(keep, j)
		}
	}
	sp.r = len(keep)
	sp.lam = make([]float64, sp.r)
	sp.l = mat.NewDense(n, sp.r, nil)
	for c, j := range keep {
		sp.lam[c] = vals[j]
		sp.trLam += vals[j]
		s := math.Sqrt(vals[j])
		for i := range n {
			sp.l.Set(i, c, v.At(i, j)*s)
		}
	}
	return sp, nil
}

// e3Block is one secret's constraint in the reduced problem:
//
//	L_S Q L_S^T ⪯ B(t) - corr,   B(t) = Sigma_SS (Sigma_SS + I/t)^-1 Sigma_SS,
//
// which is (E1) L_S <= t written on the explained covariance
// R = Sigma M^-1 Sigma (cip-math.md section 4, the design note's R form).
// B(t) = U diag(sig^2 t / (1 + t sig)) U^T from the eigendecomposition
// Sigma_SS = U diag(sig) U^T: no inverse is formed. corr = Sigma_SS - L_S L_S^T
// is the variance of the directions dropped from the spectrum.
type e3Block struct {
	idx  []int
	kloc float64
	sig  []float64
	u    *mat.Dense
	corr *mat.SymDense
	ls   *mat.Dense // rows idx of the spectrum's L, k_j x r
}

func newBlock(sigma mat.Symmetric, sp *e3Spectrum, s Secret) (*e3Block, error) {
	k := len(s.Indices)
	ss := gp.Sub(sigma, s.Indices)
	var ch mat.Cholesky
	if !ch.Factorize(ss) {
		return nil, fmt.Errorf("secret %v: Sigma_SS: %w", s.Indices, gp.ErrNotPositiveDefinite)
	}
	b := &e3Block{idx: s.Indices, kloc: float64(s.NumLocations())}
	if k == 1 {
		b.sig = []float64{ss.At(0, 0)}
		b.u = mat.NewDense(1, 1, []float64{1})
	} else {
		var e mat.EigenSym
		if !e.Factorize(ss, true) {
			return nil, fmt.Errorf("secret %v: eigendecomposition of Sigma_SS: %w", s.Indices, ErrNoConvergence)
		}
		b.sig = e.Values(nil)
		for a := range b.sig {
			b.sig[a] = math.Max(b.sig[a], 0)
		}
		b.u = &mat.Dense{}
		e.VectorsTo(b.u)
	}
	if sp != nil {
		b.ls = gp.Block(sp.l, s.Indices, allIndices(sp.r))
		var ll mat.SymDense
		ll.SymOuterK(1, b.ls)
		b.corr = axpySym(ss, -1, &ll)
	}
	return b, nil
}

// rhs returns B(t) - corr and, if deriv, dB/dt and d^2B/dt^2.
func (b *e3Block) rhs(t float64, deriv bool) (bt, d1, d2 *mat.SymDense) {
	k := len(b.sig)
	f0 := make([]float64, k)
	f1 := make([]float64, k)
	f2 := make([]float64, k)
	for a, s := range b.sig {
		den := 1 + t*s
		f0[a] = s * s * t / den
		f1[a] = s * s / (den * den)
		f2[a] = -2 * s * s * s / (den * den * den)
	}
	bt = congruenceDiag(b.u, f0)
	if b.corr != nil {
		bt = axpySym(bt, -1, b.corr)
	}
	if deriv {
		d1 = congruenceDiag(b.u, f1)
		d2 = congruenceDiag(b.u, f2)
	}
	return bt, d1, d2
}

// congruenceDiag returns U diag(d) U^T.
func congruenceDiag(u *mat.Dense, d []float64) *mat.SymDense {
	k, c := u.Dims()
	out := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			s := 0.0
			for a := range c {
				s += u.At(i, a) * d[a] * u.At(j, a)
			}
			out.SetSym(i, j, s)
		}
	}
	return out
}

// e3Bound is a dual lower bound on the least total noise of (E3) for the
// full Sigma (not the truncated one), from multipliers Y_j ⪰ 0 of the
// secret constraints and a primal estimate Q (r x r, the
// explained-covariance variable of the reduced problem), as a function of
// the targets.
//
// It evaluates the Lagrange dual of (E3) in the form
//
//	min tr M - tr Sigma  s.t.  M ⪰ Sigma,  Sigma_S: M^-1 Sigma_:S ⪯ B_S,
//
// whose dual function, for multipliers Y_S ⪰ 0 and 0 ⪯ Z ≺ I, is
//
//	g = 2 ||Phi (I - Z)^1/2||_* - sum <Y_S, B_S> + <Z, Sigma> - tr Sigma,
//
// Phi the stacked Y_S^1/2 Sigma_S: (minimising tr(A M) + tr(M^-1 K) over
// M ≻ 0 gives 2 tr (A^1/2 K A^1/2)^1/2). Restricting Z to the kept
// directions V and compressing Phi to them can only lower the nuclear
// norm, so with I - Z = V Theta V^T and Phi V = F Lambda^1/2 (F the
// stacked Y_S^1/2 L_S),
//
//	g >= 2 ||F Lambda^1/2 Theta^1/2||_* - e + tr Lambda - <Theta, Lambda> - tr Sigma
//
// for any 0 ⪯ Theta ⪯ I, e = sum <Y_S, B_S>. At the optimum
// Theta = Lambda^-1/2 Q W Q Lambda^-1/2 (W = F^T F); computed from an
// inexact Q it can leave [0, 1] in directions of tiny variance, so its
// eigenvalues are clipped, which keeps the bound valid and costs only
// O(lambda) in those directions. The scale of Y is then chosen optimally
// (g is 2 sqrt(gamma) N - gamma e + const in Y -> gamma Y), giving
// N^2 / e + tr Lambda - <Theta, Lambda> - tr Sigma.
type e3Bound struct {
	nuc   float64 // N
	konst float64 // tr Lambda - <Theta, Lambda> - tr Sigma
	ys    []*mat.SymDense
}

// value returns the bound for per-secret targets ts.
func (lb *e3Bound) value(blocks []*e3Block, ts []float64) float64 {
	e := 0.0
	for j, b := range blocks {
		// The full problem's right-hand side, without the truncation
		// correction.
		bt, _, _ := b.rhs(ts[j], false)
		if b.corr != nil {
			bt = axpySym(bt, 1, b.corr)
		}
		k := len(b.idx)
		for a := range k {
			for c := range k {
				e += lb.ys[j].At(a, c) * bt.At(a, c)
			}
		}
	}
	if !(e > 0) {
		return 0
	}
	return lb.nuc*lb.nuc/e + lb.konst
}

func (sp *e3Spectrum) boundParts(blocks []*e3Block, ys []*mat.SymDense, q mat.Symmetric) (*e3Bound, error) {
	r := sp.r
	rows := 0
	for _, b := range blocks {
		rows += len(b.idx)
	}
	f := mat.NewDense(rows, r, nil)
	at := 0
	for j, b := range blocks {
		k := len(b.idx)
		half, err := sqrtPSDSmall(ys[j])
		if err != nil {
			return nil, err
		}
		var fy mat.Dense
		fy.Mul(half, b.ls)
		f.Slice(at, at+k, 0, r).(*mat.Dense).Copy(&fy)
		at += k
	}
	// C = F Q Lambda^-1/2, Theta = C^T C.
	var c mat.Dense
	c.Mul(f, q)
	for a := range r {
		s := 1 / math.Sqrt(sp.lam[a])
		for i := range rows {
			c.Set(i, a, c.At(i, a)*s)
		}
	}
	var theta mat.SymDense
	theta.SymOuterK(1, c.T())
	var eth mat.EigenSym
	if !eth.Factorize(&theta, true) {
		return nil, fmt.Errorf("eigendecomposition in the dual bound: %w", ErrNoConvergence)
	}
	tv := eth.Values(nil)
	var tu mat.Dense
	eth.VectorsTo(&tu)
	sq := make([]float64, r)
	thLam := 0.0
	for a := range r {
		x := math.Min(math.Max(tv[a], 0), 1)
		sq[a] = math.Sqrt(x)
		// <Theta', Lambda> = sum_a x_a u_a^T Lambda u_a.
		ul := 0.0
		for i := range r {
			ul += tu.At(i, a) * tu.At(i, a) * sp.lam[i]
		}
		thLam += x * ul
	}
	// F Lambda^1/2 U diag(sqrt x); the trailing U^T of Theta'^1/2 does
	// not change the nuclear norm.
	var p mat.Dense
	p.Mul(f, scaleRows(&tu, sp.lam))
	for a := range r {
		for i := range rows {
			p.Set(i, a, p.At(i, a)*sq[a])
		}
	}
	nuc, err := nuclearNorm(&p)
	if err != nil {
		return nil, err
	}
	return &e3Bound{nuc: nuc, konst: sp.trLam - thLam - sp.trSigma, ys: ys}, nil
}

// scaleRows returns diag(sqrt(lam)) U.
func scaleRows(u *mat.Dense, lam []float64) *mat.Dense {
	r, c := u.Dims()
	out := mat.NewDense(r, c, nil)
	for i := range r {
		s := math.Sqrt(lam[i])
		for j := range c {
			out.Set(i, j, u.At(i, j)*s)
		}
	}
	return out
}

// nuclearNorm returns the sum of the singular values of a. An SVD, not
// the eigenvalues of a^T a: those carry absolute errors of order
// eps ||a||^2, which after the square root overstate small singular values
// by up to sqrt(eps) ||a|| each, and the bound built on this must not be
// overstated.
func nuclearNorm(a *mat.Dense) (float64, error) {
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDNone) {
		return 0, fmt.Errorf("SVD in the nuclear norm: %w", ErrNoConvergence)
	}
	s := 0.0
	for _, v := range svd.Values(nil) {
		s += v
	}
	return s, nil
}

// sqrtPSDSmall returns the symmetric square root of a small PSD matrix,
// negative rounding eigenvalues clamped to zero.
func sqrtPSDSmall(a mat.Symmetric) (*mat.Dense, error) {
	k := a.SymmetricDim()
	if k == 1 {
		return mat.NewDense(1, 1, []float64{math.Sqrt(math.Max(a.At(0, 0), 0))}), nil
	}
	var e mat.EigenSym
	if !e.Factorize(a, true) {
		return nil, fmt.Errorf("eigendecomposition: %w", ErrNoConvergence)
	}
	v := e.Values(nil)
	var u mat.Dense
	e.VectorsTo(&u)
	for i := range v {
		v[i] = math.Sqrt(math.Max(v[i], 0))
	}
	s := congruenceDiag(&u, v)
	return mat.DenseCopyOf(s), nil
}

// outerRows returns B B^T for an n x k matrix as a SymDense, with the
// symmetric rank-k BLAS update so that the result is PSD up to rounding.
func outerRows(b *mat.Dense) *mat.SymDense {
	n, k := b.Dims()
	out := mat.NewSymDense(n, nil)
	if k == 0 {
		return out
	}
	blas64.Syrk(blas.NoTrans, 1, b.RawMatrix(), 0, out.RawSymmetric())
	return out
}

// axpySym returns x + a y for symmetric x and y.
func axpySym(x mat.Symmetric, a float64, y mat.Symmetric) *mat.SymDense {
	n := x.SymmetricDim()
	out := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			out.SetSym(i, j, x.At(i, j)+a*y.At(i, j))
		}
	}
	return out
}

// recoverMultipliers returns multipliers Y_j of the secret constraints
// from a primal solution Q (r x r) alone, by least squares on the
// optimality conditions of the reduced problem: stationarity
// Q^-1 Lambda Q^-1 = sum_j L_j^T Y_j L_j + Z with complementarity
// Z (I - Q) = 0, i.e.
//
//	min_Y || (sum_j L_j^T Y_j L_j - Q^-1 Lambda Q^-1) (I - Q) ||_F,
//
// then each Y_j projected onto the PSD cone. The barrier's own estimates
// (S_j^-1 / tau) are computed from slacks that cancel as the iterate
// approaches the boundary, which loses them precision exactly when the
// solution is accurate; these are computed from Q, which converges
// cleanly. Any Y_j ⪰ 0 gives a valid bound, so this only affects its
// tightness.
func (sp *e3Spectrum) recoverMultipliers(blocks []*e3Block, q *mat.SymDense) ([]*mat.SymDense, error) {
	r := sp.r
	var cq mat.Cholesky
	if !cq.Factorize(q) {
		return nil, fmt.Errorf("(E3) solution: %w", gp.ErrNotPositiveDefinite)
	}
	// G = Q^-1 Lambda Q^-1, H = (I - Q)^2.
	var qi mat.Dense
	if err := cq.SolveTo(&qi, eye(r)); err != nil && !isCondition(err) {
		return nil, err
	}
	var g, iq, h, gh mat.Dense
	g.Mul(scaleCols(&qi, sp.lam), &qi)
	iq.Scale(-1, q)
	for i := range r {
		iq.Set(i, i, iq.At(i, i)+1)
	}
	h.Mul(&iq, &iq)
	gh.Mul(&g, &h)
	// Stacked secret rows U (P x r) and the Gram matrices.
	var rowsIdx [][2]int // (block, row)
	for j, b := range blocks {
		for a := range b.idx {
			rowsIdx = append(rowsIdx, [2]int{j, a})
		}
	}
	np := len(rowsIdx)
	u := mat.NewDense(np, r, nil)
	for i, ja := range rowsIdx {
		u.SetRow(i, blocks[ja[0]].ls.RawRowView(ja[1]))
	}
	var am, bm, cm, t mat.Dense
	am.Mul(u, u.T())
	t.Mul(u, &h)
	bm.Mul(&t, u.T())
	t.Reset()
	t.Mul(u, &gh)
	cm.Mul(&t, u.T())
	// Unknowns: the upper-triangle entries of each Y_j, on global rows.
	type unk struct{ j, a, b, ga, gb int }
	var unks []unk
	off := 0
	for j, b := range blocks {
		k := len(b.idx)
		for a := range k {
			for c := a; c < k; c++ {
				unks = append(unks, unk{j, a, c, off + a, off + c})
			}
		}
		off += k
	}
	nu := len(unks)
	nm := mat.NewSymDense(nu, nil)
	rhs := mat.NewVecDense(nu, nil)
	eta := func(x unk) float64 {
		if x.a == x.b {
			return 0.5
		}
		return 1
	}
	for x, ux := range unks {
		a, b := ux.ga, ux.gb
		rhs.SetVec(x, eta(ux)*(cm.At(b, a)+cm.At(a, b)))
		for y := x; y < nu; y++ {
			c, d := unks[y].ga, unks[y].gb
			v := am.At(b, c)*bm.At(d, a) + am.At(b, d)*bm.At(c, a) + am.At(a, c)*bm.At(d, b) + am.At(a, d)*bm.At(c, b)
			nm.SetSym(x, y, eta(ux)*eta(unks[y])*v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(nm) {
		mx := 0.0
		for i := range nu {
			mx = math.Max(mx, nm.At(i, i))
		}
		for i := range nu {
			nm.SetSym(i, i, nm.At(i, i)+1e-13*mx)
		}
		if !ch.Factorize(nm) {
			return nil, fmt.Errorf("multiplier least squares: %w", gp.ErrNotPositiveDefinite)
		}
	}
	var y mat.VecDense
	if err := ch.SolveVecTo(&y, rhs); err != nil && !isCondition(err) {
		return nil, err
	}
	ys := make([]*mat.SymDense, len(blocks))
	for j, b := range blocks {
		ys[j] = mat.NewSymDense(len(b.idx), nil)
	}
	for x, ux := range unks {
		ys[ux.j].SetSym(ux.a, ux.b, y.AtVec(x))
	}
	for j := range ys {
		ys[j] = projectPSD(ys[j])
	}
	return ys, nil
}

// projectPSD clips the negative eigenvalues of a small symmetric matrix.
func projectPSD(a *mat.SymDense) *mat.SymDense {
	if a.SymmetricDim() == 1 {
		return mat.NewSymDense(1, []float64{math.Max(a.At(0, 0), 0)})
	}
	var e mat.EigenSym
	if !e.Factorize(a, true) {
		return mat.NewSymDense(a.SymmetricDim(), nil)
	}
	v := e.Values(nil)
	var u mat.Dense
	e.VectorsTo(&u)
	for i := range v {
		v[i] = math.Max(v[i], 0)
	}
	return congruenceDiag(&u, v)
}

// scaleCols returns A diag(d).
func scaleCols(a *mat.Dense, d []float64) *mat.Dense {
	r, c := a.Dims()
	out := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			out.Set(i, j, a.At(i, j)*d[j])
		}
	}
	return out
}

func eye(n int) *mat.Dense {
	d := mat.NewDense(n, n, nil)
	for i := range n {
		d.Set(i, i, 1)
	}
	return d
}
