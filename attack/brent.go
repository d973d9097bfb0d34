package attack

import "math"

const golden = 0.3819660112501051 // (3 - sqrt 5) / 2

// maximize finds a local maximum of f on [lo, hi] near x0: it brackets the
// maximum by steps of h growing geometrically from x0, then refines the
// bracket by Brent's method to an absolute tolerance tol in x. f may return
// -Inf (or NaN) where it cannot be evaluated.
func maximize(f func(float64) float64, x0, h, lo, hi, tol float64) (xmax, fmax float64) {
	g := func(x float64) float64 {
		if y := f(x); !math.IsNaN(y) {
			return y
		}
		return math.Inf(-1)
	}
	clamp := func(x float64) float64 { return min(max(x, lo), hi) }
	x0 = clamp(x0)
	f0 := g(x0)
	up, down := clamp(x0+h), clamp(x0-h)
	fup := g(up)
	dir, prev, cur, fcur := 1.0, x0, up, fup
	if !(fup > f0) {
		fdown := g(down)
		if !(fdown > f0) {
			return brentMax(g, down, up, x0, f0, tol)
		}
		dir, cur, fcur = -1, down, fdown
	}
	for step := h; ; {
		step *= 2
		next := clamp(cur + dir*step)
		if next == cur {
			// The maximum is at (or within tol of) the bound.
			return brentMax(g, min(prev, cur), max(prev, cur), cur-dir*tol/2, math.NaN(), tol)
		}
		fnext := g(next)
		if !(fnext > fcur) {
			return brentMax(g, min(prev, next), max(prev, next), cur, fcur, tol)
		}
		prev, cur, fcur = cur, next, fnext
	}
}

// brentMax maximises f on [a, b] by Brent's method (golden section with
// parabolic steps; Brent, Algorithms for Minimization without Derivatives,
// 1973, chapter 5), to an absolute tolerance tol in x, starting from the
// interior point x0 (with f(x0) = f0, or NaN if not evaluated).
// gonum/optimize has no bounded one-dimensional optimiser.
func brentMax(f func(float64) float64, a, b, x0, f0, tol float64) (xmax, fmax float64) {
	g := func(x float64) float64 {
		if y := f(x); !math.IsNaN(y) {
			return -y
		}
		return math.Inf(1)
	}
	x := x0
	fx := -f0
	if math.IsNaN(f0) {
		fx = g(x)
	}
	w, v := x, x
	fw, fv := fx, fx
	var d, e float64
	for range 100 {
		m := 0.5 * (a + b)
		tol2 := 2 * tol
		if math.Abs(x-m) <= tol2-0.5*(b-a) {
			break
		}
		parabolic := false
		if math.Abs(e) > tol {
			r := (x - w) * (fx - fv)
			q := (x - v) * (fx - fw)
			p := (x-v)*q - (x-w)*r
			q = 2 * (q - r)
			if q > 0 {
				p = -p
			} else {
				q = -q
			}
			if math.Abs(p) < math.Abs(0.5*q*e) && p > q*(a-x) && p < q*(b-x) {
				e, d = d, p/q
				if u := x + d; u-a < tol2 || b-u < tol2 {
					d = math.Copysign(tol, m-x)
				}
				parabolic = true
			}
		}
		if !parabolic {
			if x < m {
				e = b - x
			} else {
				e = a - x
			}
			d = golden * e
		}
		u := x + d
		if math.Abs(d) < tol {
			u = x + math.Copysign(tol, d)
		}
		fu := g(u)
		if fu <= fx {
			if u < x {
				b = x
			} else {
				a = x
			}
			v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
			continue
		}
		if u < x {
			a = u
		} else {
			b = u
		}
		switch {
		case fu <= fw || w == x:
			v, fv, w, fw = w, fw, u, fu
		case fu <= fv || v == x || v == w:
			v, fv = u, fu
		}
	}
	return x, -fx
}
