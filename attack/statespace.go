package attack

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// The linear-time path. When the adversary's prior and every component of
// the noise are Matérn kernels of half-integer smoothness, the release of
// one dimension is the observation, with white noise, of a sum of
// independent linear SDEs (gp.StateSpace): a state-space model of
// dimension d = sum of (order + 1) over the prior and the noise
// components. The Kalman filter computes the innovations of the release,
// which are L^-1 z for the Cholesky factor L of M = Sigma + SigmaG taken
// in time order, and their variances, whose logarithms sum to log|M|: the
// restricted likelihood of solveGLS follows without forming M, in
// O(n d^2) time and O(d^2) memory. The posterior mean and variance come
// from the modified Bryson-Frazier form of the RTS smoother (Bierman,
// Factorization Methods for Discrete Sequential Estimation, 1977), which
// needs the filter's gains and predicted covariances backwards in time:
// they are recomputed segment by segment from checkpoints of the filter,
// so memory stays O(sqrt(n) d^2).
//
// Every component is kept in whitened coordinates (stationary covariance
// I, gp.StateModel.FloatWhitenedTransition), so the filter's covariance
// is well scaled whatever the components' variances; the process enters
// the observation through sqrt(variance) times its first coordinate.

// ssBlock is one independent component of the state.
type ssBlock struct {
	m        *gp.StateModel
	off, dim int
	coef     float64 // the component is coef times the block's first coordinate
	// a and q are the current step's transition and process noise
	// (dim x dim, row-major), for the step dt.
	a, q []float64
	dt   float64
	// cache holds [A | Q] by step (GPS steps repeat), shared by the models
	// of one likelihood for a noise component, which never changes.
	cache map[float64][]float64
}

// maxCachedSteps bounds a block's cache of transitions.
const maxCachedSteps = 4096

// stateSpaceOf is gp.StateSpace; a test replaces it to check that a wrong
// transition is caught.
var stateSpaceOf = gp.StateSpace

// ssModel is prior plus noise of one dimension in state-space form: the
// prior is block 0, the noise components follow, and white is the
// variance of the white observation noise.
type ssModel struct {
	blocks []*ssBlock
	d      int
	white  float64
	// hOff and hCoef are the observation row h: coefficient hCoef[b] at
	// coordinate hOff[b] (the first of each block).
	hOff  []int
	hCoef []float64
}

// newSSModel builds the model of the unit-variance prior kernel (scaled
// by sqrt(s2) in the observation) and the noise components. caches, if
// not nil, holds a transition cache per noise component.
func newSSModel(prior gp.Kernel, s2 float64, noise []gp.Kernel, white float64, caches []map[float64][]float64) (*ssModel, error) {
	m := &ssModel{white: white}
	add := func(k gp.Kernel, coef float64) error {
		sm, err := stateSpaceOf(k)
		if err != nil {
			return err
		}
		b := &ssBlock{m: sm, off: m.d, dim: sm.StateDim(), coef: coef, dt: math.NaN(), cache: map[float64][]float64{}}
		if nb := len(m.blocks); nb > 0 && caches != nil {
			b.cache = caches[nb-1]
		}
		m.blocks = append(m.blocks, b)
		m.hOff = append(m.hOff, m.d)
		m.hCoef = append(m.hCoef, coef)
		m.d += b.dim
		return nil
	}
	if err := add(prior, 1); err != nil {
		return nil, err
	}
	for _, k := range noise {
		sm, err := stateSpaceOf(k)
		if err != nil {
			return nil, err
		}
		if err := add(k, math.Sqrt(sm.MarginalVariance())); err != nil {
			return nil, err
		}
	}
	m.setScale(s2)
	return m, nil
}

// setScale sets the prior's variance.
func (m *ssModel) setScale(s2 float64) {
	m.blocks[0].coef = math.Sqrt(s2)
	m.hCoef[0] = m.blocks[0].coef
}

// step sets every block's transition for a step of dt >= 0 seconds,
// reusing the previous one when dt repeats (regular sampling).
func (m *ssModel) step(dt float64) {
	for _, b := range m.blocks {
		if dt == b.dt {
			continue
		}
		b.dt = dt
		n := b.dim
		if c, ok := b.cache[dt]; ok {
			b.a, b.q = c[:n*n], c[n*n:]
			continue
		}
		c := make([]float64, 2*n*n)
		b.a, b.q = c[:n*n], c[n*n:]
		b.m.FloatWhitenedTransition(b.a, dt)
		// Q = I - A A^T: the whitened state has identity covariance.
		for i := range n {
			for j := i; j < n; j++ {
				s := 0.0
				for k := range n {
					s -= b.a[i*n+k] * b.a[j*n+k]
				}
				if i == j {
					s++
				}
				b.q[i*n+j], b.q[j*n+i] = s, s
			}
		}
		if len(b.cache) < maxCachedSteps {
			b.cache[dt] = c
		}
	}
}

// filterState is the Kalman filter's state for several data vectors that
// share the model (and so the covariance and gains).
type filterState struct {
	m     *ssModel
	p     []float64   // d x d covariance, row-major
	means [][]float64 // one predicted or filtered mean per data vector
	ph    []float64   // P h
	tmp   []float64
}

func newFilterState(m *ssModel, vectors int) *filterState {
	f := &filterState{m: m, p: make([]float64, m.d*m.d), ph: make([]float64, m.d), tmp: make([]float64, 8)}
	for i := range m.d {
		f.p[i*m.d+i] = 1 // the stationary covariance of the whitened state
	}
	f.means = make([][]float64, vectors)
	for v := range f.means {
		f.means[v] = make([]float64, m.d)
	}
	return f
}

// save and load copy the covariance and means (checkpoints).
func (f *filterState) save() []float64 {
	out := append([]float64(nil), f.p...)
	for _, mu := range f.means {
		out = append(out, mu...)
	}
	return out
}

func (f *filterState) load(c []float64) {
	d := f.m.d
	copy(f.p, c[:d*d])
	for v := range f.means {
		copy(f.means[v], c[d*d+v*d:d*d+(v+1)*d])
	}
}

// predict moves covariance and means over the step set by m.step:
// P <- A P A^T + Q, mu <- A mu, with A block-diagonal.
func (f *filterState) predict() {
	m, t := f.m, f.tmp
	m.sandwich(f.p, t, false)
	for _, mu := range f.means {
		m.apply(mu, t, false)
	}
}

// sandwich sets P <- A P A^T + Q for a symmetric d x d P, or P <- A^T P A
// if trans (the smoother's adjoint). Only the upper triangle's blocks are
// transformed, then mirrored: P need only be valid on the upper triangle
// and the diagonal blocks. Blocks of one and two coordinates (Matérn 1/2
// and 3/2, most of a noise envelope) have their own loops.
func (m *ssModel) sandwich(p, t []float64, trans bool) {
	d := m.d
	// entries returns A's entries (A^T's if trans).
	entries := func(b *ssBlock) (a00, a01, a10, a11 float64) {
		if trans {
			return b.a[0], b.a[2], b.a[1], b.a[3]
		}
		return b.a[0], b.a[1], b.a[2], b.a[3]
	}
	at := func(b *ssBlock, r, k int) float64 {
		if trans {
			return b.a[k*b.dim+r]
		}
		return b.a[r*b.dim+k]
	}
	// Rows: P <- A P, on the columns of this block and after.
	for _, b := range m.blocks {
		o, n := b.off, b.dim
		switch n {
		case 1:
			a := b.a[0]
			row := p[o*d+o : o*d+d]
			for c := range row {
				row[c] *= a
			}
		case 2:
			a00, a01, a10, a11 := entries(b)
			r0 := p[o*d+o : o*d+d]
			r1 := p[(o+1)*d+o : (o+1)*d+d]
			r1 = r1[:len(r0)]
			for c, x0 := range r0 {
				x1 := r1[c]
				r0[c] = a00*x0 + a01*x1
				r1[c] = a10*x0 + a11*x1
			}
		default:
			for c := o; c < d; c++ {
				for k := range n {
					t[k] = p[(o+k)*d+c]
				}
				for r := range n {
					s := 0.0
					for k := range n {
						s += at(b, r, k) * t[k]
					}
					p[(o+r)*d+c] = s
				}
			}
		}
	}
	// Columns: P <- P A^T, on the rows of this block and before.
	for _, b := range m.blocks {
		o, n := b.off, b.dim
		switch n {
		case 1:
			a := b.a[0]
			for r := 0; r <= o; r++ {
				p[r*d+o] *= a
			}
		case 2:
			a00, a01, a10, a11 := entries(b)
			for r := 0; r < o+2; r++ {
				x := p[r*d+o : r*d+o+2]
				x0, x1 := x[0], x[1]
				x[0] = x0*a00 + x1*a01
				x[1] = x0*a10 + x1*a11
			}
		default:
			for r := 0; r < o+n; r++ {
				row := p[r*d+o : r*d+o+n]
				copy(t, row)
				for c := range n {
					s := 0.0
					for k := range n {
						s += t[k] * at(b, c, k)
					}
					row[c] = s
				}
			}
		}
		if !trans {
			for i := range n {
				for j := range n {
					p[(o+i)*d+o+j] += b.q[i*n+j]
				}
			}
		}
	}
	for r := range d {
		for c := r + 1; c < d; c++ {
			p[c*d+r] = p[r*d+c]
		}
	}
}

// apply sets x <- A x, or A^T x if trans (t has room for a block).
func (m *ssModel) apply(x, t []float64, trans bool) {
	for _, b := range m.blocks {
		o, n := b.off, b.dim
		if n == 1 {
			x[o] *= b.a[0]
			continue
		}
		copy(t, x[o:o+n])
		for r := range n {
			s := 0.0
			for k := range n {
				if trans {
					s += b.a[k*n+r] * t[k]
				} else {
					s += b.a[r*n+k] * t[k]
				}
			}
			x[o+r] = s
		}
	}
}

// update conditions on the observations y (one per data vector) and
// returns the innovation variance S; e receives the innovations. f.ph
// keeps P h of the predicted covariance.
func (f *filterState) update(y, e []float64) (float64, error) {
	m, d, p, ph := f.m, f.m.d, f.p, f.ph
	hOff, hCoef := m.hOff, m.hCoef[:len(m.hOff)]
	for r := range d {
		s := 0.0
		row := p[r*d : r*d+d]
		for b, o := range hOff {
			s += hCoef[b] * row[o]
		}
		ph[r] = s
	}
	s := m.white
	for b, o := range hOff {
		s += hCoef[b] * ph[o]
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("%w: innovation variance %v", errNotPD, s)
	}
	for v, mu := range f.means {
		hm := 0.0
		for b, o := range hOff {
			hm += hCoef[b] * mu[o]
		}
		e[v] = y[v] - hm
		g := e[v] / s
		for r := range d {
			mu[r] += ph[r] * g
		}
	}
	// P <- P - ph ph^T / S on the entries predict reads (the upper
	// triangle and the diagonal blocks; predict mirrors the rest).
	for _, b := range m.blocks {
		for r := b.off; r < b.off+b.dim; r++ {
			g := ph[r] / s
			row := p[r*d+b.off : r*d+d]
			for c, x := range ph[b.off:] {
				row[c] -= g * x
			}
		}
	}
	return s, nil
}

// innovations runs the filter over the data vectors ys at sorted times ts
// and returns log|M| and the whitened innovations w[v][k] = e/sqrt(S),
// that is L^-1 y_v.
func (m *ssModel) innovations(ts []float64, ys [][]float64) (float64, [][]float64, error) {
	n := len(ts)
	f := newFilterState(m, len(ys))
	w := make([][]float64, len(ys))
	for v := range w {
		w[v] = make([]float64, n)
	}
	y := make([]float64, len(ys))
	e := make([]float64, len(ys))
	logDet := 0.0
	for k := range n {
		if k > 0 {
			m.step(ts[k] - ts[k-1])
			f.predict()
		}
		for v := range ys {
			y[v] = ys[v][k]
		}
		s, err := f.update(y, e)
		if err != nil {
			return 0, nil, err
		}
		logDet += math.Log(s)
		rs := 1 / math.Sqrt(s)
		for v := range ys {
			w[v][k] = e[v] * rs
		}
	}
	return logDet, w, nil
}

// smoothed is the smoother's output for the prior's process f = sqrt(s2)
// times the first coordinate of block 0: its posterior mean E[f_k | y_v]
// for each data vector and its posterior variance Var(f_k | y).
type smoothed struct {
	mean     [][]float64
	variance []float64
}

// smooth runs the filter and the modified Bryson-Frazier smoother over the
// data vectors ys at sorted times ts. segment is the checkpoint spacing
// (zero: about sqrt(n)).
func (m *ssModel) smooth(ts []float64, ys [][]float64, segment int) (*smoothed, error) {
	n, d, nv := len(ts), m.d, len(ys)
	if segment <= 0 {
		segment = max(16, int(math.Sqrt(float64(n))))
	}
	// Forward: checkpoints of the predicted state at every segment start.
	f := newFilterState(m, nv)
	y := make([]float64, nv)
	e := make([]float64, nv)
	var ckpt [][]float64
	for k := range n {
		if k > 0 {
			m.step(ts[k] - ts[k-1])
			f.predict()
		}
		if k%segment == 0 {
			ckpt = append(ckpt, f.save())
		}
		for v := range ys {
			y[v] = ys[v][k]
		}
		if _, err := f.update(y, e); err != nil {
			return nil, err
		}
	}
	out := &smoothed{variance: make([]float64, n), mean: make([][]float64, nv)}
	for v := range out.mean {
		out.mean[v] = make([]float64, n)
	}
	// Per step of a segment: the gain K = P h / S, the predicted
	// covariance's first row, S, the innovations over S and the predicted
	// first coordinates.
	gain := make([]float64, segment*d)
	prow := make([]float64, segment*d)
	sv := make([]float64, segment)
	es := make([]float64, segment*nv)
	x0 := make([]float64, segment*nv)
	// Adjoints: lam[v] (d) per data vector and Lam (d x d).
	lam := make([][]float64, nv)
	for v := range lam {
		lam[v] = make([]float64, d)
	}
	big := make([]float64, d*d)
	tmpd := make([]float64, d)
	c0 := m.blocks[0].coef
	for s := len(ckpt) - 1; s >= 0; s-- {
		k0 := s * segment
		k1 := min(k0+segment, n)
		f.load(ckpt[s])
		for k := k0; k < k1; k++ {
			if k > k0 {
				m.step(ts[k] - ts[k-1])
				f.predict()
			}
			i := k - k0
			copy(prow[i*d:(i+1)*d], f.p[:d])
			for v := range ys {
				y[v] = ys[v][k]
				x0[i*nv+v] = f.means[v][0]
			}
			sk, err := f.update(y, e)
			if err != nil {
				return nil, err
			}
			sv[i] = sk
			for r := range d {
				gain[i*d+r] = f.ph[r] / sk
			}
			for v := range ys {
				es[i*nv+v] = e[v] / sk
			}
		}
		for k := k1 - 1; k >= k0; k-- {
			i := k - k0
			kg := gain[i*d : (i+1)*d]
			pr := prow[i*d : (i+1)*d]
			// lam~ = lam^ - h (K.lam^ + e/S).
			for v := range ys {
				l := lam[v]
				c := es[i*nv+v]
				for r := range d {
					c += kg[r] * l[r]
				}
				for _, b := range m.blocks {
					l[b.off] -= b.coef * c
				}
				// E[x_k | y] = x_p - P_p lam~: its first coordinate.
				dot := 0.0
				for r := range d {
					dot += pr[r] * l[r]
				}
				out.mean[v][k] = c0 * (x0[i*nv+v] - dot)
			}
			// Lam~ = Lam^ - h u^T - u h^T + (K.u + 1/S) h h^T, u = Lam^ K.
			for r := range d {
				t := 0.0
				row := big[r*d : r*d+d]
				for c := range d {
					t += row[c] * kg[c]
				}
				tmpd[r] = t
			}
			cc := 1 / sv[i]
			for r := range d {
				cc += kg[r] * tmpd[r]
			}
			for _, b := range m.blocks {
				row := big[b.off*d : b.off*d+d]
				for c := range d {
					row[c] -= b.coef * tmpd[c]
				}
			}
			for r := range d {
				row := big[r*d : r*d+d]
				for _, b := range m.blocks {
					row[b.off] -= tmpd[r] * b.coef
				}
			}
			for _, b1 := range m.blocks {
				for _, b2 := range m.blocks {
					big[b1.off*d+b2.off] += cc * b1.coef * b2.coef
				}
			}
			// Var(x_k | y) = P_p - P_p Lam~ P_p: its first diagonal entry.
			q := 0.0
			for r := range d {
				t := 0.0
				row := big[r*d : r*d+d]
				for c := range d {
					t += row[c] * pr[c]
				}
				q += pr[r] * t
			}
			out.variance[k] = c0 * c0 * math.Max(pr[0]-q, 0)
			if k == 0 {
				break
			}
			// Back over the step into k: lam^ = A^T lam~, Lam^ = A^T Lam~ A.
			m.step(ts[k] - ts[k-1])
			for v := range lam {
				m.apply(lam[v], tmpd, true)
			}
			m.sandwich(big, tmpd, true)
		}
	}
	return out, nil
}

// ssLik is the restricted likelihood and the posterior on the linear-time
// path.
type ssLik struct {
	ts, z []float64
	d     *design
	fam   prior.Family
	noise []gp.Kernel
	white float64
	ys    [][]float64 // z, then the design's columns
	// caches are the noise components' transitions by step.
	caches []map[float64][]float64
}

func newSSLik(ts, z []float64, d *design, fam prior.Family, g *noiseLaw) *ssLik {
	l := &ssLik{ts: ts, z: z, d: d, fam: fam, noise: g.terms, white: g.white, ys: [][]float64{z}}
	for range g.terms {
		l.caches = append(l.caches, map[float64][]float64{})
	}
	for j := range d.p {
		l.ys = append(l.ys, mat.Col(nil, j, d.h))
	}
	return l
}

// model returns the state-space model at lengthscale ls (unit variance).
func (l *ssLik) model(ls float64) (*ssModel, error) {
	k, err := l.fam.Member(1, ls)
	if err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	return newSSModel(k, 1, l.noise, l.white, l.caches)
}

func (l *ssLik) at(ls float64) (func(s2 float64) (float64, error), error) {
	m, err := l.model(ls)
	if err != nil {
		return nil, err
	}
	return func(s2 float64) (float64, error) {
		g, err := l.gls(m, s2)
		if err != nil {
			return 0, err
		}
		return g.logLik, nil
	}, nil
}

// gls is solveGLS by the Kalman filter: the innovations whiten the
// release and the design.
func (l *ssLik) gls(m *ssModel, s2 float64) (*gls, error) {
	m.setScale(s2)
	logDet, w, err := m.innovations(l.ts, l.ys)
	if err != nil {
		return nil, err
	}
	var wh *mat.Dense
	if p := l.d.p; p > 0 {
		n := len(l.ts)
		wh = mat.NewDense(n, p, nil)
		for j := range p {
			wh.SetCol(j, w[1+j])
		}
	}
	return glsWhitened(w[0], wh, logDet, l.d)
}

// posterior is krige on the linear-time path: the GLS mean, then the
// smoother on the residual z - H beta^ and on the design's columns (for
// the mean's share of the variance, u_i = H_i - [Sigma M^-1 H]_i).
func (l *ssLik) posterior(ls, s2 float64) (*posterior, error) {
	m, err := l.model(ls)
	if err != nil {
		return nil, err
	}
	g, err := l.gls(m, s2)
	if err != nil {
		return nil, err
	}
	n, p := len(l.ts), l.d.p
	hb := make([]float64, n)
	r := make([]float64, n)
	for i := range n {
		for j := range p {
			hb[i] += l.d.h.At(i, j) * g.beta[j]
		}
		r[i] = l.z[i] - hb[i]
	}
	sm, err := m.smooth(l.ts, append([][]float64{r}, l.ys[1:]...), 0)
	if err != nil {
		return nil, err
	}
	out := &posterior{mean: make([]float64, n), variance: sm.variance, g: g}
	for i := range n {
		out.mean[i] = hb[i] + sm.mean[0][i]
	}
	if p > 0 {
		addMeanVariance(out.variance, func(i, j int) float64 { return l.d.h.At(i, j) - sm.mean[1+j][i] }, g.r, p)
	}
	return out, nil
}
