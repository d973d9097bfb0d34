package noise

import (
	"math"
	"runtime"
)

// prodErr returns a·b − p for p = fl(a·b), the error of a rounded product,
// with the bits of math.FMA(a, b, -p).
//
// Why not math.FMA everywhere: WebAssembly has no fused multiply-add, and
// Go's portable math.FMA (128-bit integer arithmetic) was 13 % of the
// device's 10,000-point release in a browser (issue 33). There, Dekker's
// product (Veltkamp's split) computes the same number: a·b − p is exactly
// representable and Dekker's sum is exact whenever no partial product
// underflows and no split overflows, which dekkerSafe guarantees; outside
// that range, and natively (where math.FMA is one instruction), math.FMA.
// TestProdErrIsFMA compares the two bit for bit.
func prodErr(a, b, p float64) float64 {
	if runtime.GOARCH == "wasm" && dekkerSafe(a, b, p) {
		return dekkerErr(a, b, p)
	}
	return math.FMA(a, b, -p)
}

// dekkerSafe reports whether Dekker's product of a and b is exact: both
// split without overflow (|x| < 2^995), and a, b and the product are
// normal and far from underflow (at least 2^-900: every partial product
// and sum is then a multiple of 2^-1006, so none is rounded to a
// subnormal). p = 0 (math.FMA's sign of zero), infinities and NaNs take
// math.FMA.
func dekkerSafe(a, b, p float64) bool {
	const big, tiny = 0x1p995, 0x1p-900
	ap, aa, ab := math.Abs(p), math.Abs(a), math.Abs(b)
	return ap >= tiny && ap < big && aa >= tiny && aa < big && ab >= tiny && ab < big
}

// dekkerErr is Dekker's exact error of the product p = fl(a·b) (Veltkamp
// split at 27 bits; Dekker 1971).
func dekkerErr(a, b, p float64) float64 {
	const split = 0x1p27 + 1
	ca := split * a
	ah := ca - (ca - a)
	al := a - ah
	cb := split * b
	bh := cb - (cb - b)
	bl := b - bh
	return ((ah*bh - p) + ah*bl + al*bh) + al*bl
}
