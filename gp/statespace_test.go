package gp

import (
	"fmt"
	"math"
	"math/big"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// maternKernels returns one kernel of every order at lengthscale l.
func maternKernels(v, l float64) []Kernel {
	return []Kernel{Matern12{v, l}, Matern32{v, l}, Matern52{v, l}, Matern72{v, l}}
}

// irregularTimes returns n sorted times with gaps drawn from {0.5, 1, ...}
// and uniform fractions, including a repeated time and a long gap.
func irregularTimes(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	ts := make([]float64, n)
	for i := 1; i < n; i++ {
		gap := 1 + 4*rng.Float64()
		switch i % 17 {
		case 5:
			gap = 0 // a repeated timestamp
		case 11:
			gap = 90 // a long gap
		}
		ts[i] = ts[i-1] + gap
	}
	return ts
}

// The state-space form reproduces the kernel's spectral normalisation: Pinf
// solves the Lyapunov equation with Qc, |H (iw - F)^-1 L|^2 Qc is the
// kernel's spectral density, and H Pinf H^T is the variance.
func TestStateSpaceLyapunovAndSpectrum(t *testing.T) {
	for _, l := range []float64{0.7, 8.635, 48.85} {
		for _, k := range maternKernels(2.5, l) {
			m, err := StateSpace(k)
			if err != nil {
				t.Fatal(err)
			}
			f, p := m.F(), m.Pinf()
			d := m.StateDim()
			var fp, res mat.Dense
			fp.Mul(f, p)
			res.Add(&fp, fp.T())
			res.Set(d-1, d-1, res.At(d-1, d-1)+m.Qc())
			scale := mat.Norm(&fp, math.Inf(1))
			if r := mat.Norm(&res, math.Inf(1)) / scale; r > 1e-13 {
				t.Errorf("%T l=%g: Lyapunov residual %.3g relative", k, l, r)
			}
			if got := p.At(0, 0); relErr(got, 2.5) > 1e-15 {
				t.Errorf("%T: H Pinf H^T = %v, want 2.5", k, got)
			}
			sp := k.(Spectral)
			for _, w := range []float64{0, 0.01 / l, 1 / l, 7.3 / l, 100 / l} {
				// (iw + lambda)^(p+1) is the characteristic polynomial.
				tf := cmplx.Pow(complex(m.Lambda, w), complex(float64(d), 0))
				got := m.Qc() / (real(tf)*real(tf) + imag(tf)*imag(tf))
				if want := sp.SpectralDensity(w); relErr(got, want) > 1e-12 {
					t.Errorf("%T l=%g w=%g: state-space density %v, kernel %v", k, l, w, got, want)
				}
			}
		}
	}
}

// The state-space recursion's covariance at irregular times equals gp.Gram
// to 1e-12 relative to the variance, for every order, both through the
// float transitions exp(F dt) and through the whitened ones of
// WhitenedTransition: Cov(f_i, f_j) = H A(t_i - t_(i-1))···A(t_(j+1) - t_j)
// Pinf H^T, and Variance·[Ã_i···Ã_(j+1)]_00.
func TestStateSpaceMatchesGram(t *testing.T) {
	t.Parallel()
	ts := irregularTimes(120, 1)
	for _, l := range []float64{2, 8.635, 48.85} {
		for _, k := range maternKernels(3, l) {
			m, err := StateSpace(k)
			if err != nil {
				t.Fatal(err)
			}
			d := m.StateDim()
			gram := Gram(k, ts)
			pinf := m.Pinf()
			worstF, worstW := 0.0, 0.0
			wa := make([][]float64, len(ts))
			fa := make([]*mat.Dense, len(ts)) // the float transitions, once per step
			for i := 1; i < len(ts); i++ {
				fa[i], _ = m.Transition(ts[i] - ts[i-1])
				wa[i] = make([]float64, d*d)
				if _, err := m.WhitenedTransition(wa[i], ts[i]-ts[i-1], 0); err != nil {
					t.Fatal(err)
				}
			}
			for j := range ts {
				// Column j: v = Pinf H^T, propagated forward.
				v := mat.NewVecDense(d, nil)
				for a := range d {
					v.SetVec(a, pinf.At(a, 0))
				}
				w := make([]float64, d)
				w[0] = 1
				for i := j; i < len(ts); i++ {
					if i > j {
						v.MulVec(fa[i], v)
						nw := make([]float64, d)
						for r := range d {
							for c := range d {
								nw[r] += wa[i][r*d+c] * w[c]
							}
						}
						w = nw
					}
					want := gram.At(i, j)
					worstF = math.Max(worstF, math.Abs(v.AtVec(0)-want)/3)
					worstW = math.Max(worstW, math.Abs(3*w[0]-want)/3)
				}
			}
			t.Logf("%T l=%g: max |Cov - Gram|/variance: float transitions %.2g, whitened %.2g", k, l, worstF, worstW)
			if worstF > 1e-12 || worstW > 1e-12 {
				t.Errorf("%T l=%g: state-space covariance differs from Gram by %.3g (float), %.3g (whitened) relative", k, l, worstF, worstW)
			}
		}
	}
}

// lagInterval encloses u = sqrt(2p+1)·(dt + dtLo)/l in big-float
// intervals: the reference lag of the tests.
func (m *StateModel) lagInterval(dt, dtLo float64) (*interval, error) {
	tau := newIv(ivPrec).add(ivFloat(dt, ivPrec), ivFloat(dtLo, ivPrec))
	if tau.lo.Sign() < 0 {
		return nil, fmt.Errorf("gp: WhitenedTransition: negative time step %v + %v", dt, dtLo)
	}
	s := newIv(ivPrec).sqrt(ivFloat(float64(2*m.Order+1), ivPrec))
	u := newIv(ivPrec).mul(s, tau)
	return u.quo(u, ivFloat(m.Lengthscale, ivPrec)), nil
}

// bigMat is a d×d matrix of big.Floats at a fixed high precision, for an
// independent reference computation (no intervals, round to nearest).
type bigMat [][]*big.Float

const refPrec = 400

func newBigMat(d int) bigMat {
	m := make(bigMat, d)
	for i := range m {
		m[i] = make([]*big.Float, d)
		for j := range m[i] {
			m[i][j] = new(big.Float).SetPrec(refPrec)
		}
	}
	return m
}

func (a bigMat) mul(b bigMat) bigMat {
	d := len(a)
	c := newBigMat(d)
	var t big.Float
	t.SetPrec(refPrec)
	for i := range d {
		for j := range d {
			for k := range d {
				t.Mul(a[i][k], b[k][j])
				c[i][j].Add(c[i][j], &t)
			}
		}
	}
	return c
}

// refWhitened computes Ã(u) = R^-1 exp(F_u u) R by a route independent of
// WhitenedTransition's: F_u the companion matrix of (s+1)^(p+1), its
// exponential by a Taylor series with scaling and squaring, and R the
// Cholesky factor of K0 at 400 bits. Its error is far below 2^-300.
func refWhitened(p int, u *big.Float) bigMat {
	d := p + 1
	f := newBigMat(d)
	for i := 0; i+1 < d; i++ {
		f[i][i+1].SetInt64(1)
	}
	for k := range d {
		f[d-1][k].SetFloat64(-binomial(d, k))
	}
	// Scale F u by 2^-s so that its norm (<= 2^4·u here) is below 1/2.
	s := 0
	if u.Sign() > 0 {
		s = max(0, u.MantExp(nil)+6)
	}
	var us big.Float
	us.SetPrec(refPrec).SetMantExp(u, -s)
	for i := range d {
		for j := range d {
			f[i][j].Mul(f[i][j], &us)
		}
	}
	e := newBigMat(d)
	term := newBigMat(d)
	for i := range d {
		e[i][i].SetInt64(1)
		term[i][i].SetInt64(1)
	}
	for k := 1; k < 150; k++ {
		term = term.mul(f)
		for i := range d {
			for j := range d {
				term[i][j].Quo(term[i][j], new(big.Float).SetInt64(int64(k)))
				e[i][j].Add(e[i][j], term[i][j])
			}
		}
	}
	for range s {
		e = e.mul(e)
	}
	// R = chol(K0), R^-1.
	k0 := orderData(p).k0
	r := newBigMat(d)
	for j := range d {
		var s big.Float
		s.SetPrec(refPrec).SetRat(k0[j][j])
		for k := range j {
			var t big.Float
			s.Sub(&s, t.SetPrec(refPrec).Mul(r[j][k], r[j][k]))
		}
		r[j][j].Sqrt(&s)
		for i := j + 1; i < d; i++ {
			var s big.Float
			s.SetPrec(refPrec).SetRat(k0[i][j])
			for k := range j {
				var t big.Float
				s.Sub(&s, t.SetPrec(refPrec).Mul(r[i][k], r[j][k]))
			}
			r[i][j].Quo(&s, r[j][j])
		}
	}
	ri := newBigMat(d)
	for i := range d {
		ri[i][i].Quo(big.NewFloat(1), r[i][i])
		for j := range i {
			var s big.Float
			s.SetPrec(refPrec)
			for k := j; k < i; k++ {
				var t big.Float
				s.Add(&s, t.SetPrec(refPrec).Mul(r[i][k], ri[k][j]))
			}
			ri[i][j].Quo(&s, r[i][i])
			ri[i][j].Neg(ri[i][j])
		}
	}
	return ri.mul(e).mul(r)
}

// norm2 returns the spectral norm of a small float matrix.
func norm2(a []float64, d int) float64 {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(d, d, a), mat.SVDNone) {
		panic("SVD failed")
	}
	return svd.Values(nil)[0]
}

// The bound of WhitenedTransition holds against the independent reference:
// ||Â - Ã||_2 <= e at lags u from 1e-9 to 8,000 (beyond 512 the zero
// matrix with the contraction bound; one step given as a difference with a
// rounding error dtLo), e is at most (p+1)·2^-53, and it is not loose:
// e <= 2·||Â - Ã||_F + 2^-100 (Â is the entrywise nearest float, so the
// Frobenius distance is the rounding itself). The interval enclosure of
// the constants' route contains the reference.
func TestWhitenedTransitionBound(t *testing.T) {
	t.Parallel()
	type step struct{ dt, lo float64 }
	steps := []step{{1e-9, 0}, {0.37, 0}, {1, 0}, {2.999, 1e-17}, {7.5, 0}, {33.3, 0}, {180, 0}, {250, 0}, {3000, 0}}
	for _, l := range []float64{1, 8.635, 48.85} {
		for _, k := range maternKernels(1, l) {
			m, _ := StateSpace(k)
			d := m.StateDim()
			a := make([]float64, d*d)
			for _, s := range steps {
				e, err := m.WhitenedTransition(a, s.dt, s.lo)
				if err != nil {
					t.Fatal(err)
				}
				u, _ := m.lagInterval(s.dt, s.lo)
				var umid big.Float
				umid.SetPrec(refPrec).Add(&u.lo, &u.hi)
				umid.SetMantExp(&umid, -1)
				ref := refWhitened(m.Order, &umid)
				enc := orderData(m.Order).whitened(u)
				diff := make([]float64, d*d)
				frob := 0.0
				for i := range d {
					for j := range d {
						var df big.Float
						df.SetPrec(refPrec).Sub(new(big.Float).SetFloat64(a[i*d+j]), ref[i][j])
						diff[i*d+j], _ = df.Float64()
						frob += diff[i*d+j] * diff[i*d+j]
						if enc[i*d+j].lo.Cmp(ref[i][j]) > 0 || enc[i*d+j].hi.Cmp(ref[i][j]) < 0 {
							t.Fatalf("%T l=%g dt=%g: entry (%d,%d): reference %v outside [%v, %v]", k, l, s.dt, i, j, ref[i][j], &enc[i*d+j].lo, &enc[i*d+j].hi)
						}
					}
				}
				got := norm2(diff, d)
				if !(got <= e) {
					t.Errorf("%T l=%g dt=%g: ||Â - Ã||_2 = %.3g exceeds the bound %.3g", k, l, s.dt, got, e)
				}
				if e > float64(d)*0x1p-53 {
					t.Errorf("%T l=%g dt=%g: bound %.3g above (p+1)·2^-53", k, l, s.dt, e)
				}
				if e > 2*math.Sqrt(frob)+0x1p-100 {
					t.Errorf("%T l=%g dt=%g: bound %.3g loose against the Frobenius error %.3g", k, l, s.dt, e, math.Sqrt(frob))
				}
			}
		}
	}
}

// A zero step is the identity, exactly.
func TestWhitenedTransitionZero(t *testing.T) {
	m, _ := StateSpace(Matern52{1, 3})
	a := make([]float64, 9)
	e, err := m.WhitenedTransition(a, 0, 0)
	if err != nil || e != 0 {
		t.Fatalf("e = %v, err = %v", e, err)
	}
	for i := range 3 {
		for j := range 3 {
			if want := float64(boolInt(i == j)); a[i*3+j] != want {
				t.Errorf("a[%d,%d] = %v", i, j, a[i*3+j])
			}
		}
	}
	if _, err := m.WhitenedTransition(a, -1, 0); err == nil {
		t.Error("negative step accepted")
	}
	if _, err := m.WhitenedTransition(a[:4], 1, 0); err == nil {
		t.Error("short matrix accepted")
	}
	if _, err := StateSpace(RBF{1, 1}); err == nil {
		t.Error("RBF accepted")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The contraction certificate holds against the reference: at the horizon
// and beyond, ||Ã||_2 <= theta <= 1/2; and Ã is a contraction at every lag
// (the premise of the semigroup argument).
func TestContraction(t *testing.T) {
	for _, k := range maternKernels(1, 10) {
		m, _ := StateSpace(k)
		h, theta := m.Contraction()
		if !(theta > 0 && theta <= 0.5) || !(h > 0) {
			t.Fatalf("%T: horizon %v, theta %v", k, h, theta)
		}
		d := m.StateDim()
		t.Logf("%T l=10: horizon %.4g s (u0 = %g), theta %.4f", k, h, h*m.Lambda, theta)
		for _, tau := range []float64{0.01, 1, h / 2, h, 1.3 * h, 5 * h} {
			u := new(big.Float).SetPrec(refPrec).SetFloat64(tau * m.Lambda)
			ref := refWhitened(m.Order, u)
			a := make([]float64, d*d)
			for i := range d {
				for j := range d {
					a[i*d+j], _ = ref[i][j].Float64()
				}
			}
			n := norm2(a, d)
			if n > 1+1e-15 {
				t.Errorf("%T tau=%g: ||Ã|| = %v > 1", k, tau, n)
			}
			if tau >= h && n > theta {
				t.Errorf("%T tau=%g >= horizon: ||Ã|| = %v > theta %v", k, tau, n, theta)
			}
		}
	}
}

// The transition Ã depends on the lag only through u = lambda·tau: two
// kernels of the same order with lengthscales in the ratio of their steps
// give the same matrix.
func TestWhitenedTransitionScaling(t *testing.T) {
	m1, _ := StateSpace(Matern72{1, 4})
	m2, _ := StateSpace(Matern72{9, 8})
	a1, a2 := make([]float64, 16), make([]float64, 16)
	m1.WhitenedTransition(a1, 1.5, 0)
	m2.WhitenedTransition(a2, 3, 0)
	for i := range a1 {
		if a1[i] != a2[i] {
			t.Fatalf("entry %d: %v vs %v", i, a1[i], a2[i])
		}
	}
}

// contains reports whether the ball contains the big float v.
func (a ddBall) contains(v *big.Float) bool {
	var d big.Float
	d.SetPrec(600).Sub(v, new(big.Float).SetFloat64(a.x))
	d.Sub(&d, new(big.Float).SetFloat64(a.y))
	d.Abs(&d)
	return d.Cmp(new(big.Float).SetFloat64(a.r)) <= 0
}

// The double-double balls enclose: random chains of additions,
// multiplications, divisions by floats and e^-u, on arguments with
// cancellation and of many magnitudes, contain the 600-bit reference (exp
// from the interval Taylor enclosure), and their radii stay near 2^-100
// relative. A ball with its radius zeroed must fail somewhere (the test
// can see a missing radius).
func TestDDBallEncloses(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	randBall := func() (ddBall, *big.Float) {
		x := (rng.Float64() - 0.5) * math.Ldexp(1, rng.IntN(40)-20)
		y := x * (rng.Float64() - 0.5) * 0x1p-53
		r := math.Abs(x) * 0x1p-100 * rng.Float64()
		v := new(big.Float).SetPrec(600).SetFloat64(x)
		v.Add(v, new(big.Float).SetFloat64(y))
		// A point of the ball other than the midpoint.
		v.Add(v, new(big.Float).SetFloat64(r*(2*rng.Float64()-1)))
		return ddBall{x, y, r}, v
	}
	missed := 0
	worst := 0.0
	for trial := range 3000 {
		a, va := randBall()
		b, vb := randBall()
		var got ddBall
		want := new(big.Float).SetPrec(600)
		switch trial % 4 {
		case 0:
			got = a.add(b.neg())
			want.Sub(va, vb)
			if trial%8 == 0 { // heavy cancellation
				got = a.add(a.neg())
				want.Sub(va, va)
			}
		case 1:
			got = a.mul(b)
			want.Mul(va, vb)
		case 2:
			l := b.x
			got = a.divFloat(l)
			want.Quo(va, new(big.Float).SetFloat64(l))
		case 3:
			u := math.Abs(a.x) * 600 / math.Ldexp(1, 20)
			ub := ddBall{u, 0, 0}
			got = ub.expNeg()
			lo, hi := expBounds(new(big.Float).SetPrec(600).SetFloat64(u), 600)
			want.Quo(big.NewFloat(1), lo) // any point of [1/hi, 1/lo]
			_ = hi
		}
		if !got.contains(want) {
			t.Fatalf("trial %d (op %d): ball (%v, %v, %v) misses %v", trial, trial%4, got.x, got.y, got.r, want)
		}
		if m := math.Abs(got.x); m > 1e-300 {
			worst = math.Max(worst, got.r/m)
		}
		if z := (ddBall{got.x, got.y, 0}); !z.contains(want) {
			missed++
		}
	}
	t.Logf("largest relative radius %.3g; %d of 3000 results outside the zero-radius ball", worst, missed)
	if worst > 0x1p-90 {
		t.Errorf("relative radius %g above 2^-90", worst)
	}
	if missed == 0 {
		t.Error("negative control: every result lies on its midpoint; the test cannot see a radius")
	}
}
