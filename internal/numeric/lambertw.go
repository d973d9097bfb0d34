package numeric

import "math"

// LambertWm1 returns W₋₁(x), the branch of the Lambert W function
// (w·e^w = x) with w <= -1, for x in [-1/e, 0). It returns NaN outside that
// domain (including x = 0, where W₋₁ → -∞).
//
// Writing w = -1 - u turns w·e^w = x into u - ln(1+u) = t with
// t = -1 - ln(-x) >= 0, an equation that is well conditioned for all u > 0
// and, unlike the original, does not degenerate at the branch point x = -1/e.
// It is solved by Halley's method from the branch-point series (small t) or
// the asymptotic u ≈ t + ln(1+t) (large t); see SolveUMinusLog1p.
func LambertWm1(x float64) float64 {
	const invE = 0.36787944117144233 // 1/e rounded to nearest
	if math.IsNaN(x) || x >= 0 || x < -invE {
		return math.NaN()
	}
	t := math.Max(-1-math.Log(-x), 0)
	return -1 - SolveUMinusLog1p(t)
}

// LambertW0 returns W₀(x), the principal branch of the Lambert W function
// (w·e^w = x, w >= -1), for x >= -1/e; NaN below. It uses Halley's method on
// w·e^w = x for x <= e (started from the branch-point series near -1/e and
// from Winitzki's approximation elsewhere) and on w + ln w = ln x above e,
// which avoids overflow of e^w for huge x.
func LambertW0(x float64) float64 {
	const invE = 0.36787944117144233
	switch {
	case math.IsNaN(x) || x < -invE:
		return math.NaN()
	case x == -invE:
		return -1
	case x == 0:
		return 0
	case math.IsInf(x, 1):
		return x
	}
	if x > math.E {
		lx := math.Log(x)
		w := lx - math.Log(lx)
		for range 50 {
			f := w + math.Log(w) - lx
			d1 := 1 + 1/w
			d2 := -1 / (w * w)
			dw := 2 * f * d1 / (2*d1*d1 - f*d2)
			w -= dw
			if math.Abs(dw) <= 1e-16*math.Abs(w) {
				break
			}
		}
		return w
	}
	var w float64
	if x < -0.32 {
		p := math.Sqrt(2 * (math.E*x + 1))
		w = -1 + p - p*p/3 + 11*p*p*p/72
	} else {
		l := math.Log1p(x)
		w = l * (1 - math.Log1p(l)/(2+l))
	}
	for range 50 {
		ew := math.Exp(w)
		f := w*ew - x
		if f == 0 {
			break
		}
		wp1 := w + 1
		if wp1 == 0 {
			break
		}
		dw := f / (ew*wp1 - (w+2)*f/(2*wp1))
		w -= dw
		if math.Abs(dw) <= 1e-16*(1+math.Abs(w)) {
			break
		}
	}
	return w
}

// UMinusLog1p returns u - ln(1+u) for u >= 0 without the cancellation of the
// direct formula near 0: the alternating series u²/2 - u³/3 + … for u < 0.5.
func UMinusLog1p(u float64) float64 {
	if u >= 0.5 {
		return u - math.Log1p(u)
	}
	sum := 0.0
	pow := u * u
	for k := 2; k < 200; k++ {
		term := pow / float64(k)
		if k%2 == 1 {
			term = -term
		}
		sum += term
		if math.Abs(term) <= 1e-17*math.Abs(sum) {
			break
		}
		pow *= u
	}
	return sum
}

// SolveUMinusLog1p returns the u >= 0 with u - ln(1+u) = t, for t >= 0.
// This is -1 - W₋₁(-e^{-1-t}); the planar Laplace radius quantile is
// u(-ln(1-p))/ε. Halley's method converges cubically from the starting points
// below; the loop stops when the step is below the float resolution.
func SolveUMinusLog1p(t float64) float64 {
	switch {
	case math.IsNaN(t) || t < 0:
		return math.NaN()
	case t == 0:
		return 0
	case math.IsInf(t, 1):
		return t
	}
	var u float64
	if t < 2 {
		// Branch-point series of W₋₁ in q = √(2(1+ex)), 1+ex = 1-e^{-t}.
		q := math.Sqrt(-2 * math.Expm1(-t))
		u = q + q*q/3 + 11*q*q*q/72
	} else {
		u = t + math.Log1p(t+math.Log1p(t))
	}
	for range 50 {
		h := UMinusLog1p(u) - t
		d1 := u / (1 + u)
		d2 := 1 / ((1 + u) * (1 + u))
		du := 2 * h * d1 / (2*d1*d1 - h*d2)
		u -= du
		if u <= 0 {
			u = math.SmallestNonzeroFloat64
		}
		if math.Abs(du) <= 2e-16*u {
			break
		}
	}
	return u
}
