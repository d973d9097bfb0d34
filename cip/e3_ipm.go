package cip

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// e3IPM solves the reduced (E3) problem by a primal log-barrier method
// with dense Newton steps on svec(Q) (k(k+1)/2 unknowns):
//
//	target:  min tr(Q^-1 Lambda)  s.t.  L_j Q L_j^T ⪯ B_j(t_j),  Q ⪯ I,
//	budget:  min s  s.t.  tr(Q^-1 Lambda) <= beta,  L_j Q L_j^T ⪯ B_j(s/kLoc_j),  Q ⪯ I,
//
// where Q (k x k) is the explained covariance Sigma M^-1 Sigma in the
// coordinates of L (cip-math's R = L Q L^T), Lambda is diagonal, and
// B_j is concave in its target, so both problems are convex. The secret
// constraints are linear in Q, which is why Q and not the noise is the
// variable: (E3) itself has an n x n LMI per secret, this has a k_j x k_j
// one. Q ≻ 0 needs no barrier of its own: tr(Q^-1 Lambda) is infinite on
// the boundary, and on 0 ≺ Q ⪯ I it is self-concordant.
type e3IPM struct {
	k       int
	lam     []float64
	ls      []*mat.Dense // L_j in the k coordinates, k_j x k
	blocks  []*e3Block
	targets []float64 // target mode
	budget  bool
	beta    float64
	pairs   [][2]int
	eta     []float64 // E_p = eta_p (e_a e_b^T + e_b e_a^T): 1/2 on the diagonal, 1/sqrt2 off it
	nu      float64   // barrier parameter: the duality gap on the central path is nu/tau

	iters    int
	maxIter  int
	progress func(done, total int)
	ctx      context.Context // nil: never cancelled
}

func newIPM(lam []float64, ls []*mat.Dense, blocks []*e3Block) *e3IPM {
	k := len(lam)
	p := &e3IPM{k: k, lam: lam, ls: ls, blocks: blocks}
	for a := range k {
		for b := a; b < k; b++ {
			p.pairs = append(p.pairs, [2]int{a, b})
			if a == b {
				p.eta = append(p.eta, 0.5)
			} else {
				p.eta = append(p.eta, 1/math.Sqrt2)
			}
		}
	}
	p.nu = float64(k)
	for _, b := range blocks {
		p.nu += float64(len(b.idx))
	}
	return p
}

// ipmPoint caches what the barrier and its derivatives need at (Q, s).
type ipmPoint struct {
	q     *mat.SymDense
	s     float64
	a     *mat.SymDense   // Q^-1
	c     *mat.SymDense   // (I - Q)^-1
	f     float64         // tr(Q^-1 Lambda)
	sinv  []*mat.SymDense // S_j^-1, S_j = B_j - L_j Q L_j^T
	ldS   float64         // sum log det S_j + log det(I - Q)
	omega float64         // beta - f (budget mode)
	bd1   []*mat.SymDense // dB_j/ds (budget mode)
	bd2   []*mat.SymDense
}

func (p *e3IPM) target(j int, s float64) float64 {
	if p.budget {
		return s / p.blocks[j].kloc
	}
	return p.targets[j]
}

// point evaluates the barrier pieces at (q, s), or reports that the point
// is outside the domain.
func (p *e3IPM) point(q *mat.SymDense, s float64, derivs bool) (*ipmPoint, bool) {
	k := p.k
	if p.budget && !(s > 0) {
		return nil, false
	}
	var cq mat.Cholesky
	if !cq.Factorize(q) {
		return nil, false
	}
	ic := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			v := -q.At(i, j)
			if i == j {
				v++
			}
			ic.SetSym(i, j, v)
		}
	}
	var cc mat.Cholesky
	if !cc.Factorize(ic) {
		return nil, false
	}
	pt := &ipmPoint{q: q, s: s, ldS: cc.LogDet()}
	pt.a = &mat.SymDense{}
	if err := cq.InverseTo(pt.a); err != nil && !isCondition(err) {
		return nil, false
	}
	for i := range k {
		pt.f += p.lam[i] * pt.a.At(i, i)
	}
	if !(pt.f > 0) || math.IsInf(pt.f, 0) {
		return nil, false
	}
	if p.budget {
		pt.omega = p.beta - pt.f
		if !(pt.omega > 0) {
			return nil, false
		}
	}
	pt.sinv = make([]*mat.SymDense, len(p.blocks))
	if p.budget && derivs {
		pt.bd1 = make([]*mat.SymDense, len(p.blocks))
		pt.bd2 = make([]*mat.SymDense, len(p.blocks))
	}
	for j, b := range p.blocks {
		t := p.target(j, s)
		bt, d1, d2 := b.rhs(t, p.budget && derivs)
		sj := axpySym(bt, -1, congruence(p.ls[j], q))
		var cs mat.Cholesky
		if !cs.Factorize(sj) {
			return nil, false
		}
		pt.ldS += cs.LogDet()
		if derivs {
			pt.sinv[j] = &mat.SymDense{}
			if err := cs.InverseTo(pt.sinv[j]); err != nil && !isCondition(err) {
				return nil, false
			}
			if p.budget {
				kl := b.kloc
				d1.ScaleSym(1/kl, d1)
				d2.ScaleSym(1/(kl*kl), d2)
				pt.bd1[j], pt.bd2[j] = d1, d2
			}
		}
	}
	if derivs {
		pt.c = &mat.SymDense{}
		if err := cc.InverseTo(pt.c); err != nil && !isCondition(err) {
			return nil, false
		}
	}
	return pt, true
}

// congruence returns L Q L^T.
func congruence(l *mat.Dense, q mat.Symmetric) *mat.SymDense {
	var lq mat.Dense
	lq.Mul(l, q)
	m, _ := l.Dims()
	out := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			out.SetSym(i, j, mat.Dot(lq.RowView(i), l.RowView(j)))
		}
	}
	return out
}

// phi is the barrier function at pt for weight tau.
func (p *e3IPM) phi(pt *ipmPoint, tau float64) float64 {
	if p.budget {
		return tau*pt.s - math.Log(pt.omega) - pt.ldS
	}
	return tau*pt.f - pt.ldS
}

// svec maps a symmetric k x k matrix to R^d (orthonormal basis: <X,Y> is
// the dot product of svecs).
func (p *e3IPM) svec(x mat.Symmetric, dst []float64) {
	for i, ab := range p.pairs {
		v := x.At(ab[0], ab[1])
		if ab[0] != ab[1] {
			v *= math.Sqrt2
		}
		dst[i] = v
	}
}

func (p *e3IPM) unsvec(v []float64) *mat.SymDense {
	out := mat.NewSymDense(p.k, nil)
	for i, ab := range p.pairs {
		x := v[i]
		if ab[0] != ab[1] {
			x /= math.Sqrt2
		}
		out.SetSym(ab[0], ab[1], x)
	}
	return out
}

// newtonStep is a Newton step, its squared Newton decrement and the
// factorised Hessian it came from.
type newtonStep struct {
	dq      *mat.SymDense
	ds, dec float64
	ch      *hessFactor
	gobj    []float64 // gradient of the objective (f or s) in svec coordinates
	p       *e3IPM
}

// tangent returns the derivative of the central path with respect to tau
// at a centred point: d/dtau of grad Phi = 0 gives H x' = -grad obj.
func (st *newtonStep) tangent() (*mat.SymDense, float64, error) {
	x := st.ch.solve(st.gobj, -1)
	d := len(st.p.pairs)
	ds := 0.0
	if st.p.budget {
		ds = x[d]
	}
	return st.p.unsvec(x[:d]), ds, nil
}

// hessFactor is the Cholesky factor of a Newton system, from LAPACK's
// potrf directly: mat.Cholesky also estimates the condition number, which
// costs as much as the factorisation here and is not needed.
type hessFactor struct {
	t blas64.Triangular
}

func factorHessian(h *mat.SymDense) (*hessFactor, error) {
	n := h.SymmetricDim()
	raw := h.RawSymmetric()
	work := make([]float64, len(raw.Data))
	copy(work, raw.Data)
	t := blas64.Triangular{N: n, Stride: raw.Stride, Data: work, Uplo: blas.Upper, Diag: blas.NonUnit}
	if _, ok := lapack64.Potrf(blas64.Symmetric{N: n, Stride: raw.Stride, Data: work, Uplo: blas.Upper}); ok {
		return &hessFactor{t: t}, nil
	}
	// Late iterations can lose positive definiteness to rounding; a
	// relative ridge keeps the step a descent direction.
	copy(work, raw.Data)
	mx := 0.0
	for i := range n {
		mx = math.Max(mx, work[i*raw.Stride+i])
	}
	for i := range n {
		work[i*raw.Stride+i] += 1e-12 * mx
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{N: n, Stride: raw.Stride, Data: work, Uplo: blas.Upper}); ok {
		return &hessFactor{t: t}, nil
	}
	return nil, fmt.Errorf("(E3) Newton system: %w", gp.ErrNotPositiveDefinite)
}

// solve returns scale * H^-1 b.
func (f *hessFactor) solve(b []float64, scale float64) []float64 {
	x := make([]float64, len(b))
	for i, v := range b {
		x[i] = scale * v
	}
	v := blas64.Vector{N: len(x), Inc: 1, Data: x}
	blas64.Trsv(blas.Trans, f.t, v)
	blas64.Trsv(blas.NoTrans, f.t, v)
	return x
}

// newton assembles the gradient and Hessian of the barrier at pt in the
// orthonormal svec basis E_p and returns the Newton step. The inverses it
// uses (Q^-1, (I - Q)^-1, S_j^-1) are the barrier's derivatives; they are
// k x k or k_j x k_j and bounded by the distance to the boundary, which the
// line search controls.
func (p *e3IPM) newton(pt *ipmPoint, tau float64) (*newtonStep, error) {
	k, d := p.k, len(p.pairs)
	nv := d
	if p.budget {
		nv++
	}
	h := mat.NewSymDense(nv, nil)
	g := make([]float64, nv)

	// Objective (target) or budget barrier (budget): both are multiples of
	// f(Q) = tr(Q^-1 Lambda), with gradient -A Lambda A and Hessian
	// Delta -> A Delta G + G Delta A, G = A Lambda A.
	wf := tau
	if p.budget {
		wf = 1 / pt.omega
	}
	// Full row-major copies, so that the O(d^2) assembly below is plain
	// indexing.
	af := fullSym(pt.a)
	var gd mat.Dense
	gd.Mul(scaleCols(mat.DenseCopyOf(pt.a), p.lam), pt.a)
	gm := symmetrize(&gd)
	gf := fullSym(gm)
	cf := fullSym(pt.c)
	hr := h.RawSymmetric()
	for pi, pab := range p.pairs {
		aa, bb := pab[0]*k, pab[1]*k
		ai, bi := pab[0], pab[1]
		row := hr.Data[pi*hr.Stride:]
		ep := p.eta[pi]
		for qi := pi; qi < d; qi++ {
			cd := p.pairs[qi]
			c, dd := cd[0], cd[1]
			hf := af[bb+c]*gf[dd*k+ai] + af[bb+dd]*gf[c*k+ai] +
				af[aa+c]*gf[dd*k+bi] + af[aa+dd]*gf[c*k+bi] +
				gf[bb+c]*af[dd*k+ai] + gf[bb+dd]*af[c*k+ai] +
				gf[aa+c]*af[dd*k+bi] + gf[aa+dd]*af[c*k+bi]
			hc := 2 * (cf[aa+c]*cf[bb+dd] + cf[aa+dd]*cf[bb+c])
			row[qi] = ep * p.eta[qi] * (wf*hf + hc)
		}
	}
	gs := make([]float64, d)
	p.svec(gm, gs)
	cs := make([]float64, d)
	p.svec(pt.c, cs)
	for i := range d {
		g[i] = -wf*gs[i] + cs[i]
	}
	if p.budget {
		// -log(beta - f): Hessian H_f/omega + grad f grad f^T/omega^2.
		w2 := 1 / (pt.omega * pt.omega)
		for i := range d {
			for j := i; j < d; j++ {
				hr.Data[i*hr.Stride+j] += w2 * gs[i] * gs[j]
			}
		}
		g[d] = tau
	}

	// Secret constraints: -log det(B_j - L_j Q L_j^T) has gradient
	// T_j = L_j^T S_j^-1 L_j and Hessian tr(T_j Delta T_j Delta'), which is
	// sum_{a<=b} w_ab svec(sym(u_a u_b^T)) svec(.)^T with T_j = U U^T.
	var rows [][]float64
	tmp := make([]float64, d)
	for j, b := range p.blocks {
		kj := len(b.idx)
		half, err := sqrtPSDSmall(pt.sinv[j])
		if err != nil {
			return nil, err
		}
		var u mat.Dense // k x kj, columns u_a
		u.Mul(p.ls[j].T(), half)
		for x := range kj {
			for y := x; y < kj; y++ {
				row := make([]float64, d)
				w := 1.0
				if x != y {
					w = math.Sqrt2
				}
				for i, ab := range p.pairs {
					v := (u.At(ab[0], x)*u.At(ab[1], y) + u.At(ab[1], x)*u.At(ab[0], y)) / 2
					if ab[0] != ab[1] {
						v *= math.Sqrt2
					}
					row[i] = w * v
				}
				rows = append(rows, row)
			}
		}
		var tj mat.SymDense
		tj.SymOuterK(1, &u)
		p.svec(&tj, tmp)
		for i := range d {
			g[i] += tmp[i]
		}
		if p.budget {
			// d/ds of -log det S = -tr(S^-1 B'); d2/ds2 = tr(S^-1 B' S^-1 B')
			// - tr(S^-1 B''); d2/ds dQ = -svec(L^T S^-1 B' S^-1 L).
			var sb, sbs mat.Dense
			sb.Mul(pt.sinv[j], pt.bd1[j])
			g[d] -= mat.Trace(&sb)
			var sb2, sbb mat.Dense
			sb2.Mul(&sb, &sb)
			sbb.Mul(pt.sinv[j], pt.bd2[j])
			hr.Data[d*hr.Stride+d] += mat.Trace(&sb2) - mat.Trace(&sbb)
			sbs.Mul(&sb, pt.sinv[j])
			cross := congruence(mat.DenseCopyOf(p.ls[j].T()), symmetrize(&sbs))
			p.svec(cross, tmp)
			for i := range d {
				hr.Data[i*hr.Stride+d] -= tmp[i]
			}
		}
	}
	if len(rows) > 0 {
		r := mat.NewDense(len(rows), nv, nil)
		for i, row := range rows {
			copy(r.RawRowView(i)[:d], row)
		}
		h.SymRankK(h, 1, r.T())
	}

	ch, err := factorHessian(h)
	if err != nil {
		return nil, err
	}
	x := ch.solve(g, -1)
	st := &newtonStep{ch: ch, p: p, gobj: make([]float64, nv)}
	for i := range nv {
		st.dec -= g[i] * x[i]
	}
	st.dq = p.unsvec(x[:d])
	if p.budget {
		st.ds = x[d]
		st.gobj[d] = 1
	} else {
		for i := range d {
			st.gobj[i] = -gs[i]
		}
	}
	return st, nil
}

// errMaxIter reports that the Newton-step limit was reached; the iterate
// returned with it is strictly feasible and usable.
var errMaxIter = fmt.Errorf("(E3) solver: Newton-step limit: %w", ErrNoConvergence)

// solve runs the barrier method from the strictly feasible (q, s) until
// the central-path gap nu/tau is below relTol times the objective. After
// each centring, tau grows by a factor of 10 and the iterate moves along
// the tangent of the central path first, so that a corrector step or two
// recentres it.
func (p *e3IPM) solve(q *mat.SymDense, s float64, relTol float64) (*ipmPoint, float64, error) {
	pt, ok := p.point(q, s, true)
	if !ok {
		return nil, 0, errNoInterior
	}
	const mu = 10
	obj := func(pt *ipmPoint) float64 {
		if p.budget {
			return pt.s
		}
		return pt.f
	}
	tau := p.nu / math.Max(math.Abs(obj(pt)), 1e-300)
	for {
		var last *newtonStep // the factorisation at pt, if current
		prevDec := math.Inf(1)
		// Centre loosely on the way (the predictor absorbs the rest) and
		// tightly at the last tau.
		final := p.nu/tau <= relTol*math.Abs(obj(pt))
		centre := 1e-3
		if final {
			centre = 1e-9
		}
		for inner := 0; ; inner++ {
			if p.iters >= p.maxIter {
				return pt, tau, errMaxIter
			}
			if p.ctx != nil {
				if err := p.ctx.Err(); err != nil {
					return pt, tau, err
				}
			}
			st, err := p.newton(pt, tau)
			if err != nil {
				return pt, tau, err
			}
			p.iters++
			if p.progress != nil {
				p.progress(p.iters, p.maxIter)
			}
			last = st
			dec := st.dec
			// Centred, or at the rounding floor of the Newton system: near
			// the centre the decrement falls quadratically, and when it
			// stops doing so below 1e-2 what remains is rounding noise
			// (the point is then within 0.1 of the centre in the barrier's
			// local norm, enough for the gap estimate nu/tau; the dual
			// bound does not rely on centring).
			if dec <= centre || (dec <= 1e-2 && inner > 0 && dec > prevDec/2) || inner >= 50 {
				break
			}
			prevDec = dec
			f0 := p.phi(pt, tau)
			step := 1.0
			var next *ipmPoint
			for range 60 {
				qn := axpySym(pt.q, step, st.dq)
				cand, ok := p.point(qn, pt.s+step*st.ds, false)
				// Armijo, with a rounding allowance: close to the centre
				// the decrease is far below the barrier's magnitude tau*f.
				if ok && p.phi(cand, tau) <= f0-0.25*step*dec+1e-13*math.Abs(f0) {
					next = cand
					break
				}
				step /= 2
			}
			if next == nil {
				break
			}
			np, ok := p.point(next.q, next.s, true)
			if !ok {
				break
			}
			pt, last = np, nil
			if step < 1e-3 && dec <= 1e-6 {
				break
			}
		}
		if final {
			return pt, tau, nil
		}
		next := mu * tau
		if last != nil {
			tq, ts, err := last.tangent()
			if err == nil {
				// Slacks of active constraints shrink like 1/tau, so
				// extrapolate linearly in 1/tau: the step in x is
				// x'(tau) * tau^2 (1/tau - 1/next).
				step := tau * (1 - tau/next)
				for range 30 {
					cand, ok := p.point(axpySym(pt.q, step, tq), pt.s+step*ts, true)
					if ok {
						pt = cand
						break
					}
					step /= 2
				}
			}
		}
		tau = next
	}
}

// fullSym returns a symmetric matrix as a full row-major slice.
func fullSym(a *mat.SymDense) []float64 {
	n := a.SymmetricDim()
	out := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			v := a.At(i, j)
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}
