package noise

import (
	"github.com/tracepriv/tracepriv/internal/numeric"
	"math"
	"math/big"
	"math/bits"
)

// digitBits is the width of one random digit of a u-rand: base 2^16. A
// wide base decides almost every comparison of two u-rands on their first
// digit (ties have probability 2^-16), so Karney's algorithm handles a
// dozen digits per deviate rather than ~30 single bits of base 2; wider
// digits waste more of the Source's bits than they save in loop overhead
// (measured: 8, 16 and 32 bits cost about 1.1, 0.5 and 0.65 µs per deviate).
const digitBits = 16

// minNormalDigits is the number of fraction digits a LazyNormal always has:
// 64 bits, enough for Float64's 53.
const minNormalDigits = 64 / digitBits

// digitReader hands out random bits from a Source, read 64 at a time.
type digitReader struct {
	src Source
	// ks, when set, is src itself: read without the interface call, which
	// a browser pays per word (issue 33).
	ks  *keyStream
	buf uint64 // unread bits, most significant first
	n   uint   // number of unread bits in buf
}

// word returns the source's next 64 bits.
func (r *digitReader) word() uint64 {
	if r.ks != nil {
		return r.ks.Uint64()
	}
	return r.src.Uint64()
}

// take returns k uniformly random bits, 1 <= k <= 32. Bits left over in
// the buffer are used before a new word is read, so no randomness is lost.
func (r *digitReader) take(k uint) uint32 {
	if r.n >= k {
		v := uint32(r.buf >> (64 - k))
		r.buf <<= k
		r.n -= k
		return v
	}
	have := r.n
	v := r.buf >> (64 - have) // 0 when have == 0: Go shifts by 64 give 0
	r.buf, r.n = r.word(), 64
	need := k - have
	v = v<<need | r.buf>>(64-need)
	r.buf <<= need
	r.n -= need
	return uint32(v)
}

// digit returns one base-2^digitBits digit: take(digitBits), with the
// common case small enough to inline (a call costs the most in the
// samplers' inner loops, in a browser above all).
func (r *digitReader) digit() uint32 {
	if r.n < digitBits {
		return r.take(digitBits)
	}
	v := r.buf
	r.buf = v << digitBits
	r.n -= digitBits
	return uint32(v >> (64 - digitBits))
}

// intN returns a uniform integer in [0, m), m >= 1, by rejection from the
// smallest number of bits that covers m, so no modulo bias.
func (r *digitReader) intN(m uint32) uint32 {
	if m <= 1 {
		return 0
	}
	b := uint(bits.Len32(m - 1))
	for {
		if v := r.take(b); v < m {
			return v
		}
	}
}

// less reports whether the u-rand a is below the u-rand b. Both are digit
// strings (base 2^digitBits, most significant first) whose undrawn digits are
// uniform; digits are drawn into whichever is shorter until they differ, so
// the answer is exact and each operand stays a u-rand conditional on it.
func (r *digitReader) less(a, b *[]uint32) bool {
	for i := 0; ; i++ {
		if i == len(*a) {
			*a = append(*a, r.digit())
		}
		if i == len(*b) {
			*b = append(*b, r.digit())
		}
		if (*a)[i] != (*b)[i] {
			return (*a)[i] < (*b)[i]
		}
	}
}

// LazyNormal is an exact standard normal deviate s·(k + x), drawn by
// Karney's algorithm N, of which only finitely many fraction digits have
// been drawn.
//
// k >= 0 is an integer, s = ±1 and x in (0, 1) is a "u-rand": the first
// Bits() binary digits of x are known and, conditional on everything the
// algorithm did, the remaining digits are independent fair bits. So the
// value lies in an explicit open interval (Enclosure) of width 2^-Bits(),
// and Refine narrows it by drawing more digits: the deviate can be resolved
// to any precision, and every decision taken from its enclosure is a
// decision about an exactly N(0, 1) real number. Float64 is a floating-point
// approximation within ErrorBound.
//
// The zero value is not a deviate; use NewLazyNormal. Refine modifies the
// deviate, so concurrent use needs a lock.
type LazyNormal struct {
	neg    bool
	k      uint32
	digits []uint32 // fraction digits of x, base 2^digitBits, most significant first
}

// NewLazyNormal draws an exact standard normal deviate with at least 64
// fraction bits known. A nil src means the crypto/rand source.
func NewLazyNormal(src Source) *LazyNormal {
	s := normalSampler{rd: digitReader{src: orSecure(src)}}
	z := new(LazyNormal)
	s.sample(z)
	return z
}

// Bits returns the number of known fraction bits of the deviate.
func (z *LazyNormal) Bits() uint { return uint(len(z.digits)) * digitBits }

// Float64 returns s·(k + x₅₃) rounded to float64, x₅₃ being x truncated to
// 53 bits; it is within ErrorBound of the exact value.
func (z *LazyNormal) Float64() float64 {
	var top uint64 // the first 64 fraction bits
	for _, d := range z.digits[:64/digitBits] {
		top = top<<digitBits | uint64(d)
	}
	m := top >> 11
	// m·2^-53 is exact; the addition is the one rounding.
	v := float64(z.k) + float64(m)*0x1p-53
	if z.neg {
		return -v
	}
	return v
}

// doubleDouble returns the deviate as hi + lo from its first 64 fraction
// bits and a bound on |value - (hi + lo)|: 2^-64 from the truncation plus
// the one rounding of lo, about 2^-64 in all, where Float64 is within
// 2^-52·(1 + |z|). A state advanced in double-double (markovTask.stepDD)
// would otherwise gather the float deviates' error every step.
func (z *LazyNormal) doubleDouble() (hi, lo, err float64) {
	var top uint64
	for _, d := range z.digits[:64/digitBits] {
		top = top<<digitBits | uint64(d)
	}
	// k, the top 53 bits and the last 11 bits are each exact in float64;
	// TwoSum makes their first sum exact.
	hi, e := numeric.TwoSum(float64(z.k), float64(top>>11)*0x1p-53)
	lo = e + float64(top&0x7ff)*0x1p-64
	err = 0x1p-64 + 0x1p-52*math.Abs(lo)
	if z.neg {
		return -hi, -lo, err
	}
	return hi, lo, err
}

// ErrorBound returns a rigorous bound on |value - Float64()|: at most
// 2^-53 from truncating x to 53 bits plus half an ulp from the addition,
// bounded by 2^-52·(1 + |Float64()|), which leaves a factor 2 for the
// rounding of this expression itself.
func (z *LazyNormal) ErrorBound() float64 {
	return 0x1p-52 * (1 + math.Abs(z.Float64()))
}

// Refine draws fraction digits until at least bits are known (rounded up
// to a multiple of 16). A nil src means the crypto/rand source. Refining
// never changes the deviate: it reveals more of the same real number.
func (z *LazyNormal) Refine(src Source, bits uint) {
	r := digitReader{src: orSecure(src)}
	z.refine(&r, bits)
}

func (z *LazyNormal) refine(r *digitReader, bits uint) {
	for z.Bits() < bits {
		z.digits = append(z.digits, r.digit())
	}
}

// Enclosure sets lo and hi to the exact end points of the open interval
// (lo, hi) of width 2^-Bits() that contains the deviate, and returns them.
// Their precision is set so that no rounding occurs.
func (z *LazyNormal) Enclosure(lo, hi *big.Float) (*big.Float, *big.Float) {
	return z.enclose(z.Bits(), lo, hi)
}

// enclose is Enclosure with x truncated to its first b <= Bits() bits: the
// interval is then wider (2^-b) but still contains the deviate. The exact
// release encloses at each round's precision, whatever number of digits
// other coordinates have already drawn.
func (z *LazyNormal) enclose(b uint, lo, hi *big.Float) (*big.Float, *big.Float) {
	if b > z.Bits() {
		panic("noise: LazyNormal.enclose beyond the known digits")
	}
	// m = k·2^b + (first b bits of x), exactly.
	var m big.Int
	m.SetUint64(uint64(z.k))
	nd := (b + digitBits - 1) / digitBits
	var d big.Int
	for i := uint(0); i < nd; i++ {
		m.Lsh(&m, digitBits)
		m.Add(&m, d.SetUint64(uint64(z.digits[i])))
	}
	m.Rsh(&m, nd*digitBits-b)
	// The interval is (m, m+1)·2^-b, or its negative.
	var m1 big.Int
	m1.Add(&m, big.NewInt(1))
	a, c := &m, &m1
	if z.neg {
		a, c = m1.Neg(&m1), m.Neg(&m)
	}
	prec := uint(m1.BitLen()) + 2
	lo.SetPrec(prec).SetMode(big.ToNearestEven).SetInt(a)
	hi.SetPrec(prec).SetMode(big.ToNearestEven).SetInt(c)
	lo.SetMantExp(lo, -int(b))
	hi.SetMantExp(hi, -int(b))
	return lo, hi
}

// normalSampler runs Karney's algorithm N with reusable digit buffers, so a
// vector of deviates allocates only the digits it keeps.
type normalSampler struct {
	rd         digitReader
	x, p, q, r []uint32 // scratch u-rands
}

// sample draws one exact standard normal deviate into dst, reusing dst's
// digit storage (Karney 2016, algorithm N):
//
//	N1. k >= 0 with probability e^{-k/2}(1 - e^{-1/2});
//	N2. accept with probability e^{-k(k-1)/2}, else restart;
//	N3. x a u-rand in (0, 1);
//	N4. accept with probability e^{-x(2k+x)/2}, else restart;
//	N5. a random sign s; the deviate is s(k + x).
//
// The accepted (k, x) has density ∝ e^{-k/2}·e^{-k(k-1)/2}·e^{-x(2k+x)/2} =
// e^{-(k+x)²/2}. Every probability is realised by comparisons of u-rands
// and integer coin flips, with no floating point.
func (s *normalSampler) sample(dst *LazyNormal) {
	for {
		k := 0
		for s.expHalf() {
			k++
		}
		ok := true
		for i := 0; ok && i < k*(k-1); i++ {
			ok = s.expHalf()
		}
		if !ok {
			continue
		}
		s.x = s.x[:0]
		for i := 0; ok && i <= k; i++ {
			ok = s.expB(uint32(k), &s.x)
		}
		if !ok {
			continue
		}
		for len(s.x) < minNormalDigits {
			s.x = append(s.x, s.rd.digit())
		}
		dst.neg = s.rd.take(1) == 1
		dst.k = uint32(k)
		dst.digits = append(dst.digits[:0], s.x...)
		return
	}
}

// expHalf returns true with probability e^{-1/2} (Karney's algorithm H, von
// Neumann's method): with n the length of the longest run 1/2 > u₁ > u₂ > …
// of u-rands, P(n >= j) = 2^-j/j!, so P(n even) = Σ(-1/2)^j/j! = e^{-1/2}.
func (s *normalSampler) expHalf() bool {
	d := s.rd.digit()
	if d >= 1<<(digitBits-1) { // u₁ >= 1/2: n = 0
		return true
	}
	// While the last u-rand has one digit, less(z, y) draws one digit of
	// z and decides on it unless the two are equal (probability 2^-16):
	// compare the digits as numbers, and take the general path, with the
	// same draws in the same order, on a tie.
	n := 1
	rd := &s.rd
	for {
		var e uint32
		if rd.n >= digitBits { // rd.digit(), inlined by hand: the hottest loop of a release
			e = uint32(rd.buf >> (64 - digitBits))
			rd.buf <<= digitBits
			rd.n -= digitBits
		} else {
			e = rd.take(digitBits)
		}
		if e == d {
			return s.expHalfFrom(d, e, n)
		}
		if e > d {
			return n%2 == 0
		}
		d = e
		n++
	}
}

// expHalfFrom is expHalf's general path from a tie: u_n has the one digit
// d, u_{n+1}'s first digit e equals it.
func (s *normalSampler) expHalfFrom(d, e uint32, n int) bool {
	y, z := append(s.p[:0], d), append(s.q[:0], e)
	for {
		if !s.rd.less(&z, &y) {
			s.p, s.q = y, z
			return n%2 == 0
		}
		y, z = z, y
		z = z[:0]
		n++
	}
}

// expB returns true with probability e^{-x(2k+x)/(2k+2)} for the u-rand x
// (Karney's algorithm B): n is the length of the longest run x > z₁ > z₂ >
// … in which every step also passes an independent test of probability
// f = (2k+x)/(2k+2), so P(n >= j) = (xf)^j/j! and P(n even) = e^{-xf}. The
// test draws c uniform in {0, …, 2k+1}: c < 2k passes, c = 2k passes when a
// fresh u-rand is below x, c = 2k+1 fails. Comparisons draw digits of x as
// needed, which keeps x a u-rand.
func (s *normalSampler) expB(k uint32, x *[]uint32) bool {
	y := x
	bufs := [2]*[]uint32{&s.p, &s.q}
	n := 0
	for {
		z := bufs[n%2]
		*z = (*z)[:0]
		if !s.rd.less(z, y) {
			return n%2 == 0
		}
		c := s.rd.intN(2*k + 2)
		if c == 2*k+1 {
			return n%2 == 0
		}
		if c == 2*k {
			s.r = s.r[:0]
			if !s.rd.less(&s.r, x) {
				return n%2 == 0
			}
		}
		y = z
		n++
	}
}
