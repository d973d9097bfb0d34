package noise

// Falsification tests of the float-safety of MultiNormal releases, with the
// sampler AddSnapped used before the exact lattice release as the negative
// control. The old sampler lives only here.

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"

	"gonum.org/v1/gonum/mat"
)

// oldSampler is AddSnapped as of commit 7daa0f5 (noise/multinormal.go):
// W = fl(L z) with z from math/rand/v2's ziggurat NormFloat64 driven by the
// Source (MultiNormal.Rand), then y = round_g(round_g(x) + W) with g the
// smallest power of two >= √λ/2^40, λ the Gershgorin bound of Σ + jI.
type oldSampler struct {
	f *denseFactor
	g float64
}

// newOldSampler factorises cov as the old NewMultiNormalCholesky did: j = 0,
// then tenfold from 1e-15·mean(diag Σ), no backward-error check.
func newOldSampler(t *testing.T, cov mat.Symmetric) oldSampler {
	t.Helper()
	n := cov.SymmetricDim()
	mean, gersh := 0.0, 0.0
	for i := range n {
		row := 0.0
		for j := range n {
			row += math.Abs(cov.At(i, j))
		}
		mean += cov.At(i, i) / float64(n)
		gersh = math.Max(gersh, row)
	}
	a := mat.NewSymDense(n, nil)
	var chol mat.Cholesky
	for j := 0.0; j <= 1e-6*mean; {
		a.CopySym(cov)
		for i := range n {
			a.SetSym(i, i, a.At(i, i)+j)
		}
		if chol.Factorize(a) {
			return oldSampler{f: lowerFactor(&chol, n), g: ceilPowerOfTwo(math.Sqrt(gersh+j) / 0x1p40)}
		}
		if j == 0 {
			j = 1e-15 * mean
		} else {
			j *= 10
		}
	}
	t.Fatal("old sampler: Cholesky failed")
	return oldSampler{}
}

func (o oldSampler) release(x []float64, src Source) []float64 {
	r := rand.New(src)
	z := make([]float64, o.f.k)
	for j := range z {
		z[j] = r.NormFloat64()
	}
	y := make([]float64, o.f.n)
	for i := range y {
		s := 0.0
		for j, v := range o.f.row(i) {
			s += float64(v * z[j]) // the conversion forbids fusing, as on amd64
		}
		y[i] = roundToMultipleOfPowerOfTwo(roundToMultipleOfPowerOfTwo(x[i], o.g)+s, o.g)
	}
	return y
}

// zigSource feeds NormFloat64 crafted words and counts how many it reads.
// Past the crafted words it returns 0, which NormFloat64 turns into 0 in
// one read.
type zigSource struct {
	words []uint64
	reads int
}

func (s *zigSource) Uint64() uint64 {
	s.reads++
	if s.reads <= len(s.words) {
		return s.words[s.reads-1]
	}
	return 0
}

// zigRN is the start of the ziggurat's base-strip tail (rn in
// math/rand/v2/normal.go); outputs beyond it come from a continuous tail
// sampler this oracle does not model.
const zigRN = 3.442619855899

// zigProbe runs NormFloat64 on the word that selects strip i and integer j
// (low 32 bits j, bits 32-38 i), followed by U = 0 for the wedge test. In
// NormFloat64 the candidate is x = float64(j)·float64(wn[i]); it returns in
// one read if |j| < kn[i] (the rectangle) and, for i >= 1, in two reads if
// the wedge test fn[i] + U(fn[i-1]-fn[i]) < e^{-x²/2} accepts with U = 0,
// the most favourable U since fn decreases. So (z, true) means z is an
// output of positive probability, and false means candidate (i, j) can
// never be returned. Strip 0's tail (|j| >= kn[0]) is not probed.
func zigProbe(i int, j int32) (float64, bool) {
	s := &zigSource{words: []uint64{uint64(i)<<32 | uint64(uint32(j)), 0}}
	z := rand.New(s).NormFloat64()
	if s.reads == 1 || (i > 0 && s.reads == 2) {
		return z, true
	}
	return 0, false
}

var (
	zigOnce sync.Once
	zigW    [128]float64 // wn[i], extracted by probing j = 1
)

func zigWidths() *[128]float64 {
	zigOnce.Do(func() {
		for i := range zigW {
			w, ok := zigProbe(i, 1)
			if !ok || !(w > 0) {
				panic("ziggurat probe failed")
			}
			zigW[i] = w
		}
	})
	return &zigW
}

// oldFirstPossible reports whether the old sampler can release y as the
// first coordinate of a trace whose first point is x, L₀₀ = l > 0 and lattice
// g: whether some ziggurat output z gives round_g(round_g(x) + fl(l·z)) = y.
// It enumerates, strip by strip, the integers j whose candidate
// j·wn[i] lies in a window that contains every z that could round to y,
// and checks each exactly by running NormFloat64 and the old arithmetic.
// Windows reaching the tail |z| >= rn are declared possible, so the answer
// over-approximates the support and "impossible" is a proof.
func oldFirstPossible(y, x, l, g float64) bool {
	x0 := roundToMultipleOfPowerOfTwo(x, g)
	// round_g(x0 + n) = y needs |x0 + n - y| <= g/2 up to the rounding of
	// the sum (an ulp of y, far below g/2 here); a window of ±g in n, and a
	// relative 2^-40 in z for the rounding of l·z, contains all such z.
	zlo := (y - x0 - g) / l * (1 - 0x1p-40*math.Copysign(1, y-x0-g))
	zhi := (y - x0 + g) / l * (1 + 0x1p-40*math.Copysign(1, y-x0+g))
	if math.Max(math.Abs(zlo), math.Abs(zhi)) >= zigRN*(1-1e-9) {
		return true
	}
	for i, w := range zigWidths() {
		jlo, jhi := math.Floor(zlo/w)-1, math.Ceil(zhi/w)+1
		if jhi-jlo > 1e6 {
			return true // a window this wide is not what the oracle is for
		}
		for j := jlo; j <= jhi; j++ {
			z, ok := zigProbe(i, int32(j))
			if !ok {
				continue
			}
			if roundToMultipleOfPowerOfTwo(x0+float64(l*z), g) == y {
				return true
			}
		}
	}
	return false
}

// rbfScaled is the RBF kernel of lengthscale ell steps and standard
// deviation sd.
func rbfScaled(n int, ell, sd float64) *mat.SymDense {
	s := rbf(n, ell)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, sd*sd*s.At(i, j))
		}
	}
	return s
}

// The white-box support attack of Mironov (2012) on the first point of a
// release: draw releases from x, and count those that the exact model of
// the old sampler's reachable set proves impossible from x' = x + 0.3 m.
//
// The old sampler is the negative control and must be flagged: for a
// one-point trace most of its releases cannot come from x', which refutes
// (ε, δ)-DP for every ε at δ below the rate. The oracle is first checked on
// releases from x itself, all of which must be possible (it may only
// over-approximate). The new sampler's support is every lattice point
// whatever x is, so the same attack, with that support model, must find
// nothing; the black-box test below checks the model.
func TestSupportAttackFirstPoint(t *testing.T) {
	t.Parallel()
	const shift, releases = 0.3, 1500
	x := []float64{1234.5678}
	xs := []float64{x[0] + shift}
	cases := []struct {
		name    string
		cov     *mat.SymDense
		minRate float64
	}{
		{"1-point trace, sd 50 m", mat.NewSymDense(1, []float64{2500}), 0.5},
		{"100-point RBF trace (lengthscale 10, sd 50 m)", rbfScaled(100, 10, 50), 0.25},
	}
	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := newOldSampler(t, c.cov)
			l := old.f.a[0]
			n := c.cov.SymmetricDim()
			xv, xsv := make([]float64, n), make([]float64, n)
			for i := range n {
				xv[i], xsv[i] = x[0]+3*float64(i), xs[0]+3*float64(i)
			}
			src := Seeded(60 + uint64(k))
			ys := make([]float64, releases)
			for r := range ys {
				ys[r] = old.release(xv, src)[0]
			}
			self := stattest.SupportAttack(ys, func(y float64) bool { return oldFirstPossible(y, xv[0], l, old.g) })
			if self.Impossible != 0 {
				t.Fatalf("%s: the oracle calls %d of the old sampler's own releases impossible", c.name, self.Impossible)
			}
			res := stattest.SupportAttack(ys, func(y float64) bool { return oldFirstPossible(y, xsv[0], l, old.g) })
			t.Logf("%s: old sampler (g = %.3g m, L₀₀·wn spacing ≈ %.3g-%.3g m): %d of %d releases impossible from x+%.1f m (rate %.3f, δ >= %.3f at z = %g)",
				c.name, old.g, l*zigWidths()[1], l*zigWidths()[127], res.Impossible, res.Tested, shift, res.Rate(), res.DeltaLowerBound(stattest.Z), stattest.Z)
			if res.Rate() < c.minRate || res.DeltaLowerBound(stattest.Z) <= 0 {
				t.Errorf("%s: negative control not flagged: rate %.4f, want >= %g", c.name, res.Rate(), c.minRate)
			}

			// The new sampler, same trace and source kind.
			mn, err := NewMultiNormalCholesky(c.cov)
			if err != nil {
				t.Fatal(err)
			}
			g := mn.Granularity()
			for r := range ys {
				y, err := mn.AddSnapped(nil, xv, src)
				if err != nil {
					t.Fatal(err)
				}
				ys[r] = y[0]
			}
			onLattice := func(y float64) bool { return y/g == math.Trunc(y/g) && math.Abs(y/g) <= maxOutputMultiple }
			res = stattest.SupportAttack(ys, onLattice)
			t.Logf("%s: exact release (g = %.3g m): %d of %d impossible", c.name, g, res.Impossible, res.Tested)
			if res.Impossible != 0 {
				t.Errorf("%s: exact release has %d releases off its lattice", c.name, res.Impossible)
			}
		})
	}
}

// Black-box lattice coverage: with noise of about 50 grid steps, every
// release of the exact sampler is a multiple of g and every lattice point
// within ±2σ of x is hit, for x and for inputs differing from it in the
// low-order bits, by a fraction of a step and by several steps. With 20,000
// releases the chance of missing a point of the window is below the bound
// computed here (asserted < 1e-6). The old sampler at its own grid reaches
// only a tiny fraction of the window: the same check flags it.
func TestLatticeCoverage(t *testing.T) {
	t.Parallel()
	const g, n = 0x1p-10, 20000
	sd := []float64{50 * g, 40 * g}
	cov := mat.NewSymDense(2, []float64{sd[0] * sd[0], 0.6 * sd[0] * sd[1], 0.6 * sd[0] * sd[1], sd[1] * sd[1]})
	mn, err := NewMultiNormalCholesky(cov)
	if err != nil {
		t.Fatal(err)
	}
	base := []float64{1234.5678912345, -987.6543210987}
	variants := map[string][]float64{
		"x":             base,
		"x, 1-ulp bits": {math.Nextafter(base[0], 2e3), math.Nextafter(math.Nextafter(base[1], 0), 0)},
		"x + 0.37 g":    {base[0] + 0.37*g, base[1] - 0.37*g},
		"x + 7 g":       {base[0] + 7*g, base[1] + 7*g},
		"x - 2.5 g":     {base[0] - 2.5*g, base[1] - 2.5*g},
	}
	// False-alarm bound: Σ over the window of (1-p_k)^n, with p_k the
	// exact cell probabilities (the release's σ is within 1e-12 of sd).
	falseAlarm := 0.0
	for _, x := range variants {
		for i := range 2 {
			falseAlarm += stattest.CoverLatticeFalseAlarm(x[i], sd[i], g, x[i]-2*sd[i], x[i]+2*sd[i], n)
		}
	}
	t.Logf("false-alarm probability of the coverage check <= %.2g", falseAlarm)
	if falseAlarm > 1e-6 {
		t.Fatalf("coverage check too weak: false-alarm bound %g", falseAlarm)
	}
	src := Seeded(70)
	for name, x := range variants {
		ys := [2][]float64{make([]float64, n), make([]float64, n)}
		y := make([]float64, 2)
		for r := range n {
			if _, err := mn.AddOnGrid(y, x, g, src); err != nil {
				t.Fatal(err)
			}
			ys[0][r], ys[1][r] = y[0], y[1]
		}
		for i := range 2 {
			c, err := stattest.CoverLattice(ys[i], g, x[i]-2*sd[i], x[i]+2*sd[i])
			if err != nil {
				t.Fatal(err)
			}
			if c.OffLattice != 0 || c.Hit != c.Points {
				t.Errorf("%s, coordinate %d: %d off the lattice, %d of %d points hit, missing %v", name, i, c.OffLattice, c.Hit, c.Points, c.Missing)
			}
		}
	}

	// The old sampler at its own lattice.
	old := newOldSampler(t, cov)
	ys := make([]float64, n)
	for r := range ys {
		ys[r] = old.release(base, src)[0]
	}
	c, err := stattest.CoverLattice(ys, old.g, base[0]-2*sd[0], base[0]+2*sd[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("old sampler at its grid %.3g: %d of %.3g lattice points within ±2σ hit (fraction %.2g)", old.g, c.Hit, float64(c.Points), c.Fraction())
	if c.OffLattice != 0 || c.Fraction() > 0.01 {
		t.Errorf("negative control: old sampler covers %.3g of its lattice", c.Fraction())
	}
}
