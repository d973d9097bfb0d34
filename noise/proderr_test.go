package noise

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProdErrIsFMA checks that Dekker's product error, which the
// WebAssembly build uses where dekkerSafe allows, has the bits of
// math.FMA(a, b, -fl(a·b)) on every input it is used for: a seeded release
// on the device must be the library's, byte for byte (issue 33). The
// negative control: Dekker's sum without its last partial product differs
// from math.FMA on some of the same inputs, so the comparison can fail.
func TestProdErrIsFMA(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	safe, broken, nonzero := 0, 0, 0
	check := func(a, b float64) {
		p := a * b
		want := math.FMA(a, b, -p)
		if got := prodErr(a, b, p); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("prodErr(%g, %g) = %g, math.FMA gives %g", a, b, got, want)
		}
		if !dekkerSafe(a, b, p) {
			return
		}
		safe++
		got := dekkerErr(a, b, p)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("dekkerErr(%x, %x) = %x, math.FMA gives %x", math.Float64bits(a), math.Float64bits(b), math.Float64bits(got), math.Float64bits(want))
		}
		if want != 0 {
			nonzero++
		}
		// The negative control: drop al·bl.
		const split = 0x1p27 + 1
		ca, cb := split*a, split*b
		ah, bh := ca-(ca-a), cb-(cb-b)
		al, bl := a-ah, b-bh
		if bad := (ah*bh - p) + ah*bl + al*bh; math.Float64bits(bad) != math.Float64bits(want) {
			broken++
		}
	}
	for range 200_000 {
		// Mantissas of every width (full, short, powers of two) over the
		// whole exponent range, both signs, with the edges of dekkerSafe.
		a := math.Ldexp(1+rng.Float64(), rng.IntN(2100)-1075)
		b := math.Ldexp(1+rng.Float64(), rng.IntN(2100)-1075)
		switch rng.IntN(4) {
		case 0:
			a = math.Ldexp(math.Round(math.Ldexp(a, 20-math.Ilogb(a))), math.Ilogb(a)-20)
		case 1:
			b = float64(rng.Uint64N(1<<53)) * math.Ldexp(1, rng.IntN(200)-600)
		}
		if rng.IntN(2) == 0 {
			a = -a
		}
		check(a, b)
		// The device's operands: transition coefficients and unit deviates.
		check(rng.Float64(), rng.NormFloat64()*math.Ldexp(1, rng.IntN(60)-30))
	}
	for _, e := range []float64{0x1p-900, 0x1p995, 0x1p-1074, math.SmallestNonzeroFloat64, 0, math.Inf(1), math.NaN(), math.MaxFloat64} {
		check(e, 1.5)
		check(-e, math.Pi)
		check(e, 0x1p-60)
	}
	if safe < 100_000 || nonzero < 100_000 || broken == 0 {
		t.Fatalf("the comparison did not reach its cases: %d safe, %d with a nonzero error, %d caught by the negative control", safe, nonzero, broken)
	}
	t.Logf("%d safe inputs compared (%d with a nonzero error); the broken sum differs on %d", safe, nonzero, broken)
}
