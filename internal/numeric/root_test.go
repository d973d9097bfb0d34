package numeric

import (
	"errors"
	"math"
	"testing"
)

// Bisect on a monotone predicate returns adjacent floats that straddle the
// boundary, from any bracket.
func TestBisectAdjacent(t *testing.T) {
	for _, root := range []float64{math.Pi, 1e-300, 0.1, 1e10} {
		lo, hi := Bisect(func(x float64) bool { return x < root }, 0, 2*root+1, Tol{})
		if !(lo < root) || hi < root || math.Nextafter(lo, math.Inf(1)) != hi {
			t.Errorf("root %g: bracket [%.17g, %.17g]", root, lo, hi)
		}
	}
	// Deep into the subnormals the default 2000 halvings still suffice.
	lo, hi := Bisect(func(x float64) bool { return x < 5e-324 }, 0, 1, Tol{})
	if lo != 0 || hi != 5e-324 {
		t.Errorf("subnormal boundary: [%g, %g]", lo, hi)
	}
}

// A tolerance stops early, at hi − lo ≤ Abs + Rel·|lo|, with the boundary
// still inside.
func TestBisectTolerance(t *testing.T) {
	tol := Tol{Abs: 1e-6, Rel: 1e-6}
	calls := 0
	lo, hi := Bisect(func(x float64) bool { calls++; return x < math.E }, 0, 100, tol)
	if !(lo < math.E && math.E <= hi) || hi-lo > tol.Abs+tol.Rel*lo || hi-lo < (tol.Abs+tol.Rel*lo)/2 {
		t.Errorf("bracket [%v, %v], width %g", lo, hi, hi-lo)
	}
	if calls > 30 {
		t.Errorf("%d evaluations for a 1e-6 tolerance from width 100", calls)
	}
	calls = 0
	if lo, _ := Bisect(func(float64) bool { calls++; return true }, 0, 1, Tol{MaxIter: 3}); calls != 3 || lo != 0.875 {
		t.Errorf("MaxIter 3: %d evaluations, lo %v", calls, lo)
	}
}

func TestBisectErr(t *testing.T) {
	boom := errors.New("boom")
	lo, hi, err := BisectErr(func(x float64) (bool, error) {
		if x > 5 {
			return false, boom
		}
		return true, nil
	}, 0, 8, Tol{})
	if !errors.Is(err, boom) || lo != 4 || hi != 8 {
		t.Errorf("lo %v hi %v err %v", lo, hi, err)
	}
}

func TestGrowBracket(t *testing.T) {
	lo, hi := GrowBracket(func(x float64) bool { return x < 100 }, 1, 2)
	if lo != 64 || hi != 128 {
		t.Errorf("bracket [%v, %v], want [64, 128]", lo, hi)
	}
	if _, hi := GrowBracket(func(float64) bool { return true }, 0, 1); !math.IsInf(hi, 1) {
		t.Errorf("an unbounded predicate gave hi = %v", hi)
	}
}
