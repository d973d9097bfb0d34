package numeric

import (
	"fmt"
	"math"
	"testing"
)

// Reference values from mpmath.lambertw at 40 digits, and exact identities
// W(-k e^-k) = -k.
func TestLambertWm1Known(t *testing.T) {
	cases := []struct{ x, want, tol float64 }{
		{-1e-300, -697.3227762954601609954, 1e-15},
		{-1e-10, -26.29523881924692569411, 1e-15},
		{-0.1, -3.577152063957297218409, 1e-15},
		{-0.3678, -1.020927239409427553739, 1e-13}, // near the branch point W is ill-conditioned in x
		{-math.Ln2 / 2, -2 * math.Ln2, 1e-15},
		{-2 * math.Exp(-2), -2, 1e-15},
		{-5 * math.Exp(-5), -5, 1e-15},
		{-30 * math.Exp(-30), -30, 1e-15},
		{-math.Exp(-1), -1, 1e-15},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("x=%g", c.x), func(t *testing.T) {
			if got := LambertWm1(c.x); !(lwRelErr(got, c.want) <= c.tol) {
				t.Errorf("LambertWm1(%v) = %.17g, want %.17g (rel err %.2g > %g)", c.x, got, c.want, lwRelErr(got, c.want), c.tol)
			}
		})
	}
}

// TestLambertWm1Identity checks w·e^w = x and w <= -1 across the domain,
// logarithmically spaced towards both ends. The tolerance is the backward
// error allowed by the conditioning of x(w) = w e^w: a relative error of
// 4·ε_mach·(1+|w|) in x.
func TestLambertWm1Identity(t *testing.T) {
	const invE = 0.36787944117144233
	var xs []float64
	for k := 1; k <= 300; k++ { // towards 0: -1e-k
		xs = append(xs, -math.Pow(10, -float64(k)))
	}
	for k := 1; k <= 15; k++ { // towards -1/e
		xs = append(xs, -invE+math.Pow(10, -float64(k)))
	}
	for i := 1; i < 100; i++ {
		xs = append(xs, -invE*float64(i)/100)
	}
	xs = append(xs, -math.SmallestNonzeroFloat64, -0x1p-1022)
	for _, x := range xs {
		w := LambertWm1(x)
		if !(w <= -1) {
			t.Errorf("LambertWm1(%g) = %g, want <= -1", x, w)
			continue
		}
		res := w * math.Exp(w)
		if math.Abs(x) < 1e-290 {
			// w e^w underflows: check the logarithmic form ln(-w) + w = ln(-x).
			if d := math.Abs(math.Log(-w) + w - math.Log(-x)); d > 1e-13*math.Abs(w) {
				t.Errorf("LambertWm1(%g) = %g: log residual %g", x, w, d)
			}
			continue
		}
		tol := 4 * 0x1p-52 * (1 + math.Abs(w))
		if r := lwRelErr(res, x); r > tol {
			t.Errorf("LambertWm1(%g) = %.17g: w e^w = %.17g, rel residual %.2g > %.2g", x, w, res, r, tol)
		}
	}
}

func TestLambertDomain(t *testing.T) {
	for _, x := range []float64{0, 1, -0.4, math.NaN(), math.Inf(-1)} {
		if w := LambertWm1(x); !math.IsNaN(w) {
			t.Errorf("LambertWm1(%v) = %v, want NaN", x, w)
		}
	}
	for _, x := range []float64{-0.4, math.NaN(), math.Inf(-1)} {
		if w := LambertW0(x); !math.IsNaN(w) {
			t.Errorf("LambertW0(%v) = %v, want NaN", x, w)
		}
	}
}

func TestLambertW0(t *testing.T) {
	cases := []struct{ x, want, tol float64 }{
		{0, 0, 0},
		{1, 0.5671432904097838729999687, 1e-15}, // the omega constant
		{math.E, 1, 1e-15},
		{-math.Ln2 / 2, -math.Ln2, 1e-15},
		{8 * math.Ln2, 2 * math.Ln2, 1e-15},
		{10 * math.Exp(10), 10, 1e-15},
		{-math.Exp(-1), -1, 1e-15},
		{1e-20, 1e-20, 1e-15},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("x=%g", c.x), func(t *testing.T) {
			if got := LambertW0(c.x); !(lwRelErr(got, c.want) <= c.tol) {
				t.Errorf("LambertW0(%v) = %.17g, want %.17g", c.x, got, c.want)
			}
		})
	}
	for _, x := range []float64{-0.36, -0.2, -1e-5, 1e-300, 0.5, 2, 100, 1e10, 1e300, math.MaxFloat64} {
		w := LambertW0(x)
		if x > 1e300 {
			if d := math.Abs(w + math.Log(w) - math.Log(x)); d > 1e-14*w {
				t.Errorf("LambertW0(%g) = %g: log residual %g", x, w, d)
			}
			continue
		}
		tol := 4 * 0x1p-52 * (1 + math.Abs(w))
		if r := lwRelErr(w*math.Exp(w), x); r > tol {
			t.Errorf("LambertW0(%g) = %.17g: rel residual %.2g > %.2g", x, w, r, tol)
		}
	}
}

// lwRelErr is the relative error of got, and |got| when want is 0 (W₀(0)).
func lwRelErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}
