package cip

import (
	"math"
	"math/big"
	"math/cmplx"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// bigC is a complex number of big.Floats at placeRefPrec bits.
type bigC struct{ re, im *big.Float }

const placeRefPrec = 512

func bf(x float64) *big.Float { return new(big.Float).SetPrec(placeRefPrec).SetFloat64(x) }

func (z bigC) add(w bigC) bigC {
	return bigC{new(big.Float).Add(z.re, w.re), new(big.Float).Add(z.im, w.im)}
}

func (z bigC) scale(k *big.Float) bigC {
	return bigC{new(big.Float).Mul(z.re, k), new(big.Float).Mul(z.im, k)}
}

func (z bigC) mul(w bigC) bigC {
	re := new(big.Float).Sub(new(big.Float).Mul(z.re, w.re), new(big.Float).Mul(z.im, w.im))
	im := new(big.Float).Add(new(big.Float).Mul(z.re, w.im), new(big.Float).Mul(z.im, w.re))
	return bigC{re, im}
}

func (z bigC) inv() bigC {
	d := new(big.Float).Add(new(big.Float).Mul(z.re, z.re), new(big.Float).Mul(z.im, z.im))
	return bigC{new(big.Float).Quo(z.re, d), new(big.Float).Neg(new(big.Float).Quo(z.im, d))}
}

func (z bigC) abs() float64 {
	d := new(big.Float).Add(new(big.Float).Mul(z.re, z.re), new(big.Float).Mul(z.im, z.im))
	f, _ := new(big.Float).Sqrt(d).Float64()
	return f
}

// seriesMoment returns k^(m)(0) of k(s) = sum_n c_n s^n e^(-r s) from its
// Taylor series, m! sum_{n <= m} c_n (-r)^(m-n)/(m-n)!, not from the
// library's constants.
func seriesMoment(c []*big.Float, r *big.Float, m int) *big.Float {
	sum := bf(0)
	for n := 0; n <= m && n < len(c); n++ {
		term := new(big.Float).Set(c[n])
		for j := 1; j <= m-n; j++ {
			term.Mul(term, new(big.Float).Quo(new(big.Float).Neg(r), bf(float64(j))))
		}
		sum.Add(sum, term)
	}
	for j := 2; j <= m; j++ {
		sum.Mul(sum, bf(float64(j)))
	}
	return sum
}

// placeTailsRef returns, at u = w l for a unit-lengthscale member, the
// exact a(u) = 1 + u Im tau^(u), b(u) = u Re tau^(u) and the transforms of
// the derivative responses psi_j, in 512-bit arithmetic and independently
// of the library's expPoly algebra: the kernel's transform K^ = sum c_n n!
// /(r + iu)^(n+1) from its closed form (1; 1 + r s; 1 + r s + r^2 s^2/3
// times e^(-r s), r = sqrt(2p + 1)), the derivatives' transforms by
// F[dg/ds] = iu F[g] - g(0), and the conditioning on the state (f and its
// first two derivatives) at 0 solved with the second and fourth derivatives
// of k at 0 from its Taylor series.
func placeTailsRef(kernel string, u float64) (a, b float64, psi []bigC) {
	var p int64
	switch kernel {
	case gp.KernelMatern12:
		p = 0
	case gp.KernelMatern32:
		p = 1
	case gp.KernelMatern52:
		p = 2
	}
	r := new(big.Float).SetPrec(placeRefPrec).Sqrt(bf(float64(2*p + 1)))
	coef := []*big.Float{bf(1), r, new(big.Float).Quo(new(big.Float).Mul(r, r), bf(3))}[:p+1]
	y := bigC{r, bf(u)}.inv()
	k := bigC{bf(0), bf(0)}
	yk := y
	fact := int64(1)
	for n := range coef {
		if n > 0 {
			fact *= int64(n)
			yk = yk.mul(y)
		}
		k = k.add(yk.scale(new(big.Float).Mul(coef[n], bf(float64(fact)))))
	}
	iu := bigC{bf(0), bf(u)}
	one := bigC{bf(1), bf(0)}
	k1 := iu.mul(k).add(one.scale(bf(-1))) // k(0) = 1
	k2t := iu.mul(k1)                      // k'(0) = 0 for p >= 1
	var tau bigC
	switch p {
	case 0:
		tau = k
	case 1:
		tau = k
		psi = []bigC{k1.scale(new(big.Float).Quo(bf(1), seriesMoment(coef, r, 2)))} // k'/k''(0)
	case 2:
		m2, m4 := seriesMoment(coef, r, 2), seriesMoment(coef, r, 4)
		det := new(big.Float).Sub(m4, new(big.Float).Mul(m2, m2))
		tau = k.scale(new(big.Float).Quo(m4, det)).add(k2t.scale(new(big.Float).Quo(new(big.Float).Neg(m2), det)))
		psi = []bigC{k1.scale(new(big.Float).Quo(bf(1), m2)),
			k.scale(new(big.Float).Quo(new(big.Float).Neg(m2), det)).add(k2t.scale(new(big.Float).Quo(bf(1), det)))}
	}
	af, _ := new(big.Float).Add(bf(1), new(big.Float).Mul(bf(u), tau.im)).Float64()
	bfv, _ := new(big.Float).Mul(bf(u), tau.re).Float64()
	return af, bfv, psi
}

// The place table's entries bound the exact tails at every sampled grid
// point of the three kernels' tables, u from 10^-8 to 10^8: |a|, |b| and
// the derivative responses' largest vertex, recomputed in 512-bit
// arithmetic by an independent route (placeTailsRef). The entries are
// a = -Re tau'^, b = Im tau'^ plus fourierErr's rounding bound; the
// old form 1 + u Im tau^ cancelled. Negative controls: the same entries
// without their rounding term fall below the exact value somewhere, and
// the old form's error exceeds the value itself at large u.
func TestPlaceTableEntries(t *testing.T) {
	t.Parallel()
	stride := 97
	if testing.Short() {
		stride = 401
	}
	for _, kernel := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		tau, psi, _ := placeTails(kernel)
		dTau := tau.deriv()
		mu := PlaceSlopeBounds(kernel)
		tab, _ := newPlaceTable(kernel)
		n := len(tab.gSuffix)
		below, oldWorse, checked := 0, 0, 0
		for i := 0; i < n; i += stride {
			u := tab.u0 * math.Pow(tab.ratio, float64(i))
			a, b, best := tableEntry(dTau, psi, mu, u)
			ea, eb, epsi := placeTailsRef(kernel, u)
			bestEx := 0.0
			if len(epsi) > 0 {
				scaled := make([]bigC, len(epsi))
				for j := range epsi {
					scaled[j] = epsi[j].scale(bf(mu[j]))
				}
				for v := 0; v < 1<<(len(epsi)-1); v++ {
					z := scaled[0]
					for j := 1; j < len(epsi); j++ {
						s := scaled[j]
						if v>>(j-1)&1 == 1 {
							s = s.scale(bf(-1))
						}
						z = z.add(s)
					}
					bestEx = math.Max(bestEx, z.abs())
				}
			}
			if math.Abs(ea) > a || math.Abs(eb) > b || bestEx > best {
				t.Fatalf("%s, u = %.6g: exact (|a|, |b|, psi) = (%.17g, %.17g, %.17g) above the entry (%.17g, %.17g, %.17g)",
					kernel, u, math.Abs(ea), math.Abs(eb), bestEx, a, b, best)
			}
			// Not loose: the rounding term is tiny beside 1/(1 + u).
			if slack := (a - math.Abs(ea)) + (b - math.Abs(eb)); slack > 1e-12/(1+u) {
				t.Fatalf("%s, u = %.6g: the entry exceeds the exact value by %.3g", kernel, u, slack)
			}
			checked++
			// Control 1: the entries without the rounding term.
			f := dTau.fourier(u)
			if math.Abs(real(f)) < math.Abs(ea) || math.Abs(imag(f)) < math.Abs(eb) {
				below++
			}
			// Control 2: the old form, with math/cmplx's Pow.
			var old complex128
			for _, term := range tau {
				old += complex(term.c*factorial(term.n), 0) / cmplx.Pow(complex(term.a, u), complex(float64(term.n+1), 0))
			}
			if oa := 1 + u*imag(old); math.Abs(oa-ea) > math.Abs(ea) {
				oldWorse++
			}
		}
		t.Logf("%s: %d grid points; without the rounding term %d fall below the exact value; the old form's error exceeds a itself at %d",
			kernel, checked, below, oldWorse)
		if kernel == gp.KernelMatern52 && (below == 0 || oldWorse == 0) {
			t.Errorf("%s: negative controls did not fire (below %d, old form worse %d)", kernel, below, oldWorse)
		}
	}
}
