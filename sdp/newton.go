package sdp

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// direction is a search direction of the embedding, with the cone parts
// also in the scaled space (ds~ = R^-1 ds R^-T, dz~ = R^T dz R) where step
// lengths and the Mehrotra correction are computed.
type direction struct {
	dx, dy     []float64
	ds, dz     cvec
	dss, dzs   cvec
	dtau, dkap float64
}

// newton solves the linearised embedding
//
//	A^T dy - F^T dz + c dtau         = bx
//	-A dx + b dtau                   = by
//	F dx + F0 dtau - ds              = bz
//	-c^T dx - b^T dy - <F0,dz> - dkap = bt
//	dz~ + ds~                        = q   (scaled complementarity)
//	kap dtau + tau dkap              = bk
//
// by eliminating ds and dz and solving the Schur system twice: once for
// the right-hand side and once for the dtau column, which does not change
// within an iteration.
type newton struct {
	cp       *compiled
	sc       scaling
	kk       *kkt
	tau, kap float64
	dx2, dy2 []float64
	dzs2     cvec // scaled dz of the dtau column
	f0s      cvec // R^-1 F0 R^-T
	den2     float64
}

func (cp *compiled) newNewton(sc scaling, kk *kkt, it iterate) (*newton, error) {
	nw := &newton{cp: cp, sc: sc, kk: kk, tau: it.tau, kap: it.kap}
	// H dx2 + A^T dy2 = -(c + F^T W^-1 F0), A dx2 = b, dz2 = -W^-1 (F dx2 + F0).
	nw.f0s = cp.newCvec()
	scaleS(nw.f0s, cp.f0, sc)
	tmp := cp.newCvec()
	unscaleZ(tmp, nw.f0s, sc)
	ft := make([]float64, cp.n)
	cp.applyFT(ft, tmp)
	r1 := make([]float64, cp.n)
	for i := range r1 {
		r1[i] = -(cp.c[i] + ft[i])
	}
	var err error
	nw.dx2, nw.dy2, err = kk.solve(r1, cp.bOrZero())
	if err != nil {
		return nil, err
	}
	// Scaled: dz2~ = -R^-1 (F dx2 + F0) R^-T. By skew symmetry of the
	// embedding, -(c^T dx2 + b^T dy2 + <F0, dz2>) = ||dz2~||^2, which is
	// free of the cancellation the direct sum suffers near the optimum.
	cp.applyF(tmp, nw.dx2)
	tmp.axpy(1, cp.f0)
	nw.dzs2 = cp.newCvec()
	scaleS(nw.dzs2, tmp, sc)
	nw.dzs2.scale(-1)
	nw.den2 = -nw.dzs2.dot(nw.dzs2)
	return nw, nil
}

func (nw *newton) solve(q cvec, bx, by []float64, bz cvec, bt, bk float64) (direction, error) {
	cp, sc := nw.cp, nw.sc
	n, p := cp.n, cp.p
	// In the scaled space: r~ = R^-1 bz R^-T + q, dz~ = r~ - R^-1 (F dx + F0 dtau) R^-T.
	rs := cp.newCvec()
	scaleS(rs, bz, sc)
	rs.axpy(1, q)
	tmp := cp.newCvec()
	unscaleZ(tmp, rs, sc)
	ft := make([]float64, n)
	cp.applyFT(ft, tmp)
	r1 := make([]float64, n)
	for i := range r1 {
		r1[i] = bx[i] + ft[i]
	}
	r2 := make([]float64, p)
	for i := range r2 {
		r2[i] = -by[i]
	}
	dx1, dy1, err := nw.kk.solve(r1, r2)
	if err != nil {
		return direction{}, err
	}
	cp.applyF(tmp, dx1)
	dzs1 := cp.newCvec()
	scaleS(dzs1, tmp, sc)
	dzs1.scale(-1)
	dzs1.axpy(1, rs)

	var d direction
	num := bt + bk/nw.tau + dot(cp.c, dx1) + dot(cp.bOrZero(), dy1) + dzs1.dot(nw.f0s)
	d.dtau = num / (nw.kap/nw.tau - nw.den2)
	d.dx = make([]float64, n)
	for i := range d.dx {
		d.dx[i] = dx1[i] + d.dtau*nw.dx2[i]
	}
	d.dy = make([]float64, p)
	for i := range d.dy {
		d.dy[i] = dy1[i] + d.dtau*nw.dy2[i]
	}
	d.dzs = dzs1
	d.dzs.axpy(d.dtau, nw.dzs2)
	d.dz = cp.newCvec()
	unscaleZ(d.dz, d.dzs, sc)
	d.ds = cp.newCvec()
	cp.applyF(d.ds, d.dx)
	d.ds.axpy(d.dtau, cp.f0)
	d.ds.axpy(-1, bz)
	d.dkap = (bk - nw.kap*d.dtau) / nw.tau
	d.dss = cp.newCvec()
	scaleS(d.dss, d.ds, sc)
	return d, nil
}

// solveRefined solves and then applies iterative refinement on the full
// (unreduced) system. Late in the iteration W^-1 has entries of order 1/mu
// and the reduced solve loses digits; refinement restores the linear
// residuals, which the embedding needs to shrink exactly by 1-alpha.
func (nw *newton) solveRefined(q cvec, bx, by []float64, bz cvec, bt, bk float64) (direction, error) {
	d, err := nw.solve(q, bx, by, bz, bt, bk)
	if err != nil {
		return d, err
	}
	// Refine only while it pays: stop at rounding level relative to the
	// right-hand side, or when a round no longer halves the residual.
	floor := 1e-14 * math.Max(1, newtonResidual{x: bx, y: by, z: bz, q: q, t: bt, k: bk}.size())
	prev := math.Inf(1)
	for round := 0; round < 3; round++ {
		r := nw.residual(d, q, bx, by, bz, bt, bk)
		size := r.size()
		if size <= floor || size >= 0.5*prev {
			break
		}
		prev = size
		c, err := nw.solve(r.q, r.x, r.y, r.z, r.t, r.k)
		if err != nil {
			break // keep what we have
		}
		d.add(c)
	}
	return d, nil
}

type newtonResidual struct {
	x, y []float64
	z, q cvec
	t, k float64
}

func (r newtonResidual) size() float64 {
	return math.Max(math.Max(norm2(r.x), norm2(r.y)), math.Max(math.Max(r.z.norm(), r.q.norm()), math.Max(math.Abs(r.t), math.Abs(r.k))))
}

func (d *direction) add(c direction) {
	for i := range d.dx {
		d.dx[i] += c.dx[i]
	}
	for i := range d.dy {
		d.dy[i] += c.dy[i]
	}
	d.ds.axpy(1, c.ds)
	d.dz.axpy(1, c.dz)
	d.dss.axpy(1, c.dss)
	d.dzs.axpy(1, c.dzs)
	d.dtau += c.dtau
	d.dkap += c.dkap
}

// residual returns the right-hand side minus the left-hand side of the
// Newton equations at d.
func (nw *newton) residual(d direction, q cvec, bx, by []float64, bz cvec, bt, bk float64) newtonResidual {
	cp := nw.cp
	n, p := cp.n, cp.p
	ex := make([]float64, n)
	cp.applyFT(ex, d.dz)
	for i := range ex {
		ex[i] = bx[i] + ex[i] - cp.c[i]*d.dtau
	}
	ey := make([]float64, p)
	if p > 0 {
		var aty, ax mat.VecDense
		aty.MulVec(cp.a.T(), mat.NewVecDense(p, d.dy))
		ax.MulVec(cp.a, mat.NewVecDense(n, d.dx))
		for i := range ex {
			ex[i] -= aty.AtVec(i)
		}
		for i := range ey {
			ey[i] = by[i] + ax.AtVec(i) - cp.b[i]*d.dtau
		}
	}
	ez := cp.newCvec()
	cp.applyF(ez, d.dx)
	ez.axpy(d.dtau, cp.f0)
	ez.axpy(-1, d.ds)
	ez.scale(-1)
	ez.axpy(1, bz)
	et := bt + dot(cp.c, d.dx) + dot(cp.bOrZero(), d.dy) + d.dz.dot(cp.f0) + d.dkap
	eq := q.clone()
	eq.axpy(-1, d.dzs)
	eq.axpy(-1, d.dss)
	ek := bk - nw.kap*d.dtau - nw.tau*d.dkap
	return newtonResidual{x: ex, y: ey, z: ez, q: eq, t: et, k: ek}
}
