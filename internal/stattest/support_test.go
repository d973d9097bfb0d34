package stattest

import (
	"math"
	"testing"
)

func TestSupportAttack(t *testing.T) {
	// Releases 0..9; the neighbour can only produce even numbers.
	var ys []int
	for y := range 10 {
		ys = append(ys, y)
	}
	r := SupportAttack(ys, func(y int) bool { return y%2 == 0 })
	if r.Tested != 10 || r.Impossible != 5 || r.Rate() != 0.5 {
		t.Errorf("SupportAttack = %+v, rate %g; want 10 tested, 5 impossible", r, r.Rate())
	}
	// p = 0.5, n = 10, z = 2: 0.5 - 2·√(0.025) = 0.18377.
	if b := r.DeltaLowerBound(2); math.Abs(b-(0.5-2*math.Sqrt(0.025))) > 1e-15 {
		t.Errorf("DeltaLowerBound = %g", b)
	}
	if b := (SupportResult{Tested: 100}).DeltaLowerBound(Z); b != 0 {
		t.Errorf("no impossible release: bound %g, want 0", b)
	}
	if r := SupportAttack([]int(nil), func(int) bool { return false }); r.Rate() != 0 {
		t.Errorf("empty attack rate %g", r.Rate())
	}
}

func TestCoverLattice(t *testing.T) {
	ys := []float64{0, 0.5, 1, 1, 1.25, math.NaN(), math.Inf(1), 7}
	c, err := CoverLattice(ys, 0.5, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Points 0, 0.5, 1, 1.5, 2; hit 0, 0.5, 1; 1.25, NaN, +Inf off the lattice
	// (7 is on it, outside the window).
	if c.Points != 5 || c.Hit != 3 || c.OffLattice != 3 || len(c.Missing) != 2 || c.Missing[0] != 1.5 || c.Missing[1] != 2 {
		t.Errorf("coverage %+v", c)
	}
	if f := c.Fraction(); f != 0.6 {
		t.Errorf("fraction %g, want 0.6", f)
	}
	// A window of 2^41 points is counted, not enumerated.
	c, err = CoverLattice([]float64{0, 0x1p-40}, 0x1p-40, -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Points != 1<<41+1 || c.Hit != 2 || len(c.Missing) != maxListedMissing {
		t.Errorf("wide window: %+v", c)
	}
	for _, bad := range [][3]float64{{0, 0, 1}, {-1, 0, 1}, {1, 2, 1}, {0x1p-60, -1, 1}} {
		if _, err := CoverLattice(nil, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("CoverLattice(g=%v, [%v, %v]) accepted", bad[0], bad[1], bad[2])
		}
	}
	if p := MissProbability(0.5, 3); math.Abs(p-0.125) > 1e-16 {
		t.Errorf("MissProbability(0.5, 3) = %g", p)
	}
}

func TestNormalCellProbs(t *testing.T) {
	p := NormalCellProbs(0, 1, 1, -3, 3)
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if math.Abs(sum-1) > 1e-15 {
		t.Errorf("cell probabilities sum to %.17g", sum)
	}
	// P(|X| < 1/2) = erf(1/(2√2)) = 0.38292492254802620727 (mpmath).
	if math.Abs(p[3]-0.38292492254802620727) > 1e-16 {
		t.Errorf("P(cell 0) = %.17g", p[3])
	}
	for k := range 3 {
		if math.Abs(p[k]-p[6-k]) > 1e-16 {
			t.Errorf("asymmetric cells %d: %g vs %g", k, p[k], p[6-k])
		}
	}
	// The end cells absorb the tails: P(X < -2.5) = Φ(-2.5).
	if math.Abs(p[0]-0.5*math.Erfc(2.5/math.Sqrt2)) > 1e-17 {
		t.Errorf("tail cell %g", p[0])
	}
	// Shift and scale: N(3, 2²) on g = 2 is N(1.5, 1) on g = 1.
	q := NormalCellProbs(3, 2, 2, -2, 5)
	r := NormalCellProbs(1.5, 1, 1, -2, 5)
	for i := range q {
		if math.Abs(q[i]-r[i]) > 1e-16 {
			t.Errorf("scaling: %g vs %g", q[i], r[i])
		}
	}
}

func TestBivariateNormalRect(t *testing.T) {
	inf := math.Inf(1)
	// Orthant: P(X < 0, Y < 0) = 1/4 + asin(ρ)/(2π) (Sheppard).
	for _, rho := range []float64{0, 0.5, -0.7, 0.95} {
		got := BivariateNormalRect(-inf, 0, -inf, 0, rho)
		want := 0.25 + math.Asin(rho)/(2*math.Pi)
		if math.Abs(got-want) > 1e-14 {
			t.Errorf("orthant rho=%g: %.16g, want %.16g", rho, got, want)
		}
	}
	// Whole plane.
	if p := BivariateNormalRect(-inf, inf, -inf, inf, 0.8); math.Abs(p-1) > 1e-14 {
		t.Errorf("whole plane %.16g", p)
	}
	// Independence: a rectangle is a product of intervals.
	got := BivariateNormalRect(-0.3, 1.2, 0.1, 0.6, 0)
	want := normalInterval(-0.3, 1.2) * normalInterval(0.1, 0.6)
	if math.Abs(got-want) > 1e-15 {
		t.Errorf("rho=0 rectangle %.16g, want %.16g", got, want)
	}
	// Additivity across a split of both axes.
	whole := BivariateNormalRect(-1, 1, -0.5, 2, 0.8)
	parts := BivariateNormalRect(-1, 0.25, -0.5, 0.7, 0.8) + BivariateNormalRect(0.25, 1, -0.5, 0.7, 0.8) +
		BivariateNormalRect(-1, 0.25, 0.7, 2, 0.8) + BivariateNormalRect(0.25, 1, 0.7, 2, 0.8)
	if math.Abs(whole-parts) > 1e-15 {
		t.Errorf("additivity %.16g vs %.16g", whole, parts)
	}
	if p := BivariateNormalRect(1, 1, 0, 1, 0.3); p != 0 {
		t.Errorf("empty rectangle %g", p)
	}
}

func TestPoolSmall(t *testing.T) {
	counts := []int{50, 1, 40, 2, 7}
	probs := []float64{0.5, 0.01, 0.4, 0.02, 0.07}
	c, p := PoolSmall(counts, probs, 5)
	// n = 100: expected 50, 1, 40, 2, 7; bins 1 and 3 pool.
	if len(c) != 4 || c[3] != 3 || math.Abs(p[3]-0.03) > 1e-16 || c[2] != 7 {
		t.Errorf("PoolSmall = %v %v", c, p)
	}
	c, _ = PoolSmall([]int{10, 10}, []float64{0.5, 0.5}, 5)
	if len(c) != 2 {
		t.Errorf("nothing to pool, got %v", c)
	}
}
