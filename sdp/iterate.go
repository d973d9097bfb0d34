package sdp

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Operations on cone vectors under an NT scaling W = R R^T.

// scaleS sets dst = R^-1 v R^-T (v / w): a primal direction in scaled space.
func scaleS(dst, v cvec, sc scaling) {
	for i := range v.lp {
		dst.lp[i] = v.lp[i] / sc.lp.w[i]
	}
	for k, b := range v.blk {
		congruenceGen(dst.blk[k], sc.blk[k].rinv, b)
	}
}

// unscaleZ sets dst = R^-T v R^-1 (v / w): a scaled dual direction back in
// the original space.
func unscaleZ(dst, v cvec, sc scaling) {
	for i := range v.lp {
		dst.lp[i] = v.lp[i] / sc.lp.w[i]
	}
	for k, b := range v.blk {
		congruenceGen(dst.blk[k], sc.blk[k].rinv.T(), b)
	}
}

// congruenceGen sets dst = a m a^T, symmetrised against rounding. m is
// expanded to a general matrix first: gonum's Dsymm is unblocked and several
// times slower than its Dgemm.
func congruenceGen(dst *mat.SymDense, a mat.Matrix, m *mat.SymDense) {
	n := dst.SymmetricDim()
	k := m.SymmetricDim()
	md := mat.NewDense(k, k, nil)
	rm := m.RawSymmetric()
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			v := rm.Data[i*rm.Stride+j]
			md.Set(i, j, v)
			md.Set(j, i, v)
		}
	}
	var t, f mat.Dense
	t.Mul(a, md)
	f.Mul(&t, a.T())
	rf := f.RawMatrix()
	rd := dst.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			rd.Data[i*rd.Stride+j] = 0.5 * (rf.Data[i*rf.Stride+j] + rf.Data[j*rf.Stride+i])
		}
	}
}

func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// metrics are the convergence measures of one iterate.
type metrics struct {
	pobj, dobj, gap, relgap, pres, dres float64
}

// runState is the state of one run: the current iterate, the residual
// buffers reused across iterations, and the best iterate so far.
type runState struct {
	cp  *compiled
	set Settings
	res *Result
	it  iterate

	dg, resx0, resy0, resz0 float64

	fx   cvec
	ftz  []float64
	rx   []float64
	ry   []float64
	rz   cvec
	rt   float64
	tmp  cvec
	ftmp []float64

	// The best iterate so far, by distance to the tolerances: late
	// iterations can lose accuracy (the Schur complement's condition number
	// grows like 1/mu), and then the best point is returned.
	best      metrics
	bestScore float64
	bestIter  iterate
}

// run is the homogeneous self-dual iteration of CVXOPT's conelp
// (Vandenberghe 2010), with the NT scaling recomputed from
// (s, z) at every iteration.
func (cp *compiled) run(set Settings) (*Result, error) {
	res := &Result{}
	it, err := cp.initial()
	if err != nil {
		return nil, errRank
	}
	n, p := cp.n, cp.p
	r := &runState{
		cp: cp, set: set, res: res, it: it,
		dg:    float64(cp.degree()),
		resx0: math.Max(1, norm2(cp.c)),
		resy0: math.Max(1, norm2(cp.b)),
		resz0: math.Max(1, cp.f0.norm()),
		fx:    cp.newCvec(),
		ftz:   make([]float64, n),
		rx:    make([]float64, n),
		ry:    make([]float64, p),
		rz:    cp.newCvec(),
		tmp:   cp.newCvec(),
		ftmp:  make([]float64, n),

		bestScore: math.Inf(1),
		bestIter:  it,
	}

	for iter := 0; ; iter++ {
		if set.Context != nil {
			if err := set.Context.Err(); err != nil {
				return nil, err
			}
		}
		m, pinf, dinf, mu := r.residuals()
		sc0 := r.score(m)
		if sc0 < r.bestScore {
			r.best, r.bestScore, r.bestIter = m, sc0, r.it
		}
		if out, done := r.stop(m, pinf, dinf, sc0, iter); done {
			return out, nil
		}
		d, alpha, ok := r.direction(mu)
		if !ok {
			return r.fail(iter), nil
		}
		if set.Trace != nil {
			set.Trace(Iteration{Iter: iter, PrimalObj: m.pobj, DualObj: m.dobj, Gap: m.gap, PrimalRes: m.pres, DualRes: m.dres, Step: alpha})
		}
		if alpha < 1e-10 {
			return r.fail(iter), nil
		}
		r.step(d, alpha)
	}
}

func (r *runState) score(m metrics) float64 {
	return math.Max(math.Max(m.pres, m.dres)/r.set.FeasTol, m.relgap/r.set.GapTol)
}

// residuals computes the residuals of the embedding at the current iterate
// into the state's buffers, and returns the iterate's metrics, the primal
// and dual infeasibility certificates' measures, and mu.
func (r *runState) residuals() (m metrics, pinf, dinf, mu float64) {
	cp, it := r.cp, r.it
	n, p := cp.n, cp.p
	fx, ftz, rx, ry, rz, tmp, ftmp := r.fx, r.ftz, r.rx, r.ry, r.rz, r.tmp, r.ftmp
	cp.applyF(fx, it.x)
	cp.applyFT(ftz, it.z)
	for i := range rx {
		rx[i] = -ftz[i] + cp.c[i]*it.tau
	}
	if p > 0 {
		aty := mat.NewVecDense(n, nil)
		aty.MulVec(cp.a.T(), mat.NewVecDense(p, it.y))
		ax := mat.NewVecDense(p, nil)
		ax.MulVec(cp.a, mat.NewVecDense(n, it.x))
		for i := range rx {
			rx[i] += aty.AtVec(i)
		}
		for i := range ry {
			ry[i] = -ax.AtVec(i) + cp.b[i]*it.tau
		}
	}
	copy(rz.lp, fx.lp)
	for k := range rz.blk {
		rz.blk[k].CopySym(fx.blk[k])
	}
	rz.axpy(it.tau, cp.f0)
	rz.axpy(-1, it.s)
	cx := dot(cp.c, it.x)
	by := dot(cp.bOrZero(), it.y)
	hz := it.z.dot(cp.f0)
	r.rt = -cx - by - hz - it.kap
	sz := it.s.dot(it.z)
	mu = (sz + it.tau*it.kap) / (r.dg + 1)

	m.pobj = cx / it.tau
	m.dobj = -(by + hz) / it.tau
	m.gap = sz / (it.tau * it.tau)
	m.relgap = math.Max(m.gap, math.Abs(m.pobj-m.dobj)) / (1 + math.Abs(m.pobj) + math.Abs(m.dobj))
	m.pres = math.Max(norm2(ry)/r.resy0, rz.norm()/r.resz0) / it.tau
	m.dres = norm2(rx) / r.resx0 / it.tau
	pinf, dinf = math.Inf(1), math.Inf(1)
	if by+hz < 0 {
		for i := range ftmp {
			ftmp[i] = rx[i] - cp.c[i]*it.tau
		}
		pinf = norm2(ftmp) / r.resx0 / -(by + hz)
	}
	if cx < 0 {
		copy(tmp.lp, fx.lp)
		for k := range tmp.blk {
			tmp.blk[k].CopySym(fx.blk[k])
		}
		tmp.axpy(-1, it.s)
		dinf = math.Max(norm2(cp.axOrNil(it.x))/r.resy0, tmp.norm()/r.resz0) / -cx
	}
	return m, pinf, dinf, mu
}

// stop applies the termination tests to iteration iter with metrics m and
// score sc0; done reports whether the run ends with res.
func (r *runState) stop(m metrics, pinf, dinf, sc0 float64, iter int) (res *Result, done bool) {
	set := r.set
	switch {
	case m.pres <= set.FeasTol && m.dres <= set.FeasTol && m.relgap <= set.GapTol:
		return r.finish(Optimal, m, r.it, iter), true
	case pinf <= set.FeasTol:
		return r.finish(PrimalInfeasible, m, r.it, iter), true
	case dinf <= set.FeasTol:
		return r.finish(DualInfeasible, m, r.it, iter), true
	case iter >= set.MaxIter:
		if r.bestScore <= 1e3 {
			return r.finish(NearOptimal, r.best, r.bestIter, iter), true
		}
		return r.finish(MaxIterations, m, r.it, iter), true
	case r.bestScore <= 1e3 && sc0 > 100*r.bestScore:
		// Diverging after coming close: rounding dominates.
		return r.fail(iter), true
	}
	return nil, false
}

// direction computes the NT scaling, the predictor and the Mehrotra
// corrector, and returns the combined direction and its step length;
// ok is false when a factorisation or solve failed.
func (r *runState) direction(mu float64) (d direction, alpha float64, ok bool) {
	cp, it := r.cp, r.it
	n, p := cp.n, cp.p
	sc, err := ntScaling(it.s, it.z)
	if err != nil {
		return d, 0, false
	}
	kk, err := cp.factor(sc)
	if err != nil {
		return d, 0, false
	}
	nw, err := cp.newNewton(sc, kk, it)
	if err != nil {
		return d, 0, false
	}
	bx := make([]float64, n)
	for i := range bx {
		bx[i] = -r.rx[i]
	}
	bry := make([]float64, p)
	for i := range bry {
		bry[i] = -r.ry[i]
	}
	bz := r.rz.clone()
	bz.scale(-1)

	var (
		sigma        float64
		dsa, dza     cvec // scaled affine directions
		dtaua, dkapa float64
	)
	q := cp.newCvec()
	for phase := 0; phase < 2; phase++ {
		complementarityRHS(q, sc, sigma, mu, phase, dsa, dza)
		bk := -it.tau*it.kap + sigma*mu
		if phase == 1 {
			bk -= dtaua * dkapa
		}
		d, err = nw.solveRefined(q, bx, bry, bz, -r.rt, bk)
		if err != nil {
			return d, 0, false
		}
		amax := maxStep(sc, d, it)
		if phase == 0 {
			a := math.Min(1, amax)
			sigma = math.Pow(1-a, 3)
			dsa, dza, dtaua, dkapa = d.dss, d.dzs, d.dtau, d.dkap
			continue
		}
		alpha = math.Min(1, r.set.Step*amax)
	}
	return d, alpha, true
}

// complementarityRHS sets the complementarity right-hand side in the
// scaled space:
// lambda o (dz~ + ds~) = -lambda o lambda + sigma mu e - ds~a o dz~a,
// stored as q = dz~ + ds~; the corrector term enters in phase 1 only.
func complementarityRHS(q cvec, sc scaling, sigma, mu float64, phase int, dsa, dza cvec) {
	for i, l := range sc.lp.lambda {
		r := -l*l + sigma*mu
		if phase == 1 {
			r -= dsa.lp[i] * dza.lp[i]
		}
		q.lp[i] = r / l
	}
	for k, bs := range sc.blk {
		nb := len(bs.lambda)
		var corr mat.Dense
		if phase == 1 {
			corr.Mul(dsa.blk[k], dza.blk[k])
		}
		for i := 0; i < nb; i++ {
			for j := i; j < nb; j++ {
				var r float64
				if i == j {
					r = -bs.lambda[i]*bs.lambda[i] + sigma*mu
				}
				if phase == 1 {
					r -= 0.5 * (corr.At(i, j) + corr.At(j, i))
				}
				q.blk[k].SetSym(i, j, 2*r/(bs.lambda[i]+bs.lambda[j]))
			}
		}
	}
}

// maxStep is the largest step along d keeping every cone variable interior.
func maxStep(sc scaling, d direction, it iterate) float64 {
	amax := math.Inf(1)
	amax = maxStepLP(sc.lp.lambda, d.dss.lp, amax)
	amax = maxStepLP(sc.lp.lambda, d.dzs.lp, amax)
	for k, bs := range sc.blk {
		amax = maxStepBlock(bs.lambda, d.dss.blk[k], amax)
		amax = maxStepBlock(bs.lambda, d.dzs.blk[k], amax)
	}
	amax = maxStepLP([]float64{it.tau, it.kap}, []float64{d.dtau, d.dkap}, amax)
	return amax
}

// step moves the iterate by alpha along d.
func (r *runState) step(d direction, alpha float64) {
	it := r.it
	dx, dy, ds, dz, dtau, dkap := d.dx, d.dy, d.ds, d.dz, d.dtau, d.dkap
	next := iterate{x: make([]float64, r.cp.n), y: make([]float64, r.cp.p), s: it.s.clone(), z: it.z.clone()}
	for i := range next.x {
		next.x[i] = it.x[i] + alpha*dx[i]
	}
	for i := range next.y {
		next.y[i] = it.y[i] + alpha*dy[i]
	}
	next.s.axpy(alpha, ds)
	next.z.axpy(alpha, dz)
	next.tau = it.tau + alpha*dtau
	next.kap = it.kap + alpha*dkap
	r.it = next
}

// finish fills the result from the iterate at, rescaled by tau, or as a
// certificate of infeasibility.
func (r *runState) finish(st Status, m metrics, at iterate, iters int) *Result {
	cp, res := r.cp, r.res
	res.Status = st
	res.Iterations = iters
	res.PrimalObj, res.DualObj = m.pobj, m.dobj
	res.Gap, res.RelGap = m.gap, m.relgap
	res.PrimalRes, res.DualRes = m.pres, m.dres
	scaleX, scaleZ := 1/at.tau, 1/at.tau
	switch st {
	case PrimalInfeasible:
		scaleX = 0
		scaleZ = -1 / (dot(cp.bOrZero(), at.y) + at.z.dot(cp.f0))
	case DualInfeasible:
		scaleX = -1 / dot(cp.c, at.x)
		scaleZ = 0
	}
	res.X = make([]float64, cp.n)
	for i := range res.X {
		res.X[i] = at.x[i] * scaleX
	}
	res.Y = make([]float64, cp.p)
	for i := range res.Y {
		res.Y[i] = at.y[i] * scaleZ
	}
	s := at.s.clone()
	z := at.z.clone()
	for i := range s.lp {
		s.lp[i] *= scaleX
		z.lp[i] *= scaleZ
	}
	for k := range s.blk {
		s.blk[k].ScaleSym(scaleX, s.blk[k])
		z.blk[k].ScaleSym(scaleZ, z.blk[k])
	}
	res.SLP, res.SBlocks, res.ZLP, res.ZBlocks = s.lp, s.blk, z.lp, z.blk
	return res
}

// fail returns the best iterate so far, as near-optimal when it came close.
func (r *runState) fail(iters int) *Result {
	if r.bestScore <= 1e3 {
		return r.finish(NearOptimal, r.best, r.bestIter, iters)
	}
	return r.finish(NumericalProblems, r.best, r.bestIter, iters)
}

func (cp *compiled) axOrNil(x []float64) []float64 {
	if cp.p == 0 {
		return nil
	}
	out := mat.NewVecDense(cp.p, nil)
	out.MulVec(cp.a, mat.NewVecDense(cp.n, x))
	return out.RawVector().Data
}
