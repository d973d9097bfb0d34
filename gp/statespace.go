package gp

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// StateModel is the state-space form of a Matérn kernel of half-integer
// smoothness nu = p + 1/2 (Matern12, Matern32, Matern52, Matern72): the
// process f is the first entry of the p+1-dimensional state
// x = (f, f', ..., f^(p)) of the linear SDE
//
//	dx/dt = F x + L w(t),   f = H x,
//
// with F the companion matrix of (s + lambda)^(p+1), lambda = sqrt(2 nu)/l,
// L = H^T reversed (the last unit vector), and w white noise of spectral
// density Qc = Variance·C·lambda^(2 nu), C = 2·4^p (p!)^2/(2p)! (2, 4, 16/3,
// 32/5), so that |H (i w - F)^-1 L|^2 Qc is the kernel's SpectralDensity.
// The stationary covariance Pinf solves F Pinf + Pinf F^T + L Qc L^T = 0;
// between two times the state moves by the exact transition
// A(dt) = exp(F dt) plus independent N(0, Pinf - A Pinf A^T) noise, which
// reproduces the kernel at any timestamps (Hartikainen & Särkkä 2010).
//
// For exact samplers (package noise) it also gives the transition in
// whitened coordinates, rounded to float64 with a rigorous bound on the
// rounding (WhitenedTransition), and a certified contraction
// (Contraction). Those work from Order, Lengthscale and Variance in exact
// arithmetic; the float Lambda is for the float forms. Use StateSpace to
// build one; the fields are for reading.
//
// References: J. Hartikainen, S. Särkkä, Kalman filtering and smoothing
// solutions to temporal Gaussian process regression models, MLSP 2010;
// S. Särkkä, A. Solin, Applied Stochastic Differential Equations,
// Cambridge 2019, ch. 12; A. Solin, PhD thesis, Aalto 2016, ch. 4.
type StateModel struct {
	// Kernel is the kernel represented.
	Kernel Kernel
	// Order is p: the state has p+1 entries, f and its first p
	// derivatives.
	Order int
	// Lengthscale and Variance are the kernel's; Lambda = sqrt(2p+1)/l.
	Lengthscale, Variance, Lambda float64
}

// maxStateOrder is the largest Matérn order with a kernel in this package
// (Matern72, p = 3).
const maxStateOrder = 3

// StateSpace returns the state-space form of a Matérn kernel with
// half-integer smoothness (Matern12, Matern32, Matern52, Matern72). Other
// kernels have no finite-dimensional exact form and are an error.
func StateSpace(k Kernel) (*StateModel, error) {
	if err := Validate(k); err != nil {
		return nil, err
	}
	var p int
	var v, l float64
	switch k := k.(type) {
	case Matern12:
		p, v, l = 0, k.Variance, k.Lengthscale
	case Matern32:
		p, v, l = 1, k.Variance, k.Lengthscale
	case Matern52:
		p, v, l = 2, k.Variance, k.Lengthscale
	case Matern72:
		p, v, l = 3, k.Variance, k.Lengthscale
	default:
		return nil, fmt.Errorf("gp: no exact state-space form for a %T kernel (only Matérn 1/2, 3/2, 5/2, 7/2)", k)
	}
	return &StateModel{Kernel: k, Order: p, Lengthscale: l, Variance: v, Lambda: math.Sqrt(float64(2*p+1)) / l}, nil
}

// StateDim returns p+1, the dimension of the state.
func (m *StateModel) StateDim() int { return m.Order + 1 }

// MarginalVariance returns the kernel's variance k(t, t): the process is
// sqrt(MarginalVariance) times the first whitened state entry.
func (m *StateModel) MarginalVariance() float64 { return m.Variance }

// F returns the drift matrix: ones on the superdiagonal and, in the last
// row, -binom(p+1, k)·lambda^(p+1-k) in column k.
func (m *StateModel) F() *mat.Dense {
	d := m.StateDim()
	f := mat.NewDense(d, d, nil)
	for i := 0; i+1 < d; i++ {
		f.Set(i, i+1, 1)
	}
	for k := range d {
		f.Set(d-1, k, -binomial(d, k)*math.Pow(m.Lambda, float64(d-k)))
	}
	return f
}

// Qc returns the spectral density of the driving white noise,
// Variance·C·lambda^(2p+1).
func (m *StateModel) Qc() float64 {
	p := m.Order
	c := 2 * math.Pow(4, float64(p)) * math.Pow(factorial(p), 2) / factorial(2*p)
	return m.Variance * c * math.Pow(m.Lambda, float64(2*p+1))
}

// Pinf returns the stationary covariance of the state,
// Variance·Λ K0 Λ with Λ = diag(lambda^a) and K0 the (rational) covariance
// of the state in units of 1/lambda (see WhitenedTransition).
func (m *StateModel) Pinf() *mat.SymDense {
	c := orderData(m.Order)
	d := m.StateDim()
	p := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			k, _ := c.k0[a][b].Float64()
			p.SetSym(a, b, m.Variance*k*math.Pow(m.Lambda, float64(a+b)))
		}
	}
	return p
}

// Transition returns the floating-point discrete transition over a step
// dt >= 0: A = exp(F dt) (gonum's matrix exponential) and the process
// noise covariance Q. It is for simulation, filtering and tests; exact
// samplers use WhitenedTransition.
//
// Q is Pinf - A Pinf A^T when lambda dt >= 4. Below that the difference
// cancels: Q_00 is of order (lambda dt)^(2p+1) times the variance, so at
// dt a thousandth of the lengthscale the difference of Matérn 5/2 keeps
// no correct digit (and the Kalman recursion of cip's lower bound drifted
// on it). There Q is the integral Qc ∫_0^dt a(s) a(s)^T ds, a(s) =
// exp(F s) L, by 16-point Gauss-Legendre quadrature: the integrand is
// e^(-2 lambda s) times a polynomial of degree 2p <= 6 and the rule is
// exact to degree 31. TestTransitionProcessNoise checks every entry of
// both forms against a 256-bit Taylor series; at its steps, every order,
// within 6e-16 of sqrt(Q_ii Q_kk) below lambda dt = 4 and 1.2e-15 above
// (the difference form at lambda dt = 1.01 was 2.2e-13 off for Matérn
// 7/2, hence 4).
func (m *StateModel) Transition(dt float64) (a *mat.Dense, q *mat.SymDense) {
	var fd mat.Dense
	fd.Scale(dt, m.F())
	a = new(mat.Dense)
	a.Exp(&fd)
	if m.Lambda*dt < transitionQuadrature {
		return a, m.processNoise(dt)
	}
	pinf := m.Pinf()
	var apa, ap mat.Dense
	ap.Mul(a, pinf)
	apa.Mul(&ap, a.T())
	d := m.StateDim()
	q = mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			q.SetSym(i, j, pinf.At(i, j)-(apa.At(i, j)+apa.At(j, i))/2)
		}
	}
	return a, q
}

// transitionQuadrature is the lambda·dt below which Transition integrates
// Q instead of subtracting covariances.
const transitionQuadrature = 4

// processNoise is Qc ∫_0^dt a(s) a(s)^T ds by 16-point Gauss-Legendre
// quadrature (see Transition).
func (m *StateModel) processNoise(dt float64) *mat.SymDense {
	const nodes = 16
	d := m.StateDim()
	if dt == 0 {
		return mat.NewSymDense(d, nil) // the state does not move
	}
	x, wt := make([]float64, nodes), make([]float64, nodes)
	quad.Legendre{}.FixedLocations(x, wt, 0, dt)
	f := m.F()
	q := mat.NewSymDense(d, nil)
	var fs, e mat.Dense
	for k := range nodes {
		fs.Scale(x[k], f)
		e.Exp(&fs)
		for i := range d {
			for j := i; j < d; j++ {
				q.SetSym(i, j, q.At(i, j)+wt[k]*e.At(i, d-1)*e.At(j, d-1))
			}
		}
	}
	q.ScaleSym(m.Qc(), q)
	return q
}

// WhitenedTransition writes into a (row-major, (p+1)^2 entries) the
// float64 matrix nearest, entry by entry, to the exact whitened transition
//
//	Ã(tau) = R^-1 exp(F_u u) R,   u = lambda·tau,   K0 = R R^T,
//
// over the real time step tau = dt + dtLo (dtLo lets callers pass the
// rounding error of a difference of timestamps; it may be 0), and returns
// e >= ||a - Ã(tau)||_2, a rigorous bound. It implements the StateSpace
// interface of package noise.
//
// The whitening is that of the unit-variance state in units of 1/lambda
// (x_a = lambda^-a f^(a)/sqrt(Variance), F_u the companion matrix of
// (s+1)^(p+1), K0 its stationary covariance, R lower-triangular), so the
// whitened state has identity covariance and the process is
// sqrt(Variance) times its first entry (R_00 = 1). Ã depends on u only:
// with rho(u) = q_0(u) e^-u the unit-variance kernel at lag u/lambda (q_0
// the Matérn polynomial), the state covariance at lag u is
// K(u)[a][b] = (-1)^b rho^(a+b)(u), so Ã(u) = R^-1 K(u) R^-T, and since
// rho^(m) = q_m e^-u with q_(m+1) = q_m' - q_m (rational coefficients),
//
//	Ã(u) = e^-u Σ_k u^k M_k,   M_k = R^-1 C_k R^-T,
//
// for fixed matrices M_k. They are enclosed once per order in big.Float
// interval arithmetic (128 bits, directed rounding) and turned into
// double-double balls. Per step, u, e^-u (Taylor polynomial of degree 27
// after argument halving, remainder below 2^-119, then repeated squaring)
// and the polynomial are evaluated in double-double ball arithmetic, which
// bounds every rounding it makes (see ddBall); each entry is rounded to
// the nearest float64 and e is the Frobenius norm of the distances from
// it to its ball's far end, rounded up. So e is about one half-ulp per
// entry, at most (p+1)·2^-53 since |Ã_ij| <= ||Ã||_2 <= 1, and a call
// costs about 2 µs. For u >= 512 the matrix is zero and e the contraction
// bound theta^floor(u/u0) (below 2^-60). dt = dtLo = 0 gives the identity
// exactly, with e = 0.
func (m *StateModel) WhitenedTransition(a []float64, dt, dtLo float64) (float64, error) {
	if m.Order < 0 || m.Order > maxStateOrder || !(m.Lengthscale > 0) || math.IsInf(m.Lengthscale, 1) {
		return 0, fmt.Errorf("gp: WhitenedTransition: invalid state model (order %d, lengthscale %v); build it with StateSpace", m.Order, m.Lengthscale)
	}
	d := m.StateDim()
	if len(a) != d*d {
		return 0, fmt.Errorf("gp: WhitenedTransition: len(a) = %d, want %d", len(a), d*d)
	}
	if math.IsNaN(dt) || math.IsInf(dt, 0) || math.IsNaN(dtLo) || math.IsInf(dtLo, 0) {
		return 0, fmt.Errorf("gp: WhitenedTransition: time step %v + %v is not finite", dt, dtLo)
	}
	if dt == 0 && dtLo == 0 {
		for i := range a {
			a[i] = 0
		}
		for i := range d {
			a[i*d+i] = 1
		}
		return 0, nil
	}
	c := orderData(m.Order)
	// u = sqrt(2p+1)·(dt + dtLo)/l as a ball (dt + dtLo is a double-double;
	// fl(dt + dtLo) has the sign of the exact sum).
	tx, ty := numeric.TwoSum(dt, dtLo)
	if tx < 0 {
		return 0, fmt.Errorf("gp: WhitenedTransition: negative time step %v + %v", dt, dtLo)
	}
	u := c.sqrtNu.mul(ddBall{tx, ty, 0}).divFloat(m.Lengthscale)
	if lo := u.lower(); lo >= farLag {
		// ||Ã(u)|| <= theta^j for u >= j·u0 (Contraction): the zero
		// matrix is within that.
		for i := range a {
			a[i] = 0
		}
		return numeric.PowUp(c.theta, math.Floor(lo/c.u0*(1-0x1p-50)), bumpUp), nil
	}
	ex := u.expNeg()
	var sum float64
	for i := range d * d {
		v := c.mkb[c.p][i]
		for k := c.p - 1; k >= 0; k-- {
			v = v.mul(u).add(c.mkb[k][i])
		}
		f, dev := v.mul(ex).nearest()
		a[i] = f
		sum += dev * dev
	}
	return numeric.SqrtUp(bumpUp(sum)), nil
}

// farLag is the lag u beyond which WhitenedTransition returns the zero
// matrix with the contraction bound theta^(u/u0) (below 2^-60 for every
// order here) instead of evaluating e^-u, which would underflow the
// double-double balls.
const farLag = 512

// Contraction returns a horizon h (in the kernel's units of time) and
// theta < 1 with ||Ã(tau)||_2 <= theta for every tau >= h.
//
// Ã is a semigroup of contractions in the whitened coordinates:
// Ã(s + t) = Ã(s) Ã(t), and I - Ã Ã^T is the whitened process noise
// covariance, which is PSD, so ||Ã(t)||_2 <= 1. Hence ||Ã(tau)|| <=
// ||Ã(tau - h)||·||Ã(h)|| <= ||Ã(h)|| for tau >= h, and a rigorous bound at
// one lag suffices: u0 is the first of 1, 2, 3, ... at which the Frobenius
// norm of the interval enclosure of Ã(u0) is at most 1/2, and
// h = u0 / lambda is rounded up. An invalid model (not built by
// StateSpace) returns 0, 0, which no caller accepts.
func (m *StateModel) Contraction() (horizon, theta float64) {
	if m.Order < 0 || m.Order > maxStateOrder || !(m.Lengthscale > 0) || math.IsInf(m.Lengthscale, 1) {
		return 0, 0
	}
	c := orderData(m.Order)
	// h >= u0·l/sqrt(2p+1), rounded up through intervals.
	s := newIv(ivPrec).sqrt(ivFloat(float64(2*m.Order+1), ivPrec))
	h := newIv(ivPrec).mul(ivFloat(c.u0, ivPrec), ivFloat(m.Lengthscale, ivPrec))
	h.quo(h, s)
	return numeric.FloatUp(&h.hi), c.theta
}

// orderConsts holds what depends on the order p only.
type orderConsts struct {
	p   int
	k0  [][]*big.Rat  // K(0): the unit-variance state covariance, lambda = 1
	mk  [][]*interval // M_k, k = 0..p, each d×d row-major
	mkb [][]ddBall    // the same as balls
	// sqrtNu encloses sqrt(2p+1).
	sqrtNu ddBall
	u0     float64 // lag (units of 1/lambda) with ||Ã(u0)|| <= theta
	err    error
	// theta >= ||Ã(u0)||_2, at most 1/2.
	theta float64
}

var (
	orderOnce [maxStateOrder + 1]sync.Once
	orderTab  [maxStateOrder + 1]*orderConsts
)

func orderData(p int) *orderConsts {
	orderOnce[p].Do(func() { orderTab[p] = newOrderConsts(p) })
	if orderTab[p].err != nil {
		panic(orderTab[p].err) // the construction is fixed: unreachable
	}
	return orderTab[p]
}

// maternPoly returns the coefficients (by power of u) of q_0, the
// polynomial of the unit-variance Matérn kernel of order p at lag u/lambda:
// rho(u) = q_0(u) e^-u, q_0(u) = p!/(2p)! Σ_k (2p-k)!/((p-k)! k!) (2u)^k
// (Rasmussen & Williams, eq. 4.16): 1; 1 + u; 1 + u + u²/3;
// 1 + u + 2u²/5 + u³/15.
func maternPoly(p int) []*big.Rat {
	c := make([]*big.Rat, p+1)
	for k := 0; k <= p; k++ {
		num := new(big.Int).Mul(factInt(p), factInt(2*p-k))
		num.Lsh(num, uint(k))
		den := new(big.Int).Mul(factInt(2*p), factInt(p-k))
		den.Mul(den, factInt(k))
		c[k] = new(big.Rat).SetFrac(num, den)
	}
	return c
}

func factInt(n int) *big.Int { return new(big.Int).MulRange(1, int64(max(n, 1))) }

// derivPolys returns q_0..q_(2p): rho^(m) = q_m e^-u, q_(m+1) = q_m' - q_m.
func derivPolys(p int) [][]*big.Rat {
	q := [][]*big.Rat{maternPoly(p)}
	for m := 1; m <= 2*p; m++ {
		prev := q[m-1]
		next := make([]*big.Rat, p+1)
		for k := range next {
			next[k] = new(big.Rat).Neg(prev[k])
			if k+1 <= p {
				var t big.Rat
				t.SetInt64(int64(k + 1))
				t.Mul(&t, prev[k+1])
				next[k].Add(next[k], &t)
			}
		}
		q = append(q, next)
	}
	return q
}

func newOrderConsts(p int) *orderConsts {
	d := p + 1
	c := &orderConsts{p: p}
	q := derivPolys(p)
	sign := func(b int) int64 {
		if b%2 == 1 {
			return -1
		}
		return 1
	}
	// K0[a][b] = (-1)^b q_(a+b)(0); C_k[a][b] = (-1)^b [u^k] q_(a+b).
	c.k0 = make([][]*big.Rat, d)
	for a := range d {
		c.k0[a] = make([]*big.Rat, d)
		for b := range d {
			c.k0[a][b] = new(big.Rat).Mul(q[a+b][0], big.NewRat(sign(b), 1))
		}
	}
	// R = chol(K0) and R^-1, in intervals.
	r := make([]*interval, d*d)
	for i := range r {
		r[i] = newIv(ivPrec)
	}
	for j := range d {
		s := ivRat(c.k0[j][j], ivPrec)
		for k := range j {
			t := newIv(ivPrec).mul(r[j*d+k], r[j*d+k])
			s.sub(s, t)
		}
		if s.lo.Sign() <= 0 {
			c.err = fmt.Errorf("gp: stationary covariance of order %d not positive definite in interval arithmetic", p)
			return c
		}
		r[j*d+j].sqrt(s)
		for i := j + 1; i < d; i++ {
			s := ivRat(c.k0[i][j], ivPrec)
			for k := range j {
				t := newIv(ivPrec).mul(r[i*d+k], r[j*d+k])
				s.sub(s, t)
			}
			r[i*d+j].quo(s, r[j*d+j])
		}
	}
	ri := make([]*interval, d*d)
	for i := range ri {
		ri[i] = newIv(ivPrec)
	}
	one := ivFloat(1, ivPrec)
	for i := range d {
		ri[i*d+i].quo(one, r[i*d+i])
		for j := range i {
			s := newIv(ivPrec)
			for k := j; k < i; k++ {
				t := newIv(ivPrec).mul(r[i*d+k], ri[k*d+j])
				s.add(s, t)
			}
			s.quo(s, r[i*d+i])
			ri[i*d+j].sub(newIv(ivPrec), s)
		}
	}
	// M_k = R^-1 C_k R^-T.
	c.mk = make([][]*interval, d)
	for k := range d {
		ck := make([]*interval, d*d)
		for a := range d {
			for b := range d {
				v := new(big.Rat).Mul(q[a+b][k], big.NewRat(sign(b), 1))
				ck[a*d+b] = ivRat(v, ivPrec)
			}
		}
		c.mk[k] = ivSandwich(ri, ck, d)
	}
	c.mkb = make([][]ddBall, d)
	for k := range d {
		for _, e := range c.mk[k] {
			c.mkb[k] = append(c.mkb[k], ballOf(e))
		}
	}
	c.sqrtNu = ballOf(newIv(ivPrec).sqrt(ivFloat(float64(2*p+1), ivPrec)))
	// The contraction certificate.
	for u0 := 1; u0 <= 256; u0++ {
		at := c.whitened(ivFloat(float64(u0), ivPrec))
		var sum, sq big.Float
		sum.SetPrec(64).SetMode(big.ToPositiveInf)
		for _, e := range at {
			m := e.absMax()
			sq.SetPrec(64).SetMode(big.ToPositiveInf).Mul(m, m)
			sum.Add(&sum, &sq)
		}
		if th := numeric.SqrtUp(numeric.FloatUp(&sum)); th <= 0.5 {
			c.u0, c.theta = float64(u0), th
			return c
		}
	}
	c.err = errors.New("gp: no contraction certificate found for the Matérn state-space model")
	return c
}

// ivSandwich returns X C X^T for d×d interval matrices (row-major).
func ivSandwich(x, cm []*interval, d int) []*interval {
	return ivProduct(ivProduct(x, cm, d, false), x, d, true)
}

// ivProduct returns A B (or A B^T if transB) for d×d interval matrices.
func ivProduct(a, b []*interval, d int, transB bool) []*interval {
	out := make([]*interval, d*d)
	for i := range d {
		for j := range d {
			s := newIv(ivPrec)
			for k := range d {
				bkj := b[k*d+j]
				if transB {
					bkj = b[j*d+k]
				}
				s.add(s, newIv(ivPrec).mul(a[i*d+k], bkj))
			}
			out[i*d+j] = s
		}
	}
	return out
}

// whitened encloses Ã(u) = e^-u Σ_k u^k M_k for an interval u >= 0.
func (c *orderConsts) whitened(u *interval) []*interval {
	d := c.p + 1
	e := newIv(ivPrec).expNeg(u)
	out := make([]*interval, d*d)
	t := newIv(ivPrec)
	for i := range out {
		s := newIv(ivPrec).set(c.mk[c.p][i])
		for k := c.p - 1; k >= 0; k-- {
			s.mul(s, u)
			s.add(s, c.mk[k][i])
		}
		out[i] = t.mul(s, e).copy()
	}
	return out
}

func (z *interval) copy() *interval {
	c := newIv(z.lo.Prec())
	return c.set(z)
}

func binomial(n, k int) float64 { return factorial(n) / (factorial(k) * factorial(n-k)) }

func factorial(n int) float64 {
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return f
}
