package numeric

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// SqrtUp bounds √x from above and is at most one ulp above the correctly
// rounded root: checked by squaring in exact arithmetic.
func TestSqrtUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	xs := []float64{0, 1, 2, 4, 0x1p-1074, math.MaxFloat64, 1e-300}
	for range 20000 {
		xs = append(xs, math.Ldexp(rng.Float64()+0.5, rng.IntN(2000)-1000))
	}
	for _, x := range xs {
		r := SqrtUp(x)
		sq := wide().Mul(exact(r), exact(r))
		if sq.Cmp(exact(x)) < 0 {
			t.Fatalf("SqrtUp(%g) = %g: its square is below x", x, r)
		}
		if x > 0 && r > math.Nextafter(math.Sqrt(x), math.Inf(1)) {
			t.Fatalf("SqrtUp(%g) = %g: more than one ulp above math.Sqrt", x, r)
		}
	}
	if SqrtUp(0) != 0 {
		t.Error("SqrtUp(0) != 0")
	}
}

// FloatUp returns the least float64 at or above x: exact values come back
// unchanged, others one float up from below, and beyond the range +Inf.
func TestFloatUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for range 20000 {
		f := math.Ldexp(rng.Float64()+0.5, rng.IntN(2000)-1000)
		if rng.IntN(2) == 0 {
			f = -f
		}
		if got := FloatUp(exact(f)); got != f {
			t.Fatalf("FloatUp(%g) = %g, want it unchanged", f, got)
		}
		// A real strictly between f and the next float up.
		next := math.Nextafter(f, math.Inf(1))
		mid := wide().Add(exact(f), exact(next))
		mid.SetMantExp(mid, -1)
		if got := FloatUp(mid); got != next {
			t.Fatalf("FloatUp(midpoint of %g, %g) = %g, want %g", f, next, got, next)
		}
	}
	huge := wide().Mul(exact(math.MaxFloat64), exact(2))
	if got := FloatUp(huge); !math.IsInf(got, 1) {
		t.Errorf("FloatUp(2·MaxFloat64) = %g, want +Inf", got)
	}
	if got := FloatUp(huge.Neg(huge)); got != -math.MaxFloat64 {
		t.Errorf("FloatUp(-2·MaxFloat64) = %g, want -MaxFloat64", got)
	}
}

// PowUp bounds θ^j from above (θ^j computed with big.Float to 4000 bits,
// far finer than the inflation) and stays within the slack of its
// rounding: fewer than 2j inflations by the caller's factor (squaring
// doubles the inflation a base carries), above θ^j or the floor 2^-900.
func TestPowUp(t *testing.T) {
	up := func(x float64) float64 { return x * (1 + 0x1p-40) }
	rng := rand.New(rand.NewPCG(17, 5))
	floor := exact(0x1p-900)
	floored := 0
	for range 2000 {
		theta := rng.Float64()
		j := float64(1 + rng.IntN(3000))
		got := PowUp(theta, j, up)
		want := new(big.Float).SetPrec(4000).SetFloat64(1)
		th := exact(theta)
		for range int(j) {
			want.Mul(want, th)
		}
		if exact(got).Cmp(want) < 0 {
			t.Fatalf("PowUp(%g, %g) = %g below θ^j = %g", theta, j, got, want)
		}
		w, _ := want.Float64()
		if slack := 2 * j * 0x1p-39; got > math.Max(w, 0x1p-900)*(1+slack) {
			t.Fatalf("PowUp(%g, %g) = %g, more than %g above max(θ^j, 2^-900) = %g", theta, j, got, slack, math.Max(w, 0x1p-900))
		}
		if want.Cmp(floor) < 0 {
			floored++
		}
	}
	if floored == 0 {
		t.Error("no case below the floor: the test does not reach it")
	}
}
