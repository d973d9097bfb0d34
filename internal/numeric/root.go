package numeric

import "math"

// Tol says when a bracket is narrow enough: when hi − lo ≤ Abs + Rel·|lo|,
// or after MaxIter halvings (0 means 2000, enough to reach adjacent floats
// from any finite bracket, subnormals included). The zero Tol narrows to
// adjacent floats.
type Tol struct {
	Abs, Rel float64
	MaxIter  int
}

func (t Tol) maxIter() int {
	if t.MaxIter > 0 {
		return t.MaxIter
	}
	return 2000
}

func (t Tol) done(lo, hi float64) bool {
	return (t.Abs > 0 || t.Rel > 0) && !(hi-lo > t.Abs+t.Rel*math.Abs(lo))
}

// Bisect narrows the bracket [lo, hi] of a monotone predicate: below(x) is
// true on the lo side of a boundary and false beyond it, and the caller
// vouches that below(lo) holds and below(hi) does not (Bisect evaluates
// only interior points). It halves the bracket until tol is met or the
// ends are adjacent floats, and returns both ends, so that each caller can
// take its conservative side: lo, where below holds, or hi, where it does
// not.
//
// Every monotone search in tracepriv is one call: "the largest σ whose δ
// stays below a target" is below(x) = δ(x) ≤ target, "the root of an
// increasing derivative" is below(x) = f′(x) < 0.
func Bisect(below func(float64) bool, lo, hi float64, tol Tol) (float64, float64) {
	lo, hi, _ = BisectErr(func(x float64) (bool, error) { return below(x), nil }, lo, hi, tol)
	return lo, hi
}

// BisectErr is Bisect for a predicate that can fail: the first error stops
// the search and is returned with the bracket reached so far.
func BisectErr(below func(float64) (bool, error), lo, hi float64, tol Tol) (float64, float64, error) {
	for range tol.maxIter() {
		if tol.done(lo, hi) {
			break
		}
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		b, err := below(mid)
		if err != nil {
			return lo, hi, err
		}
		if b {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi, nil
}

// GrowBracket extends [lo, hi] upwards for Bisect: while below(hi) holds,
// the boundary lies beyond hi, so lo moves to hi and hi doubles. hi must be
// positive. It returns hi = +Inf if below holds up to overflow.
func GrowBracket(below func(float64) bool, lo, hi float64) (float64, float64) {
	for !math.IsInf(hi, 1) && below(hi) {
		lo, hi = hi, 2*hi
	}
	return lo, hi
}
