package attack

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
)

// design is the mean model of one dimension: the columns of H (nil for a
// known, zero mean), with the time centring and scaling of the trend
// column, and log|H^T H| for the restricted likelihood.
type design struct {
	h         *mat.Dense
	p         int
	tbar, tsc float64 // trend column (t - tbar)/tsc
	logDetHH  float64
}

func newDesign(ts []float64, m MeanModel) (*design, error) {
	n := len(ts)
	d := &design{}
	switch m {
	case MeanKnown:
		return d, nil
	case MeanConstant:
		d.p = 1
	case MeanLinear:
		d.p = 2
	default:
		return nil, fmt.Errorf("attack: unknown mean model %d", int(m))
	}
	if n <= d.p {
		return nil, fmt.Errorf("attack: a %s mean needs more than %d points, got %d", m, d.p, n)
	}
	d.h = mat.NewDense(n, d.p, nil)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range ts {
		d.tbar += t / float64(n)
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	d.tsc = (hi - lo) / 2
	for i, t := range ts {
		d.h.Set(i, 0, 1)
		if d.p == 2 {
			if !(d.tsc > 0) {
				return nil, errors.New("attack: a linear trend needs at least two distinct times")
			}
			d.h.Set(i, 1, (t-d.tbar)/d.tsc)
		}
	}
	var qr mat.QR
	qr.Factorize(d.h)
	var r mat.Dense
	qr.RTo(&r)
	for j := range d.p {
		d.logDetHH += 2 * math.Log(math.Abs(r.At(j, j)))
	}
	return d, nil
}

// coefficients converts beta (in the scaled design) and its covariance to
// natural units: the level at tbar (metres) and the slope (metres per
// second), with standard errors.
func (d *design) coefficients(beta []float64, cov *mat.SymDense) (coef, se []float64) {
	for j := range d.p {
		s := 1.0
		if j == 1 {
			s = d.tsc
		}
		coef = append(coef, beta[j]/s)
		se = append(se, math.Sqrt(math.Max(cov.At(j, j), 0))/s)
	}
	return coef, se
}

// gls is the universal-kriging solve of one dimension for one prior
// covariance: the factor of M = Sigma + SigmaG, the GLS mean and the
// restricted (or, for a known mean, ordinary) log likelihood.
type gls struct {
	f      *gp.Factor
	beta   []float64 // GLS coefficients in the scaled design
	r      *mat.Dense
	wh     *mat.Dense // L^-1 H
	res    []float64  // L^-1 (z - H beta^)
	logLik float64
}

// errNotPD marks a likelihood evaluation whose covariance could not be
// factorised; a search skips such points.
var errNotPD = errors.New("attack: covariance not positive definite")

// solveGLS factorises m (Sigma + SigmaG) and computes the GLS estimate and
// the likelihood of z under the design. m is not modified.
func solveGLS(m mat.Symmetric, z []float64, d *design) (*gls, error) {
	n := len(z)
	f, err := gp.Factorize(m, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotPD, err)
	}
	// Whiten [z | H] with one triangular solve.
	b := mat.NewDense(n, 1+d.p, nil)
	for i := range n {
		b.Set(i, 0, z[i])
		for j := range d.p {
			b.Set(i, 1+j, d.h.At(i, j))
		}
	}
	var w mat.Dense
	if err := f.HalfSolveTo(&w, b); err != nil {
		return nil, fmt.Errorf("attack: whitening: %w", err)
	}
	var wh mat.Matrix
	if d.p > 0 {
		wh = w.Slice(0, n, 1, 1+d.p)
	}
	g, err := glsWhitened(mat.Col(nil, 0, &w), wh, f.LogDet(), d)
	if err != nil {
		return nil, err
	}
	g.f = f
	return g, nil
}

// glsWhitened computes the GLS estimate and the restricted likelihood from
// the whitened release res = L^-1 z (overwritten with the whitened
// residual L^-1 (z - H beta^)), the whitened design wh = L^-1 H (n x p; nil
// or ignored for a known mean) and log|M|, for M = L L^T.
func glsWhitened(res []float64, wh mat.Matrix, logDetM float64, d *design) (*gls, error) {
	n := len(res)
	g := &gls{}
	logDetR := 0.0
	if d.p > 0 {
		g.wh = mat.DenseCopyOf(wh)
		var qr mat.QR
		qr.Factorize(g.wh)
		g.r = &mat.Dense{}
		qr.RTo(g.r)
		for j := range d.p {
			rjj := math.Abs(g.r.At(j, j))
			// A whitened design column with no component outside the
			// others: the mean is not identifiable from the release.
			if !(rjj > 1e-12*mat.Norm(g.wh.ColView(j), 2)) {
				return nil, fmt.Errorf("attack: the %s mean is not identifiable (whitened design is rank deficient)", meanNames[d.p])
			}
			logDetR += 2 * math.Log(rjj)
		}
		var beta mat.Dense
		if err := qr.SolveTo(&beta, false, mat.NewVecDense(n, res)); err != nil {
			var c mat.Condition
			if !errors.As(err, &c) {
				return nil, fmt.Errorf("attack: GLS: %w", err)
			}
		}
		g.beta = mat.Col(nil, 0, &beta)
		for i := range n {
			for j := range d.p {
				res[i] -= g.wh.At(i, j) * g.beta[j]
			}
		}
	}
	g.res = res
	quad := 0.0
	for _, v := range res {
		quad += v * v
	}
	g.logLik = -0.5 * (float64(n-d.p)*math.Log(2*math.Pi) + logDetM + logDetR - d.logDetHH + quad)
	if math.IsNaN(g.logLik) || math.IsInf(g.logLik, 0) {
		return nil, fmt.Errorf("%w: log likelihood %v", errNotPD, g.logLik)
	}
	return g, nil
}

var meanNames = map[int]string{0: "known", 1: "constant", 2: "linear"}

// betaCov returns Cov(beta^) = (R^T R)^-1 in the scaled design.
func (g *gls) betaCov(p int) *mat.SymDense {
	cov := mat.NewSymDense(p, nil)
	// R^-1 by back substitution on the p x p triangle (p <= 2).
	rinv := mat.NewDense(p, p, nil)
	for j := p - 1; j >= 0; j-- {
		rinv.Set(j, j, 1/g.r.At(j, j))
		for i := j - 1; i >= 0; i-- {
			s := 0.0
			for k := i + 1; k <= j; k++ {
				s += g.r.At(i, k) * rinv.At(k, j)
			}
			rinv.Set(i, j, -s/g.r.At(i, i))
		}
	}
	for i := range p {
		for j := i; j < p; j++ {
			s := 0.0
			for k := range p {
				s += rinv.At(i, k) * rinv.At(j, k)
			}
			cov.SetSym(i, j, s)
		}
	}
	return cov
}

// posterior is the universal-kriging reconstruction of one dimension given
// its prior covariance: the posterior mean and the posterior variance of
// every point, including the mean-estimation term, with the GLS fit.
type posterior struct {
	mean, variance []float64
	g              *gls
	jitter         float64
}

func krige(sigma, sigmaG mat.Symmetric, z []float64, d *design) (*posterior, error) {
	n := len(z)
	post, err := cip.NewPosterior(sigma, sigmaG)
	if err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	var m mat.SymDense
	m.AddSym(sigma, sigmaG)
	g, err := solveGLS(&m, z, d)
	if err != nil {
		return nil, err
	}
	mu := make([]float64, n)
	for i := range n {
		for j := range d.p {
			mu[i] += d.h.At(i, j) * g.beta[j]
		}
	}
	xhat, err := post.Mean(mu, z)
	if err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	out := &posterior{mean: xhat, variance: make([]float64, n), g: g, jitter: math.Max(post.Jitter, g.f.Jitter())}
	for i := range n {
		out.variance[i] = math.Max(post.Cov.At(i, i), 0)
	}
	if d.p == 0 {
		return out, nil
	}
	// U = SigmaG' M^-1 H, SigmaG' = SigmaG + jitter I (the jitter is noise
	// in cip.Posterior too); M^-1 H = L^-T (L^-1 H).
	var mh, u mat.Dense
	if err := g.f.SolveTo(&mh, d.h); err != nil {
		return nil, fmt.Errorf("attack: %w", err)
	}
	u.Mul(sigmaG, &mh)
	if j := g.f.Jitter(); j > 0 {
		u.Add(&u, scaledDense(j, &mh))
	}
	addMeanVariance(out.variance, u.At, g.r, d.p)
	return out, nil
}

// addMeanVariance adds to variance[i] what estimating the mean costs,
// u_i^T (R^T R)^-1 u_i = |R^-T u_i|^2 (forward substitution with R^T), for
// u_i = row i of SigmaG M^-1 H given by u(i, j).
func addMeanVariance(variance []float64, u func(i, j int) float64, r *mat.Dense, p int) {
	v := make([]float64, p)
	for i := range variance {
		extra := 0.0
		for j := range p {
			s := u(i, j)
			for k := range j {
				s -= r.At(k, j) * v[k]
			}
			v[j] = s / r.At(j, j)
			extra += v[j] * v[j]
		}
		variance[i] += extra
	}
}

func scaledDense(f float64, a mat.Matrix) *mat.Dense {
	var s mat.Dense
	s.Scale(f, a)
	return &s
}
