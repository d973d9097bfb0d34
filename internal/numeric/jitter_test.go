package numeric

import "testing"

func TestJitterLadder(t *testing.T) {
	// gp.Factorize's ladder relative to the mean diagonal: 1e-15, ..., 1e-6.
	l := JitterLadder{Floor: 1e-15, Factor: 10, Cap: 1e-6}
	var rungs []float64
	for j, ok := l.Next(0); ok; j, ok = l.Next(j) {
		rungs = append(rungs, j)
	}
	if len(rungs) != 10 || rungs[0] != 1e-15 || rungs[9] != 1e-6 {
		t.Fatalf("rungs %v", rungs)
	}
	for i := 1; i < 9; i++ {
		if r := rungs[i] / rungs[i-1]; r < 9.999999 || r > 10.000001 {
			t.Errorf("rung %d is %g times the last", i, r)
		}
	}
	// A certified start above the floor grows by the factor and stops at
	// the cap, which is tried once.
	l = JitterLadder{Floor: 1e-15, Factor: 10, Cap: 1e-6}
	if j, ok := l.Next(3e-8); !ok || j != 3e-7 {
		t.Errorf("after 3e-8: %v %v", j, ok)
	}
	if j, ok := l.Next(3e-7); !ok || j != 1e-6 {
		t.Errorf("after 3e-7: %v %v", j, ok)
	}
	if _, ok := l.Next(1e-6); ok {
		t.Error("the cap is not final")
	}
}
