package numeric

// invGolden is (√5 − 1)/2, the golden-section ratio.
const invGolden = 0.6180339887498949

// MaximizeUnimodal returns the maximiser of g on [lo, hi] and its value, by
// golden-section search, for g unimodal on the interval (concave functions
// are). It narrows the bracket until tol is met, then compares the
// two interior points with the end points, since maxima of privacy
// trade-offs often sit at an end. If hi ≤ lo it returns lo and g(lo).
func MaximizeUnimodal(g func(float64) float64, lo, hi float64, tol Tol) (x, gx float64) {
	if hi <= lo {
		return lo, g(lo)
	}
	a, b := lo, hi
	c, d := b-invGolden*(b-a), a+invGolden*(b-a)
	gc, gd := g(c), g(d)
	for range tol.maxIter() {
		if tol.done(a, b) || !(b-a > 0) {
			break
		}
		if gc >= gd {
			b, d, gd = d, c, gc
			c = b - invGolden*(b-a)
			gc = g(c)
		} else {
			a, c, gc = c, d, gd
			d = a + invGolden*(b-a)
			gd = g(d)
		}
	}
	x, gx = c, gc
	if gd > gx {
		x, gx = d, gd
	}
	for _, e := range [2]float64{lo, hi} {
		if v := g(e); v > gx {
			x, gx = e, v
		}
	}
	return x, gx
}
