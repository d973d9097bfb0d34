package cip

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// maxNewtonDim bounds the subspace dimension k of the reduced problem:
// its dense Newton system has k(k+1)/2 unknowns, so a step costs about
// k^6 / 24 flops (k = 40: some 60 ms on the reference machine, and a
// solve takes 40 to 80 steps).
const maxNewtonDim = 40

// solveE3 solves (E3) in target mode (ts != nil) or budget mode, certifies
// the design and attaches the dual lower bound. Problems whose reduced
// Newton system would be too large fall back on the proportional design
// c Sigma (feasible for any secrets), still certified and bounded.
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
	var res *e3Result
	iters := 0
	if _, k := sub.s.Dims(); k <= maxNewtonDim {
		res, iters, err = columnGeneration(sp, sub, blocks, ts, budget, o)
		// A target so small that the variance dropped from the spectrum
		// exceeds what the secret may reveal leaves the reduced problem
		// without an interior: the proportional design below still
		// serves, and its bound shows the gap.
		if err != nil && !errors.Is(err, errNoInterior) {
			return nil, err
		}
	}
	fb, err := proportionalFallback(sigma, sp, blocks, ts, budget)
	if err != nil {
		return nil, err
	}
	if res == nil || fb.value < res.value {
		// Keep the better bound: both are bounds on the same optimum.
		if res != nil {
			fb.lower = math.Max(fb.lower, res.lower)
		}
		res = fb
	}
	d := &SetDesign{Method: res.method, Iterations: iters, LowerBound: math.Max(res.lower, 0)}
	d.Predicted = res.value
	if ts != nil {
		d.Targets = ts
		if err := d.certifyTarget(sigma, secrets, res.noise); err != nil {
			return nil, err
		}
		return d, nil
	}
	if err := d.certifyBudget(sigma, secrets, res.noise, budget); err != nil {
		return nil, err
	}
	return d, nil
}

// columnGeneration solves the reduced problem in a subspace, then adds the
// directions the optimality conditions ask for, until the dual bound
// closes the gap, the subspace stops growing, or it would exceed
// maxNewtonDim.
func columnGeneration(sp *e3Spectrum, sub *e3Subspace, blocks []*e3Block, ts []float64, budget float64, o SetOptions) (*e3Result, int, error) {
	var res *e3Result
	iters := 0
	maxIter := o.MaxIter
	for round := 0; ; round++ {
		o.MaxIter = maxIter - iters
		r, err := sub.solve(blocks, ts, budget, o)
		if err != nil {
			return nil, 0, err
		}
		iters += r.iters
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
		if _, k := sub.s.Dims(); res.value-res.lower <= o.RelTol*math.Abs(res.value) || k == sp.r || r.stopped {
			break
		}
		next, err := sub.expand(r)
		if err != nil {
			return nil, 0, err
		}
		if next == nil {
			break
		}
		// Each round restarts the interior-point method; once the
		// subspace is not small, one solve in the full space is cheaper
		// than more rounds.
		if _, k := next.s.Dims(); (2*k >= sp.r || round+1 >= maxRounds) && sp.r <= maxNewtonDim {
			next = fullSubspace(sp, sub.p)
		}
		if _, k := next.s.Dims(); k > maxNewtonDim {
			break
		}
		sub = next
	}
	res.method = "e3-barrier"
	return res, iters, nil
}

// proportionalFallback returns SigmaG = c Sigma, which gives every basic
// secret loss factor 1/(c Sigma_ii) and a compound secret
// lambda_max(Sigma_SS^-1)/c exactly, with the smallest c that meets the
// targets (target mode) or c = budget / tr Sigma (budget mode), and the
// dual bound at uniform multipliers Y_S = I, Z = 0:
// N^2 / sum tr B_S - tr Sigma with N the nuclear norm of the stacked
// Sigma_S: rows (for every point a basic secret, K = Sigma^2 and the
// bound is exact when the design is optimal).
func proportionalFallback(sigma mat.Symmetric, sp *e3Spectrum, blocks []*e3Block, ts []float64, budget float64) (*e3Result, error) {
	// Worst-case factor: L_S(c Sigma) = w_S / c, w_S = 1/lambda_min(Sigma_SS).
	w := make([]float64, len(blocks))
	for j, b := range blocks {
		w[j] = 1 / b.sig[0]
		for _, v := range b.sig {
			w[j] = math.Max(w[j], 1/v)
		}
	}
	// N >= the nuclear norm of the rows compressed to the kept directions,
	// Sigma_S: V = L_S Lambda^1/2, which keeps the bound valid and costs
	// an SVD of (secret coordinates) x r, not x n.
	rows := 0
	for _, b := range blocks {
		rows += len(b.idx)
	}
	f := mat.NewDense(rows, sp.r, nil)
	at := 0
	for _, b := range blocks {
		for a := range b.idx {
			for c := range sp.r {
				f.Set(at, c, b.ls.At(a, c)*math.Sqrt(sp.lam[c]))
			}
			at++
		}
	}
	nuc, err := nuclearNorm(f)
	if err != nil {
		return nil, err
	}
	eOf := func(ts []float64) float64 {
		e := 0.0
		for j, b := range blocks {
			for _, s := range b.sig {
				e += basicRHS(s, ts[j])
			}
		}
		return e
	}
	bound := func(ts []float64) float64 { return nuc*nuc/eOf(ts) - sp.trSigma }
	res := &e3Result{method: "proportional"}
	if ts != nil {
		c := 0.0
		for j := range blocks {
			c = math.Max(c, w[j]/ts[j])
		}
		res.noise = scaledSym(sigma, c)
		res.value = c * sp.trSigma
		res.lower = bound(ts)
		return res, nil
	}
	c := budget / sp.trSigma
	for j, b := range blocks {
		res.value = math.Max(res.value, b.kloc*w[j]/c)
	}
	res.noise = scaledSym(sigma, c)
	levelTargets := func(s float64) []float64 {
		out := make([]float64, len(blocks))
		for j, b := range blocks {
			out[j] = s / b.kloc
		}
		return out
	}
	res.lower = bisectIncreasing(func(s float64) float64 { return -bound(levelTargets(s)) }, -budget, res.value)
	return res, nil
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
	// Column generation pays when the secrets reach few of many
	// directions; otherwise solve in the full space (the Newton system
	// then has r(r+1)/2 unknowns).
	if 3*len(union) >= r && r <= maxNewtonDim {
		return fullSubspace(sp, len(union)), nil
	}
	lu := rowsOf(sp.l, union) // p x r
	var svd mat.SVD
	if !svd.Factorize(lu, mat.SVDThinV) {
		return nil, fmt.Errorf("SVD of the secrets' directions: %w", ErrNoConvergence)
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
	sub, err := newSubspaceFrom(sp, v.Slice(0, r, 0, k).(*mat.Dense))
	if err != nil {
		return nil, err
	}
	sub.p = len(union)
	return sub, nil
}

// fullSubspace is the whole space of the spectrum.
func fullSubspace(sp *e3Spectrum, p int) *e3Subspace {
	s := mat.NewDense(sp.r, sp.r, nil)
	for i := range sp.r {
		s.Set(i, i, 1)
	}
	return &e3Subspace{sp: sp, s: s, p: p}
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
		return nil, fmt.Errorf("eigendecomposition of the noise subspace: %w", ErrNoConvergence)
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

// maxRounds bounds the column-generation rounds of solveE3 before it
// moves to the full space.
const maxRounds = 6

type e3Result struct {
	qs    *mat.SymDense // the reduced solution Q_s
	noise *mat.SymDense
	value float64 // least budget (target) or level (budget) of the reduced problem
	lower float64 // dual lower bound on the same quantity for the full problem
	iters int
	// stopped is set when the Newton-step limit ended the solve.
	stopped bool
	method  string
}

// solve runs the barrier method in the subspace and converts the answer
// to a noise covariance in the original coordinates.
func (sub *e3Subspace) solve(blocks []*e3Block, ts []float64, budget float64, o SetOptions) (*e3Result, error) {
	_, k := sub.s.Dims()
	lam, trLs, ls, rhsBlocks := sub.reduce(blocks)
	p := newIPM(lam, ls, rhsBlocks)
	p.maxIter, p.progress, p.ctx = o.MaxIter, o.Progress, o.Context
	var s0 float64
	var q0 *mat.SymDense
	if ts != nil {
		p.targets = ts
		var err error
		q0, err = targetStart(ls, rhsBlocks, ts, k)
		if err != nil {
			return nil, err
		}
	} else {
		q0, s0 = budgetStart(p, k, trLs, budget)
	}
	pt, tau, err := p.solve(q0, s0, o.RelTol/10)
	stopped := errors.Is(err, errMaxIter)
	if err != nil && !stopped {
		return nil, err
	}
	// At the step limit the iterate is still strictly feasible: it is
	// certified like any other, and the dual bound shows its gap.
	res := &e3Result{iters: p.iters, qs: pt.q, stopped: stopped}

	qfull := sub.fullQ(pt.q)
	lower, err := sub.lowerBound(blocks, pt, tau, p.budget, qfull, ts, budget)
	if err != nil {
		return nil, err
	}
	res.lower = lower
	if ts != nil {
		res.value = pt.f - trLs
	} else {
		res.value = pt.s
	}
	res.noise, err = sub.noise(pt.q)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// reduce projects the problem onto the subspace: the reduced spectrum lam
// and its trace, each block's L_S S, and the blocks with the variance of
// L_S outside the subspace moved to the right-hand side.
func (sub *e3Subspace) reduce(blocks []*e3Block) (lam []float64, trLs float64, ls []*mat.Dense, rhsBlocks []*e3Block) {
	sp := sub.sp
	_, k := sub.s.Dims()
	lam = make([]float64, k)
	for a := range k {
		for i := range sp.r {
			lam[a] += sub.s.At(i, a) * sub.s.At(i, a) * sp.lam[i]
		}
		trLs += lam[a]
	}
	ls = make([]*mat.Dense, len(blocks))
	rhsBlocks = make([]*e3Block, len(blocks))
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
	return lam, trLs, ls, rhsBlocks
}

// targetStart is the strictly feasible starting point of target mode.
func targetStart(ls []*mat.Dense, rhsBlocks []*e3Block, ts []float64, k int) (*mat.SymDense, error) {
	q0 := mat.NewSymDense(k, nil)
	alpha := 1.0
	for j := range rhsBlocks {
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
	return q0, nil
}

// budgetStart sets p up for budget mode and returns its starting point
// (q0, s0), s0 doubled until the point is strictly feasible.
func budgetStart(p *e3IPM, k int, trLs, budget float64) (*mat.SymDense, float64) {
	q0 := mat.NewSymDense(k, nil)
	p.budget = true
	// The reduced objective tr(Q^-1 Lambda) - tr Lambda is the noise
	// trace; directions outside the subspace contribute nothing.
	p.beta = budget + trLs
	alpha := (1 + trLs/p.beta) / 2
	for i := range k {
		q0.SetSym(i, i, alpha)
	}
	s0 := 1.0
	for range 2000 {
		if _, ok := p.point(q0, s0, false); ok {
			break
		}
		s0 *= 2
	}
	return q0, s0
}

// fullQ is the full-space Q = I - S (I - Q_s) S^T.
func (sub *e3Subspace) fullQ(qs *mat.SymDense) *mat.SymDense {
	_, k := sub.s.Dims()
	r := sub.sp.r
	qfull := mat.NewSymDense(r, nil)
	var iq mat.Dense
	iq.Scale(-1, qs)
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
	return qfull
}

// lowerBound is the dual lower bound on the full problem's value from the
// solver's multipliers and from those recovered from qfull, whichever is
// higher (0 when neither is positive).
func (sub *e3Subspace) lowerBound(blocks []*e3Block, pt *ipmPoint, tau float64, budgetMode bool, qfull *mat.SymDense, ts []float64, budget float64) (float64, error) {
	sp := sub.sp
	ys := make([]*mat.SymDense, len(blocks))
	scale := 1 / tau
	if budgetMode {
		// Budget multipliers normalised by that of the budget constraint,
		// 1/(tau omega), to read as target-mode multipliers.
		scale = pt.omega
	}
	for j := range blocks {
		ys[j] = scaledSym(pt.sinv[j], scale)
	}
	lb, err := sp.boundParts(blocks, ys, qfull)
	if err != nil {
		return 0, err
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
	var lower float64
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
		lower = math.Max(lower, v)
	}
	return lower, nil
}

// noise is SigmaG = (L S) (Q_s^-1 - I) (L S)^T, built as B B^T from the
// eigendecomposition of Q_s so that it is PSD by construction.
func (sub *e3Subspace) noise(qs *mat.SymDense) (*mat.SymDense, error) {
	sp := sub.sp
	_, k := sub.s.Dims()
	var eq mat.EigenSym
	if !eq.Factorize(qs, true) {
		return nil, fmt.Errorf("eigendecomposition of the (E3) solution: %w", ErrNoConvergence)
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
	return outerRows(&b), nil
}

// errNoInterior reports a reduced problem without a strictly feasible
// point.
var errNoInterior = errors.New("the reduced (E3) problem has no strictly feasible point")

// feasibleScale returns alpha > 0 such that alpha L L^T ≺ B: half of
// 1/lambda_max(R^-T L L^T R^-1) with B = R^T R, capped at 1.
func feasibleScale(l *mat.Dense, b *mat.SymDense) (float64, error) {
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		return 0, errNoInterior
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
		return nil, fmt.Errorf("eigendecomposition of the (E3) solution: %w", ErrNoConvergence)
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
		return nil, fmt.Errorf("SVD of the (E3) residual: %w", ErrNoConvergence)
	}
	vals := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	var add []int
	// Largest residual directions first, within the size the dense Newton
	// system allows.
	limit := min(r, max(maxNewtonDim, k))
	for a, x := range vals {
		if x > 1e-9*full && k+len(add) < limit {
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
	ns, err := newSubspaceFrom(sp, s)
	if err != nil {
		return nil, err
	}
	ns.p = sub.p
	return ns, nil
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
