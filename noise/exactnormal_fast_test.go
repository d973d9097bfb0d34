package noise

import "testing"

// refSampler is Karney's algorithm N as it was written before the fast
// paths of issue 33 (expHalf on slices, every digit through take and the
// Source interface): the reference TestDigitFastPaths compares with.
type refSampler struct {
	rd         digitReader
	x, p, q, r []uint32
}

func (s *refSampler) digit() uint32 { return s.rd.take(digitBits) }

func (s *refSampler) less(a, b *[]uint32) bool {
	for i := 0; ; i++ {
		if i == len(*a) {
			*a = append(*a, s.digit())
		}
		if i == len(*b) {
			*b = append(*b, s.digit())
		}
		if (*a)[i] != (*b)[i] {
			return (*a)[i] < (*b)[i]
		}
	}
}

func (s *refSampler) expHalf() bool {
	d := s.digit()
	if d >= 1<<(digitBits-1) {
		return true
	}
	y, z := append(s.p[:0], d), s.q[:0]
	n := 1
	for {
		z = z[:0]
		if !s.less(&z, &y) {
			s.p, s.q = y, z
			return n%2 == 0
		}
		y, z = z, y
		n++
	}
}

func (s *refSampler) intN(m uint32) uint32 {
	if m <= 1 {
		return 0
	}
	b := uint(0)
	for (uint32(1) << b) < m {
		b++
	}
	for {
		if v := s.rd.take(b); v < m {
			return v
		}
	}
}

func (s *refSampler) expB(k uint32, x *[]uint32) bool {
	y := x
	bufs := [2]*[]uint32{&s.p, &s.q}
	n := 0
	for {
		z := bufs[n%2]
		*z = (*z)[:0]
		if !s.less(z, y) {
			return n%2 == 0
		}
		c := s.intN(2*k + 2)
		if c == 2*k+1 {
			return n%2 == 0
		}
		if c == 2*k {
			s.r = s.r[:0]
			if !s.less(&s.r, x) {
				return n%2 == 0
			}
		}
		y = z
		n++
	}
}

func (s *refSampler) sample(dst *LazyNormal) {
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
			s.x = append(s.x, s.digit())
		}
		dst.neg = s.rd.take(1) == 1
		dst.k = uint32(k)
		dst.digits = append(dst.digits[:0], s.x...)
		return
	}
}

// TestDigitFastPaths checks that the samplers' fast paths (expHalf on
// single digits, digits read from a key stream without the Source
// interface) draw the deviates the reference algorithm draws, digit for
// digit, and consume the same bits: deviates of a release's key streams
// (one stream per deviate, as MarkovRelease draws them) and of one long
// stream, including on sources whose digits tie often (a source of few
// distinct words), which exercises the general path after a tie. The
// negative control: a sampler reading one extra bit per deviate is told
// apart.
func TestDigitFastPaths(t *testing.T) {
	key, err := newStreamKey(Seeded(33))
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b *LazyNormal) bool {
		if a.neg != b.neg || a.k != b.k || len(a.digits) != len(b.digits) {
			return false
		}
		for i := range a.digits {
			if a.digits[i] != b.digits[i] {
				return false
			}
		}
		return true
	}
	// One stream per deviate, read through ks as markovTask does.
	s1, s2 := key.stream(0), key.stream(0)
	var ns normalSampler
	var ref refSampler
	var z1, z2 LazyNormal
	for i := range uint64(200_000) {
		s1.reset(i)
		s2.reset(i)
		ns.rd = digitReader{src: s1, ks: s1}
		ref.rd = digitReader{src: s2}
		ns.sample(&z1)
		ref.sample(&z2)
		if !same(&z1, &z2) || ns.rd.n != ref.rd.n || ns.rd.buf != ref.rd.buf || s1.Uint64() != s2.Uint64() {
			t.Fatalf("deviate %d: %+v, the reference draws %+v", i, z1, z2)
		}
	}
	// One long stream, and a source whose 16-bit digits tie often.
	for _, src := range []func() Source{
		func() Source { return key.stream(1 << 40) },
		func() Source { return &fewWords{s: Seeded(7)} },
	} {
		a, b := src(), src()
		ns = normalSampler{rd: digitReader{src: a}}
		ref = refSampler{rd: digitReader{src: b}}
		for i := range 100_000 {
			ns.sample(&z1)
			ref.sample(&z2)
			if !same(&z1, &z2) {
				t.Fatalf("deviate %d of one stream: %+v, the reference draws %+v", i, z1, z2)
			}
		}
		if a.Uint64() != b.Uint64() {
			t.Fatal("the fast sampler consumed other bits than the reference")
		}
	}
	// The negative control.
	s1.reset(5)
	s2.reset(5)
	ns.rd = digitReader{src: s1, ks: s1}
	ref.rd = digitReader{src: s2}
	ref.rd.take(1)
	ns.sample(&z1)
	ref.sample(&z2)
	if same(&z1, &z2) {
		t.Fatal("a sampler one bit off draws the same deviate: the comparison cannot fail")
	}
}

// fewWords is a Source whose words have 16-bit digits from a small set,
// so that u-rands tie on a digit often.
type fewWords struct{ s Source }

func (f *fewWords) Uint64() uint64 {
	v := f.s.Uint64()
	var w uint64
	for range 4 {
		w = w<<16 | []uint64{0x1234, 0x7fff, 0x8000, 0x0001}[v&3]
		v >>= 2
	}
	return w
}
