package sdp

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// cvec is a point of the cone space: linear rows first, then one dense
// symmetric matrix per LMI block.
type cvec struct {
	lp  []float64
	blk []*mat.SymDense
}

func newCvec(nlp int, sizes []int) cvec {
	v := cvec{lp: make([]float64, nlp), blk: make([]*mat.SymDense, len(sizes))}
	for k, n := range sizes {
		v.blk[k] = mat.NewSymDense(n, nil)
	}
	return v
}

func (v cvec) clone() cvec {
	w := cvec{lp: append([]float64(nil), v.lp...), blk: make([]*mat.SymDense, len(v.blk))}
	for k, b := range v.blk {
		w.blk[k] = mat.NewSymDense(b.SymmetricDim(), nil)
		w.blk[k].CopySym(b)
	}
	return w
}

func (v cvec) zero() {
	for i := range v.lp {
		v.lp[i] = 0
	}
	for _, b := range v.blk {
		raw := b.RawSymmetric().Data
		for i := range raw {
			raw[i] = 0
		}
	}
}

// axpy sets v += a*w.
func (v cvec) axpy(a float64, w cvec) {
	for i := range v.lp {
		v.lp[i] += a * w.lp[i]
	}
	for k, b := range v.blk {
		n := b.SymmetricDim()
		rb, rw := b.RawSymmetric(), w.blk[k].RawSymmetric()
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				rb.Data[i*rb.Stride+j] += a * rw.Data[i*rw.Stride+j]
			}
		}
	}
}

// dot returns the trace inner product of v and w.
func (v cvec) dot(w cvec) float64 {
	var t float64
	for i := range v.lp {
		t += v.lp[i] * w.lp[i]
	}
	for k, b := range v.blk {
		t += symDot(b, w.blk[k])
	}
	return t
}

func (v cvec) norm() float64 { return math.Sqrt(v.dot(v)) }

// symDot returns tr(a b) for symmetric a, b.
func symDot(a, b *mat.SymDense) float64 {
	n := a.SymmetricDim()
	ra, rb := a.RawSymmetric(), b.RawSymmetric()
	var t float64
	for i := 0; i < n; i++ {
		t += ra.Data[i*ra.Stride+i] * rb.Data[i*rb.Stride+i]
		var off float64
		for j := i + 1; j < n; j++ {
			off += ra.Data[i*ra.Stride+j] * rb.Data[i*rb.Stride+j]
		}
		t += 2 * off
	}
	return t
}

// blockScaling is the Nesterov–Todd scaling of one LMI block: with
// W = R R^T the NT point (W Z W = S),
//
//	R^T Z R = R^-1 S R^-T = diag(lambda).
type blockScaling struct {
	r, rinv *mat.Dense    // R and R^-1
	v       *mat.SymDense // W^-1 = R^-T R^-1, used by the Schur complement
	lambda  []float64
}

// lpScaling is the NT scaling of the linear rows: w = sqrt(s/z).
type lpScaling struct {
	w, lambda []float64
}

type scaling struct {
	lp  lpScaling
	blk []blockScaling
}

var errNotInterior = errors.New("sdp: iterate left the interior of the cone")

// ntScaling computes the NT scaling at the interior point (s, z), following
// the Cholesky–SVD construction of Vandenberghe (2010).
func ntScaling(s, z cvec) (scaling, error) {
	var sc scaling
	sc.lp.w = make([]float64, len(s.lp))
	sc.lp.lambda = make([]float64, len(s.lp))
	for i := range s.lp {
		if !(s.lp[i] > 0 && z.lp[i] > 0) {
			return sc, errNotInterior
		}
		sc.lp.w[i] = math.Sqrt(s.lp[i] / z.lp[i])
		sc.lp.lambda[i] = math.Sqrt(s.lp[i] * z.lp[i])
	}
	sc.blk = make([]blockScaling, len(s.blk))
	for k := range s.blk {
		b, err := ntBlock(s.blk[k], z.blk[k])
		if err != nil {
			return sc, err
		}
		sc.blk[k] = b
	}
	return sc, nil
}

func ntBlock(s, z *mat.SymDense) (blockScaling, error) {
	n := s.SymmetricDim()
	var cs, cz mat.Cholesky
	if !cs.Factorize(s) || !cz.Factorize(z) {
		return blockScaling{}, errNotInterior
	}
	var ls, lz mat.TriDense
	cs.LTo(&ls)
	cz.LTo(&lz)
	var p mat.Dense
	p.Mul(lz.T(), &ls)
	var svd mat.SVD
	if !svd.Factorize(&p, mat.SVDFull) {
		return blockScaling{}, errNotInterior
	}
	lam := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	for _, l := range lam {
		if !(l > 0) || math.IsInf(l, 0) {
			return blockScaling{}, errNotInterior
		}
	}
	// R = Ls V diag(lambda)^-1/2, R^-1 = diag(lambda)^-1/2 U^T Lz^T.
	r := mat.NewDense(n, n, nil)
	r.Mul(&ls, &v)
	rinvT := mat.NewDense(n, n, nil)
	rinvT.Mul(&lz, &u)
	for j := 0; j < n; j++ {
		f := 1 / math.Sqrt(lam[j])
		for i := 0; i < n; i++ {
			r.Set(i, j, r.At(i, j)*f)
			rinvT.Set(i, j, rinvT.At(i, j)*f)
		}
	}
	rinv := mat.DenseCopyOf(rinvT.T())
	vv := mat.NewSymDense(n, nil)
	vv.SymOuterK(1, rinvT)
	return blockScaling{r: r, rinv: rinv, v: vv, lambda: lam}, nil
}

// maxStep returns the largest alpha <= limit with lambda + alpha*d ⪰ 0 in the
// scaled space of one block: d is the scaled direction, lambda diagonal.
func maxStepBlock(lambda []float64, d *mat.SymDense, limit float64) float64 {
	n := len(lambda)
	t := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			t.SetSym(i, j, d.At(i, j)/math.Sqrt(lambda[i]*lambda[j]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(t, false) {
		return 0
	}
	vals := es.Values(nil)
	emin := vals[0]
	for _, e := range vals {
		emin = math.Min(emin, e)
	}
	if emin >= 0 {
		return limit
	}
	return math.Min(limit, -1/emin)
}

// maxStepLP returns the largest alpha <= limit with v + alpha*d >= 0.
func maxStepLP(v, d []float64, limit float64) float64 {
	a := limit
	for i := range v {
		if d[i] < 0 {
			a = math.Min(a, -v[i]/d[i])
		}
	}
	return a
}

func (v cvec) scale(a float64) {
	for i := range v.lp {
		v.lp[i] *= a
	}
	for _, b := range v.blk {
		b.ScaleSym(a, b)
	}
}
