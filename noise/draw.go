package noise

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
)

var (
	defaultOnce sync.Once
	defaultSrc  Source
)

// orSecure returns src, or the package's shared crypto/rand source when src
// is nil. Sharing one secure source is as good as a fresh one (crypto/rand
// keeps no per-reader state worth separating) and avoids a 4 KiB buffer per
// draw; the shared source is safe for concurrent use.
func orSecure(src Source) Source {
	if src != nil {
		return src
	}
	defaultOnce.Do(func() { defaultSrc = Secure() })
	return defaultSrc
}

// Bits returns k uniformly random bits (k <= 64) in the low bits of the
// result; k > 64 is treated as 64.
func Bits(src Source, k uint) uint64 {
	if k == 0 {
		return 0
	}
	u := orSecure(src).Uint64()
	if k >= 64 {
		return u
	}
	return u >> (64 - k)
}

// Bool returns a fair random bit.
func Bool(src Source) bool {
	return orSecure(src).Uint64()>>63 == 1
}

// Int64N returns a uniform integer in [0, n) without modulo bias (Lemire's
// method from math/rand/v2). It returns 0 for n <= 0.
func Int64N(src Source, n int64) int64 {
	if n <= 0 {
		return 0
	}
	return rand.New(orSecure(src)).Int64N(n)
}

// maxFairGeometric caps fairGeometric. The chance of reaching it is 2^-1000,
// and the cap keeps Uniform's result a positive (subnormal at worst) float.
const maxFairGeometric = 1000

// fairGeometric returns the number of fair coin flips up to and including
// the first head: P(G = g) = 2^-g for g >= 1. It counts leading zero bits of
// a stream of 64-bit words.
func fairGeometric(src Source) int {
	g := 1
	for g < maxFairGeometric {
		u := src.Uint64()
		if u != 0 {
			g += bits.LeadingZeros64(u)
			break
		}
		g += 64
	}
	return min(g, maxFairGeometric)
}

// Uniform returns a uniform draw from (0, 1) with full floating-point
// resolution near zero, and never 0 (callers take logarithms).
//
// The construction is Google's (go/rand Uniform): pick the binade
// [2^-g, 2^-g+1) with probability 2^-g by a fair geometric g, then a uniform
// 52-bit mantissa inside it. Every float in (0, 1) whose binade is reached is
// hit with probability proportional to the length of the interval it
// represents, which a plain k/2^53 cannot do below 2^-53.
func Uniform(src Source) float64 {
	src = orSecure(src)
	u := src.Uint64()
	var g int
	if top := u >> 52; top != 0 {
		// The first 1 bit is among the top 12, so g depends only on them and
		// the low 52 bits are an independent mantissa: one word suffices
		// with probability 1 - 2^-12.
		g = bits.LeadingZeros64(u) + 1
	} else {
		// Twelve zeros so far; by memorylessness g = 12 + a fresh geometric.
		g = min(12+fairGeometric(src), maxFairGeometric)
		u = src.Uint64()
	}
	return math.Ldexp(1+float64(u&(1<<52-1))*0x1p-52, -g)
}

// Exponential returns a standard exponential draw (rate 1) as -ln U with U
// from Uniform. Because U has full resolution near 0 the tail is exact out to
// about 690; no finite cut-off at 37 as with k/2^53 uniforms.
func Exponential(src Source) float64 {
	return -math.Log(Uniform(src))
}

// Normal returns a standard normal draw. It is the ziggurat of
// math/rand/v2 (Marsaglia & Tsang) driven by src, the same approach Google's
// go/rand Normal takes with crypto bytes. It is a floating-point sampler: use
// Gaussian for releases that must be robust to floating-point attacks.
func Normal(src Source) float64 {
	return rand.New(orSecure(src)).NormFloat64()
}

// Geometric returns the number of Bernoulli trials up to and including the
// first success, for success probability p = 1 - e^-lambda:
// P(X = k) = e^{-lambda(k-1)}(1 - e^-lambda), k >= 1. It returns 0 (outside
// the support) if lambda is not > 0, and math.MaxInt64 in the
// e^{-lambda·(MaxInt64-1)} event that the draw would exceed it.
//
// No step forms the law from a single float probability e^-lambda per trial,
// which would lose the tail. Y = X-1 is split as Y = 2^K·Q + R with
// e^{-lambda·2^K} < e^-44: Q is geometric with that tiny ratio (almost always
// 0) and, by the product form e^{-lambda·R} = Π_i e^{-lambda·2^i·b_i}, the
// K bits b_i of R are independent with P(b_i = 1) = 1/(1 + e^{lambda·2^i}).
// Each bit costs one random word and a square root. For lambda below
// 44/2^62, where that split would need more than 62 bits, it bisects the
// support with exact conditional probabilities as Google's secure-noise
// code does.
func Geometric(src Source, lambda float64) int64 {
	if !(lambda > 0) {
		return 0
	}
	src = orSecure(src)
	if math.IsInf(lambda, 1) {
		return 1
	}
	const tailExponent = 44 // e^-44 ≈ 7.8e-20
	k := 0
	for k < 62 && lambda*math.Ldexp(1, k) < tailExponent {
		k++
	}
	if lambda*math.Ldexp(1, k) < tailExponent {
		return geometricBisect(src, lambda)
	}
	var y int64
	beta := math.Exp(-lambda * math.Ldexp(1, k))
	for Uniform(src) < beta {
		if y > math.MaxInt64-1-(int64(1)<<k) {
			return math.MaxInt64
		}
		y += int64(1) << k
	}
	// From the top bit down, e^{lambda·2^i} comes from the previous one by a
	// square root, which halves the inherited relative error at each step
	// (so it stays within about an ulp) and is cheaper than Exp.
	e := math.Exp(lambda * math.Ldexp(1, k-1))
	for i := k - 1; i >= 0; i-- {
		if bernoulli(src, 1/(1+e)) {
			y |= int64(1) << i
		}
		e = math.Sqrt(e)
	}
	if y == math.MaxInt64 {
		return y
	}
	return y + 1
}

// bernoulli returns true with probability p (for the float p exactly).
// For p >= 2^-11, p·2^64 is an integer, so comparing one uniform 64-bit word
// against it is exact; smaller p use the full-resolution Uniform.
func bernoulli(src Source, p float64) bool {
	switch {
	case p >= 1:
		return true
	case p >= 0x1p-11:
		return src.Uint64() < uint64(p*0x1p64)
	default:
		return Uniform(src) < p
	}
}

// geometricBisect samples Geometric(lambda) by bisecting (0, MaxInt64],
// choosing each half with its exact conditional probability (Expm1/Log1p),
// the method of Google's go/noise. It needs about log2(1/lambda) uniforms.
func geometricBisect(src Source, lambda float64) int64 {
	// P(X > MaxInt64) = e^{-lambda·MaxInt64}.
	if Uniform(src) > -math.Expm1(-lambda*math.MaxInt64) {
		return math.MaxInt64
	}
	// Invariant: X lies in (lo, hi].
	lo, hi := int64(0), int64(math.MaxInt64)
	for lo+1 < hi {
		// Split where the conditional mass halves:
		// e^{-lambda(mid-lo)} = (1 + e^{-lambda(hi-lo)})/2.
		span := float64(hi - lo)
		d := (math.Ln2 - math.Log1p(math.Exp(-lambda*span))) / lambda
		mid := lo + int64(math.Floor(d))
		// Guard against rounding pushing mid out of (lo, hi).
		if mid <= lo {
			mid = lo + 1
		} else if mid >= hi {
			mid = hi - 1
		}
		// P(X <= mid | lo < X <= hi).
		q := math.Expm1(-lambda*float64(mid-lo)) / math.Expm1(-lambda*span)
		if Uniform(src) <= q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// TwoSidedGeometric returns an integer k with P(k) proportional to
// e^{-lambda|k|}, the discrete Laplace distribution. It returns 0 if lambda
// is not > 0.
func TwoSidedGeometric(src Source, lambda float64) int64 {
	if !(lambda > 0) {
		return 0
	}
	src = orSecure(src)
	for {
		k := Geometric(src, lambda) - 1
		neg := Bool(src)
		// A negative zero would count 0 twice; redraw it.
		if k == 0 && neg {
			continue
		}
		if neg {
			return -k
		}
		return k
	}
}
