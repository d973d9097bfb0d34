package stattest

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// The cell probabilities sum to 1, are symmetric for a centred
// uncorrelated normal, and the central cell of a standard normal on a unit
// grid has probability (Φ(1/2) - Φ(-1/2))².
func TestBivariateCellProbs(t *testing.T) {
	p := BivariateCellProbs(0, 0, 1, 1, 0, 1, 0, 0, 3)
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("sum %v", sum)
	}
	c := numeric.Phi(0.5) - numeric.Phi(-0.5)
	if got := p[3*7+3]; math.Abs(got-c*c) > 1e-13 {
		t.Errorf("central cell %v, want %v", got, c*c)
	}
	if math.Abs(p[0]-p[6]) > 1e-15 || math.Abs(p[2*7+1]-p[1*7+2]) > 1e-15 {
		t.Errorf("asymmetric: %v %v %v %v", p[0], p[6], p[2*7+1], p[1*7+2])
	}
	// Correlation moves mass to the diagonal.
	q := BivariateCellProbs(0, 0, 1, 1, 0.8, 1, 0, 0, 3)
	if !(q[2*7+2] > p[2*7+2] && q[2*7+4] < p[2*7+4]) {
		t.Errorf("correlation 0.8: diagonal %v vs %v, anti-diagonal %v vs %v", q[2*7+2], p[2*7+2], q[2*7+4], p[2*7+4])
	}
}

// The false-alarm bound is the union bound over the window's points: for
// a window of one point it is (1 - p)^n exactly.
func TestCoverLatticeFalseAlarm(t *testing.T) {
	p := NormalCellProbs(0.2, 1, 1, -1, 1)[1]
	if got, want := CoverLatticeFalseAlarm(0.2, 1, 1, -0.5, 0.5, 10), math.Pow(1-p, 10); math.Abs(got-want) > 1e-15 {
		t.Errorf("one point: %v, want %v", got, want)
	}
	if got := CoverLatticeFalseAlarm(0, 1, 1, 0.2, 0.7, 10); got != 0 {
		t.Errorf("empty window: %v", got)
	}
	if a, b := CoverLatticeFalseAlarm(0, 50, 1, -100, 100, 20000), CoverLatticeFalseAlarm(0, 50, 1, -100, 100, 40000); !(b < a && a < 1e-6) {
		t.Errorf("bound %v at n = 20,000 and %v at 40,000", a, b)
	}
}
