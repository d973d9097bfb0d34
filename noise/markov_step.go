package noise

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// markovStep is the implemented transition of one component over one
// distinct time step: s' = Â s + B̂ z with float64 Â (the model's rounding
// of the exact whitened transition Ã) and lower-triangular B̂, read as real
// numbers, with
//
//	e  >= ||Â - Ã||_2                 (from the model, rigorous),
//	r  >= ||Â Âᵀ + B̂ B̂ᵀ - I||_2        (computed here, rigorous),
//	na >= sqrt(1 + r) >= ||Â||_2, ||B̂||_2.
//
// The last line: Â Âᵀ ⪯ Â Âᵀ + B̂ B̂ᵀ ⪯ (1 + r) I, and likewise for B̂.
type markovStep struct {
	a, b []float64 // d×d row-major; b lower-triangular
	e, r float64
	na   float64
	nb   float64 // >= ||B̂||_F >= ||B̂||_2: far below na for a long lengthscale
	dt   float64 // the step's float part (its real value is dt + lo, |lo| <= u·dt)
}

// ballUp inflates a float computation of sums and products of at most
// 4096 non-negative terms so that it bounds the exact value: each rounding
// is a relative 2^-53 at most, (1 + 2^-53)^4096 < 1 + 2^-40.5, and the
// multiplication by 1 + 2^-40 loses at most another 2^-53.
func ballUp(x float64) float64 { return x * (1 + 0x1p-40) }

// newMarkovStep builds the step for the transition Â (from the model) and
// its bound e: B̂ is the Cholesky factor of I - Â Âᵀ computed in
// double-double arithmetic and rounded to float64 (with a diagonal jitter
// if the matrix is not numerically positive definite: Â is a rounding of
// a contraction whose largest singular value can be within 2^-53 of 1),
// and r bounds the norm of the exact residual Â Âᵀ + B̂ B̂ᵀ - I, so any
// imperfection of B̂ is accounted for, not assumed away.
func newMarkovStep(a []float64, d int, e, dt float64) (*markovStep, error) {
	st := &markovStep{a: a, b: make([]float64, d*d), e: e, dt: dt}
	if isIdentity(a, d) {
		// A zero step: B̂ = 0 and the residual is exactly 0.
		st.na = 1
		return st, nil // nb = 0: B̂ = 0
	}
	// M = I - Â Âᵀ, each entry an accurate double-double (Sum2 of the
	// exact products).
	m := make([]dd, d*d)
	terms := make([]float64, 0, 4*d+1)
	for i := range d {
		for j := 0; j <= i; j++ {
			terms = terms[:0]
			if i == j {
				terms = append(terms, 1)
			}
			for k := range d {
				p, q := numeric.TwoProd(a[i*d+k], a[j*d+k])
				terms = append(terms, -p, -q)
			}
			m[i*d+j] = sum2(terms)
		}
	}
	ladder := numeric.JitterLadder{Floor: 0x1p-60, Factor: 4, Cap: 0x1p-40}
	for jit := 0.0; ; {
		if l, ok := ddCholesky(m, d, jit); ok {
			for i := range d * d {
				st.b[i] = l[i].hi + l[i].lo
			}
			break
		}
		next, ok := ladder.Next(jit)
		if !ok {
			return nil, fmt.Errorf("noise: the whitened process noise I - ÂÂᵀ is not positive semi-definite even with jitter %g (‖Â‖ > 1?)", jit)
		}
		jit = next
	}
	st.r = stepResidual(a, st.b, d)
	st.na = numeric.SqrtUp(ballUp(1 + st.r))
	fro := 0.0
	for _, x := range st.b {
		fro += x * x
	}
	st.nb = math.Min(st.na, numeric.SqrtUp(ballUp(fro)))
	return st, nil
}

func isIdentity(a []float64, d int) bool {
	for i := range d {
		for j := range d {
			want := 0.0
			if i == j {
				want = 1
			}
			if a[i*d+j] != want {
				return false
			}
		}
	}
	return true
}

// dd is a double-double hi + lo, |lo| <= ulp(hi)/2, used where only
// accuracy matters (the factor B̂): rigor comes from stepResidual.
type dd struct{ hi, lo float64 }

func ddNorm(s, e float64) dd {
	hi, lo := numeric.TwoSum(s, e)
	return dd{hi, lo}
}

func (x dd) add(y dd) dd {
	s, e := numeric.TwoSum(x.hi, y.hi)
	return ddNorm(s, e+x.lo+y.lo)
}

func (x dd) mul(y dd) dd {
	p, q := numeric.TwoProd(x.hi, y.hi)
	return ddNorm(p, q+x.hi*y.lo+x.lo*y.hi)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.add(y.mul(dd{q1, 0}).neg())
	q2 := r.hi / y.hi
	r = r.add(y.mul(dd{q2, 0}).neg())
	return ddNorm(q1, q2).add(dd{r.hi / y.hi, 0})
}

func (x dd) sqrt() dd {
	s := math.Sqrt(x.hi)
	if s == 0 {
		return dd{}
	}
	p, q := numeric.TwoProd(s, s)
	r := x.add(dd{-p, -q})
	return ddNorm(s, r.hi/(2*s))
}

// sum2 returns Σ p_i as a double-double by Ogita, Rump and Oishi's Sum2
// (cascaded TwoSum): with res = s + σ, |res - Σp| <= u|Σp| + γ²_(n-1)Σ|p|.
func sum2(p []float64) dd {
	if len(p) == 0 {
		return dd{}
	}
	s, sigma := p[0], 0.0
	for _, v := range p[1:] {
		var q float64
		s, q = numeric.TwoSum(s, v)
		sigma += q
	}
	return ddNorm(s, sigma)
}

// ddCholesky factorises M + jit·I (lower triangle of m) in double-double,
// failing on a pivot that is not positive.
func ddCholesky(m []dd, d int, jit float64) ([]dd, bool) {
	l := make([]dd, d*d)
	for c := range d {
		s := m[c*d+c].add(dd{jit, 0})
		for k := range c {
			s = s.add(l[c*d+k].mul(l[c*d+k]).neg())
		}
		if !(s.hi > 0) {
			return nil, false
		}
		l[c*d+c] = s.sqrt()
		for i := c + 1; i < d; i++ {
			s := m[i*d+c]
			for k := range c {
				s = s.add(l[i*d+k].mul(l[c*d+k]).neg())
			}
			l[i*d+c] = s.div(l[c*d+c])
		}
	}
	return l, true
}

// stepResidual returns an upper bound on ||Â Âᵀ + B̂ B̂ᵀ - I||_2. Entry
// (i, j) is the sum of the n = 4d+1 floats p, q of the exact products
// (TwoProd) and -δ_ij, summed by Sum2, so by Ogita, Rump and Oishi
// (Proposition 4.5) |R_ij| <= (|res| + γ²_(n-1)Σ|terms|)/(1 - u), plus
// 2^-1074 per product for underflow; the spectral norm is at most the
// Frobenius norm of those bounds, rounded up.
func stepResidual(a, b []float64, d int) float64 {
	terms := make([]float64, 0, 4*d+1)
	n := 4*d + 1
	nu := float64(n-1) * unitRoundoff
	g2 := nu / (1 - nu) * nu / (1 - nu) * (1 + 0x1p-40)
	sum := 0.0
	for i := range d {
		for j := range d {
			terms = terms[:0]
			if i == j {
				terms = append(terms, -1)
			}
			for k := range d {
				for _, mtx := range [2][]float64{a, b} {
					p, q := numeric.TwoProd(mtx[i*d+k], mtx[j*d+k])
					terms = append(terms, p, q)
				}
			}
			res := sum2(terms)
			abs := 0.0
			for _, v := range terms {
				abs += math.Abs(v)
			}
			// res.hi = fl(s + σ) is Sum2's result.
			bound := ballUp((math.Abs(res.hi)+g2*ballUp(abs))*(1+0x1p-52) + float64(2*d)*0x1p-1074)
			sum += bound * bound
		}
	}
	return numeric.SqrtUp(ballUp(sum))
}
