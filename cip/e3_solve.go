package cip

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// solveE3 solves (E3) in target mode (ts != nil) or budget mode, certifies
// the design and attaches the dual lower bound.
func solveE3(sigma mat.Symmetric, secrets []Secret, ts []float64, budget float64, o SetOptions) (*SetDesign, error) {
	sp, err := newSpectrum(sigma)
	if err != nil {
		return nil, err
	}
	blocks := make([]*e3Block, len(secrets))
	var union []int
	seen := make(map[int]bool)
	for j, s := range secrets {
		if blocks[j], err = newBlock(sigma, sp, s); err != nil {
			return nil, err
		}
		for _, i := range s.Indices {
			if !seen[i] {
				seen[i] = true
				union = append(union, i)
			}
		}
	}
	sub, err := newSubspace(sp, union)
	if err != nil {
		return nil, err
	}
	// Column generation: solve in the subspace, then add the directions
	// the optimality conditions ask for, until the dual bound closes the
	// gap or the subspace stops growing.
	var res *e3Result
	iters := 0
	maxIter := o.MaxIter
	for round := 0; ; round++ {
		o.MaxIter = maxIter - iters
		r, err := sub.solve(blocks, ts, budget, o)
		if err != nil {
			return nil, err
		}
		iters += r.iters
		if dbgRounds {
			_, kk := sub.s.Dims()
			fmt.Printf("round %d k %d value %.10g lower %.10g iters %d\n", round, kk, r.value, r.lower, r.iters)
		}
		// Every round's bound is a bound on the full problem, and every
		// round's design is feasible for it: keep the best of each.
		lower := r.lower
		if res != nil {
			lower = math.Max(lower, res.lower)
		}
		if res == nil || r.value < res.value {
			res = r
		}
		res.lower = lower
		if res.value-res.lower <= o.RelTol*math.Abs(res.value) || round == maxRounds || r.stopped {
			break
		}
		next, err := sub.expand(r)
		if err != nil {
			return nil, err
		}
		if next == nil {
			break
		}
		sub = next
	}
	d := &SetDesign{Method: "e3-barrier", Iterations: iters, LowerBound: math.Max(res.lower, 0)}
	g := res.noise
	if ts != nil {
		d.Targets = ts
		d.Predicted = res.value
		if err := d.certifyTarget(sigma, secrets, g); err != nil {
			return nil, err
		}
		return d, nil
	}
	d.Predicted = res.value
	if err := d.certifyBudget(sigma, secrets, g, budget); err != nil {
		return nil, err
	}
	return d, nil
}

// e3Subspace is the set of directions (columns of S, orthonormal in the
// coordinates of the spectrum) in which the reduced problem may place
// noise: Q = I - S (I - Q_s) S^T. With p secret coordinates and p < r the
// optimal noise has rank at most p (the KKT conditions give
// Q^-1 Lambda Q^-1 = L_U^T Y L_U + Z with Z (I - Q) = 0), and S starts as
// the span of the secrets' rows L_U^T.
type e3Subspace struct {
	sp *e3Spectrum
	s  *mat.Dense // r x k, S^T Lambda S diagonal
	p  int        // number of secret coordinates
}

func newSubspace(sp *e3Spectrum, union []int) (*e3Subspace, error) {
	r := sp.r
	// Small problems are solved in the full space (the Newton system has
	// r(r+1)/2 unknowns); column generation pays when the secrets reach
	// few of many directions.
	if r <= fullSpaceMax || 3*len(union) >= r {
		s := mat.NewDense(r, r, nil)
		for i := range r {
			s.Set(i, i, 1)
		}
		return &e3Subspace{sp: sp, s: s}, nil
	}
	lu := rowsOf(sp.l, union) // p x r
	var svd mat.SVD
	if !svd.Factorize(lu, mat.SVDThinV) {
		return nil, fmt.Errorf("cip: SVD of the secrets' directions did not converge")
	}
	vals := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	k := 0
	for _, x := range vals {
		if x > 1e-12*vals[0] {
			k++
		}
	}
	return newSubspaceFrom(sp, v.Slice(0, r, 0, k).(*mat.Dense))
}

// newSubspaceFrom rotates an orthonormal basis so that S^T Lambda S is
// diagonal.
func newSubspaceFrom(sp *e3Spectrum, s *mat.Dense) (*e3Subspace, error) {
	_, k := s.Dims()
	ls := mat.NewSymDense(k, nil)
	for a := range k {
		for b := a; b < k; b++ {
			x := 0.0
			for i := range sp.r {
				x += s.At(i, a) * sp.lam[i] * s.At(i, b)
			}
			ls.SetSym(a, b, x)
		}
	}
	var e mat.EigenSym
	if !e.Factorize(ls, true) {
		return nil, fmt.Errorf("cip: eigendecomposition of the noise subspace did not converge")
	}
	var u, rot mat.Dense
	e.VectorsTo(&u)
	rot.Mul(s, &u)
	return &e3Subspace{sp: sp, s: &rot}, nil
}

func rowsOf(a *mat.Dense, idx []int) *mat.Dense {
	_, c := a.Dims()
	out := mat.NewDense(len(idx), c, nil)
	for i, p := range idx {
		out.SetRow(i, a.RawRowView(p))
	}
	return out
}

// fullSpaceMax is the spectral rank up to which (E3) is solved in the
// full space rather than by column generation.
const fullSpaceMax = 0

// maxRounds bounds the column-generation rounds of solveE3.
const maxRounds = 30

type e3Result struct {
	qs    *mat.SymDense // the reduced solution Q_s
	noise *mat.SymDense
	value float64 // least budget (target) or level (budget) of the reduced problem
	lower float64 // dual lower bound on the same quantity for the full problem
	iters int
	// stopped is set when the Newton-step limit ended the solve.
	stopped bool
}

// solve runs the barrier method in the subspace and converts the answer
// to a noise covariance in the original coordinates.
func (sub *e3Subspace) solve(blocks []*e3Block, ts []float64, budget float64, o SetOptions) (*e3Result, error) {
	sp := sub.sp
	_, k := sub.s.Dims()
	lam := make([]float64, k)
	trLs := 0.0
	for a := range k {
		for i := range sp.r {
			lam[a] += sub.s.At(i, a) * sub.s.At(i, a) * sp.lam[i]
		}
		trLs += lam[a]
	}
	ls := make([]*mat.Dense, len(blocks))
	rhsBlocks := make([]*e3Block, len(blocks))
	for j, b := range blocks {
		var x mat.Dense
		x.Mul(b.ls, sub.s)
		ls[j] = &x
		// Directions of L_S outside the subspace are explained fully
		// (Q = I there): move their variance to the right-hand side.
		nb := *b
		var full, in mat.SymDense
		full.SymOuterK(1, b.ls)
		in.SymOuterK(1, &x)
		nb.corr = axpySym(b.corr, 1, axpySym(&full, -1, &in))
		rhsBlocks[j] = &nb
	}
	p := newIPM(lam, ls, rhsBlocks)
	p.maxIter, p.progress = o.MaxIter, o.Progress
	var s0 float64
	q0 := mat.NewSymDense(k, nil)
	if ts != nil {
		p.targets = ts
		alpha := 1.0
		for j := range blocks {
			bt, _, _ := rhsBlocks[j].rhs(ts[j], false)
			a, err := feasibleScale(ls[j], bt)
			if err != nil {
				return nil, err
			}
			alpha = math.Min(alpha, a)
		}
		// Start at Q0 = g (I - beta Pi), Pi the projector onto the
		// secrets' rows: the constraints see only Pi, where Q0 is
		// alpha/2 (strictly feasible), and elsewhere Q0 = g stays far
		// from both Q ≻ 0 and Q ⪯ I. A multiple of I would put every
		// direction at alpha/2, often far from the centre.
		const g = 0.9
		pi := rowProjector(ls, k)
		beta := 1 - alpha/(2*g)
		for i := range k {
			for j := i; j < k; j++ {
				v := -g * beta * pi.At(i, j)
				if i == j {
					v += g
				}
				q0.SetSym(i, j, v)
			}
		}
	} else {
		p.budget = true
		// The reduced objective tr(Q^-1 Lambda) - tr Lambda is the noise
		// trace; directions outside the subspace contribute nothing.
		p.beta = budget + trLs
		alpha := (1 + trLs/p.beta) / 2
		for i := range k {
			q0.SetSym(i, i, alpha)
		}
		s0 = 1.0
		for range 2000 {
			if _, ok := p.point(q0, s0, false); ok {
				break
			}
			s0 *= 2
		}
	}
	pt, tau, err := p.solve(q0, s0, o.RelTol/10)
	stopped := errors.Is(err, errMaxIter)
	if err != nil && !stopped {
		return nil, err
	}
	// At the step limit the iterate is still strictly feasible: it is
	// certified like any other, and the dual bound shows its gap.
	res := &e3Result{iters: p.iters, qs: pt.q, stopped: stopped}

	// Full-space Q = I - S (I - Q_s) S^T and the multipliers.
	r := sp.r
	qfull := mat.NewSymDense(r, nil)
	{
		var iq mat.Dense
		iq.Scale(-1, pt.q)
		for i := range k {
			iq.Set(i, i, iq.At(i, i)+1)
		}
		var t1, t2 mat.Dense
		t1.Mul(sub.s, &iq)
		t2.Mul(&t1, sub.s.T())
		for i := range r {
			for j := i; j < r; j++ {
				v := -t2.At(i, j)
				if i == j {
					v++
				}
				qfull.SetSym(i, j, v)
			}
		}
	}
	ys := make([]*mat.SymDense, len(blocks))
	scale := 1 / tau
	if p.budget {
		// Budget multipliers normalised by that of the budget constraint,
		// 1/(tau omega), to read as target-mode multipliers.
		scale = pt.omega
	}
	for j := range blocks {
		ys[j] = scaledSym(pt.sinv[j], scale)
	}
	lb, err := sp.boundParts(blocks, ys, qfull)
	if err != nil {
		return nil, err
	}
	// Multipliers recovered from Q by least squares are more accurate
	// late in the solve; keep whichever bound is higher.
	var lb2 *e3Bound
	if yr, err := sp.recoverMultipliers(blocks, qfull); err == nil {
		lb2, _ = sp.boundParts(blocks, yr, qfull)
	}
	tsOf := func(s float64) []float64 {
		out := make([]float64, len(blocks))
		for j, b := range blocks {
			out[j] = s / b.kloc
		}
		return out
	}
	for _, b := range []*e3Bound{lb, lb2} {
		if b == nil {
			continue
		}
		var v float64
		if ts != nil {
			v = b.value(blocks, ts)
		} else {
			// The least level whose bound still fits the budget: the
			// bound decreases in the level.
			v = bisectIncreasing(func(s float64) float64 { return -b.value(blocks, tsOf(s)) }, -budget, pt.s)
		}
		res.lower = math.Max(res.lower, v)
	}
	if ts != nil {
		res.value = pt.f - trLs
	} else {
		res.value = pt.s
	}

	// Noise SigmaG = (L S) (Q_s^-1 - I) (L S)^T, built as B B^T from the
	// eigendecomposition of Q_s so that it is PSD by construction.
	var eq mat.EigenSym
	if !eq.Factorize(pt.q, true) {
		return nil, fmt.Errorf("cip: eigendecomposition of the (E3) solution did not converge")
	}
	qv := eq.Values(nil)
	var qu mat.Dense
	eq.VectorsTo(&qu)
	for a := range k {
		qv[a] = math.Sqrt(math.Max(1/qv[a]-1, 0))
	}
	var lsu, b mat.Dense
	lsu.Mul(sp.l, sub.s)
	b.Mul(&lsu, &qu)
	for a := range k {
		for i := range sp.n {
			b.Set(i, a, b.At(i, a)*qv[a])
		}
	}
	res.noise = outerRows(&b)
	return res, nil
}

// feasibleScale returns alpha > 0 such that alpha L L^T ≺ B: half of
// 1/lambda_max(R^-T L L^T R^-1) with B = R^T R, capped at 1.
func feasibleScale(l *mat.Dense, b *mat.SymDense) (float64, error) {
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		return 0, fmt.Errorf("cip: a target is too small for the spectral truncation of Sigma (right-hand side not positive definite)")
	}
	var ll mat.SymDense
	ll.SymOuterK(1, l)
	var rt mat.TriDense
	ch.UTo(&rt)
	// R^-T (L L^T) R^-1 via two triangular solves.
	var x, y mat.Dense
	if err := x.Solve(rt.T(), &ll); err != nil && !isCondition(err) {
		return 0, err
	}
	if err := y.Solve(rt.T(), x.T()); err != nil && !isCondition(err) {
		return 0, err
	}
	_, hi, err := eigExtremes(symmetrize(&y))
	if err != nil {
		return 0, err
	}
	if !(hi > 0) {
		return 1, nil
	}
	return math.Min(1, 1/hi), nil
}

// expand returns the subspace enlarged by the directions that the KKT
// conditions of the full problem find missing, or nil if there are none.
// With S containing the secrets' rows L_U^T, the multiplier of Q ⪯ I in
// the full problem is Z = Q^-1 Lambda Q^-1 - W, and complementarity
// Z (I - Q) = 0 requires (I - S S^T) Lambda S (Q_s^-1 - I) = 0: Lambda must
// map the noise directions back into S. The missing directions are the
// range of that residual.
func (sub *e3Subspace) expand(res *e3Result) (*e3Subspace, error) {
	sp := sub.sp
	r, k := sub.s.Dims()
	if k >= r {
		return nil, nil
	}
	var eq mat.EigenSym
	if !eq.Factorize(res.qs, true) {
		return nil, fmt.Errorf("cip: eigendecomposition of the (E3) solution did not converge")
	}
	qv := eq.Values(nil)
	var qu mat.Dense
	eq.VectorsTo(&qu)
	// N: the noise directions, weighted by their noise.
	var nz mat.Dense
	nz.Mul(sub.s, &qu)
	for a := range k {
		w := math.Sqrt(math.Max(1/qv[a]-1, 0))
		for i := range r {
			nz.Set(i, a, nz.At(i, a)*w)
		}
	}
	// Candidates: Lambda N, which the KKT conditions require in S, and
	// (Lambda + c I)^-1 N with c the noise per secret coordinate: for one
	// basic secret the optimal noise direction is (Lambda + c I)^-1 l
	// (cip-math's (E2) in these coordinates), which powers of Lambda
	// approach only slowly.
	c := math.Max(res.value, 0) / float64(max(sub.p, 1))
	cand := mat.NewDense(r, 2*k, nil)
	for a := range k {
		for i := range r {
			cand.Set(i, a, sp.lam[i]*nz.At(i, a))
			cand.Set(i, k+a, nz.At(i, a)/(sp.lam[i]+c))
		}
	}
	for _, blk := range []*mat.Dense{cand.Slice(0, r, 0, k).(*mat.Dense), cand.Slice(0, r, k, 2*k).(*mat.Dense)} {
		if nrm := mat.Norm(blk, 2); nrm > 0 {
			blk.Scale(1/nrm, blk)
		}
	}
	nz = *cand
	// The residual outside S.
	var sn, ssn mat.Dense
	sn.Mul(sub.s.T(), &nz)
	ssn.Mul(sub.s, &sn)
	full := mat.Norm(&nz, 2)
	nz.Sub(&nz, &ssn)
	var svd mat.SVD
	if !svd.Factorize(&nz, mat.SVDThinU) {
		return nil, fmt.Errorf("cip: SVD of the (E3) residual did not converge")
	}
	vals := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	var add []int
	for a, x := range vals {
		if x > 1e-9*full && k+len(add) < r {
			add = append(add, a)
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	cols := make([]*mat.VecDense, 0, k+len(add))
	for j := range k {
		cols = append(cols, mat.VecDenseCopyOf(sub.s.ColView(j)))
	}
	for _, a := range add {
		col := mat.VecDenseCopyOf(u.ColView(a))
		// Re-orthogonalise twice against the columns so far.
		for range 2 {
			for _, cj := range cols {
				col.AddScaledVec(col, -mat.Dot(cj, col), cj)
			}
		}
		if nrm := mat.Norm(col, 2); nrm > 0.5 {
			col.ScaleVec(1/nrm, col)
			cols = append(cols, col)
		}
	}
	if len(cols) == k {
		return nil, nil
	}
	s := mat.NewDense(r, len(cols), nil)
	for j, c := range cols {
		s.SetCol(j, c.RawVector().Data)
	}
	return newSubspaceFrom(sp, s)
}

// rowProjector returns the orthogonal projector (k x k) onto the span of
// the rows of the matrices ls.
func rowProjector(ls []*mat.Dense, k int) *mat.SymDense {
	var rows int
	for _, l := range ls {
		r, _ := l.Dims()
		rows += r
	}
	all := mat.NewDense(rows, k, nil)
	at := 0
	for _, l := range ls {
		r, _ := l.Dims()
		all.Slice(at, at+r, 0, k).(*mat.Dense).Copy(l)
		at += r
	}
	var svd mat.SVD
	pi := mat.NewSymDense(k, nil)
	if !svd.Factorize(all, mat.SVDThinV) {
		return pi
	}
	vals := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	for c, x := range vals {
		if x <= 1e-12*vals[0] {
			continue
		}
		for i := range k {
			for j := i; j < k; j++ {
				pi.SetSym(i, j, pi.At(i, j)+v.At(i, c)*v.At(j, c))
			}
		}
	}
	return pi
}

var dbgRounds bool
