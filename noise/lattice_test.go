package noise

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"

	"github.com/tracepriv/tracepriv/param"
	"gonum.org/v1/gonum/mat"
)

// withHooks sets the exact-release test hooks for the duration of f.
func withHooks(inflation float64, firstBits uint, f func()) {
	oldI, oldB := boundInflation, exactFirstBits
	boundInflation, exactFirstBits = inflation, firstBits
	defer func() { boundInflation, exactFirstBits = oldI, oldB }()
	f()
}

// randomFactor returns a dense or lower-triangular factor with entries of
// mixed sign spread over many binades, which makes the floating-point
// products cancel.
func randomFactor(n, k int, lower bool, src Source) *denseFactor {
	f := newDenseFactor(n, k, lower)
	for i := range f.a {
		f.a[i] = Normal(src) * math.Ldexp(1, int(Int64N(src, 40))-20)
	}
	return f
}

// exactRow returns an enclosure of (A z)_i from the deviates' full
// enclosures at 4000 bits of working precision.
func exactRow(f *denseFactor, i int, z []LazyNormal) (lo, hi *big.Float) {
	zlo, zhi := make([]big.Float, len(z)), make([]big.Float, len(z))
	for j := range z {
		z[j].Enclosure(&zlo[j], &zhi[j])
	}
	lo, hi = new(big.Float), new(big.Float)
	f.enclose(i, zlo, zhi, 4000, lo, hi)
	return lo, hi
}

// applyFloat's bound contains the exact product: for random factors with
// heavy cancellation and exact deviates, [w - bound, w + bound] contains the
// 4000-bit enclosure of every coordinate. A crafted row shows the bound is
// not vacuous where cancellation is total.
func TestApplyFloatBound(t *testing.T) {
	src := Seeded(51)
	worst := 0.0
	for trial := range 40 {
		n, k := 1+int(Int64N(src, 30)), 1+int(Int64N(src, 30))
		lower := trial%2 == 0
		if lower {
			k = n
		}
		f := randomFactor(n, k, lower, src)
		z := make([]LazyNormal, k)
		zf, zerr := make([]float64, k), make([]float64, k)
		for j := range z {
			z[j] = *NewLazyNormal(src)
			zf[j], zerr[j] = z[j].Float64(), z[j].ErrorBound()
		}
		w, bound := make([]float64, n), make([]float64, n)
		f.applyFloat(w, bound, zf, zerr)
		for i := range n {
			lo, hi := exactRow(f, i, z)
			var wl, wh big.Float
			wl.SetPrec(200).SetFloat64(w[i])
			wh.SetPrec(200).SetFloat64(w[i])
			wl.Sub(&wl, big.NewFloat(bound[i]))
			wh.Add(&wh, big.NewFloat(bound[i]))
			if lo.Cmp(&wl) < 0 || hi.Cmp(&wh) > 0 {
				t.Fatalf("trial %d row %d: exact [%v, %v] outside %v ± %v", trial, i, lo, hi, w[i], bound[i])
			}
			var d big.Float
			e, _ := d.SetPrec(200).Sub(lo, wl.SetFloat64(w[i])).Float64()
			if bound[i] > 0 {
				worst = math.Max(worst, math.Abs(e)/bound[i])
			}
		}
	}
	t.Logf("largest actual error / bound: %.3g", worst)
	// Total cancellation: 2^60·1 + 1·1 - 2^60·1 = 1, but fl gives 0.
	f := &denseFactor{n: 1, k: 3, a: []float64{0x1p60, 1, -0x1p60}}
	w, bound := make([]float64, 1), make([]float64, 1)
	f.applyFloat(w, bound, []float64{1, 1, 1}, []float64{0, 0, 0})
	if math.Abs(w[0]-1) > bound[0] {
		t.Errorf("cancellation: w = %v, bound %v does not reach the exact 1", w[0], bound[0])
	}
}

// exactResidual returns D = L Lᵀ - Σ computed exactly (every product of two
// floats is exact at 106 bits; sums at 3000 bits are exact for these
// exponent ranges) and rounded to float64 at the end.
func exactResidual(f *denseFactor, cov mat.Symmetric) *mat.SymDense {
	n := f.n
	d := mat.NewSymDense(n, nil)
	var s, p, a, b big.Float
	s.SetPrec(3000)
	p.SetPrec(3000)
	for i := range n {
		for j := 0; j <= i; j++ {
			s.SetFloat64(-cov.At(i, j))
			ri, rj := f.row(i), f.row(j)
			for c := 0; c <= j; c++ {
				p.Mul(a.SetFloat64(ri[c]), b.SetFloat64(rj[c]))
				s.Add(&s, &p)
			}
			v, _ := s.Float64()
			d.SetSym(i, j, v)
		}
	}
	return d
}

// spdTestMatrices are covariances whose Cholesky factor the jitter
// certification is tested on: singular and near-singular RBF kernels, a
// random matrix with condition number 1e10, and a diagonal.
func spdTestMatrices(src Source) map[string]*mat.SymDense {
	ms := map[string]*mat.SymDense{
		"rbf30/8 (singular)": rbf(30, 8),
		"rbf40/2":            rbf(40, 2),
		"diag":               mat.NewSymDense(3, []float64{2, 0, 0, 0, 3, 0, 0, 0, 1e-6}),
	}
	// Q diag(λ) Qᵀ with λ from 1 to 1e-10, Q from a QR of a random matrix.
	n := 25
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, Normal(src))
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	lam := mat.NewDiagDense(n, nil)
	for i := range n {
		lam.SetDiag(i, math.Pow(10, -10*float64(i)/float64(n-1)))
	}
	var a mat.Dense
	a.Product(&q, lam, q.T())
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	ms["random cond 1e10"] = s
	return ms
}

// The certified jitter makes L Lᵀ ⪰ Σ: the exact residual D = L Lᵀ - Σ has
// λ_min(D) >= 0 and λ_max(D) <= 2j, up to the eigensolver's error on D
// (of order n·u·‖D‖, tolerance 1e-6·j). The negative control factors the
// same matrices with no jitter, where rounding leaves L Lᵀ - Σ indefinite
// for at least one of them: the test can see a violation.
func TestCholeskyJitterCertified(t *testing.T) {
	src := Seeded(52)
	violated := 0
	for name, cov := range spdTestMatrices(src) {
		m, err := NewMultiNormalCholesky(cov)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j := m.Jitter()
		lmin, lmax := symEigRange(exactResidual(m.f, cov))
		tol := 1e-6 * j
		t.Logf("%s: jitter %.3g, eigenvalues of LLᵀ-Σ in [%.3g, %.3g]·j", name, j, lmin/j, lmax/j)
		if lmin < -tol || lmax > 2*j+tol {
			t.Errorf("%s: LLᵀ-Σ has eigenvalues [%g, %g], want within [0, 2j = %g]", name, lmin, lmax, 2*j)
		}
		// Negative control: plain Cholesky of Σ itself when it succeeds.
		var chol mat.Cholesky
		if chol.Factorize(cov) {
			lmin0, _ := symEigRange(exactResidual(lowerFactor(&chol, cov.SymmetricDim()), cov))
			t.Logf("%s without jitter: λ_min(LLᵀ-Σ) = %.3g", name, lmin0)
			if lmin0 < 0 {
				violated++
			}
		}
	}
	if violated == 0 {
		t.Error("negative control: no matrix showed LLᵀ - Σ indefinite without jitter")
	}
}

func symEigRange(d *mat.SymDense) (lmin, lmax float64) {
	var eig mat.EigenSym
	if !eig.Factorize(d, false) {
		panic("eigendecomposition failed")
	}
	v := eig.Values(nil)
	return v[0], v[len(v)-1]
}

// The Collatz–Wielandt bound is an upper bound on ρ(|L||L|ᵀ), and after six
// power steps a close one.
func TestAbsGramRadiusBound(t *testing.T) {
	src := Seeded(53)
	for name, cov := range spdTestMatrices(src) {
		m, err := NewMultiNormalCholesky(cov)
		if err != nil {
			t.Fatal(err)
		}
		n := m.n
		abs := mat.NewDense(n, n, nil)
		for i := range n {
			for j, v := range m.f.row(i) {
				abs.Set(i, j, math.Abs(v))
			}
		}
		var gram mat.Dense
		gram.Mul(abs, abs.T())
		sym := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				sym.SetSym(i, j, gram.At(i, j))
			}
		}
		_, rho := symEigRange(sym)
		b := absGramRadiusBound(m.f)
		t.Logf("%s: bound/ρ = %.6f", name, b/rho)
		if !(b >= rho*(1-1e-13)) || b > 1.5*rho {
			t.Errorf("%s: bound %g vs ρ(|L||L|ᵀ) = %g", name, b, rho)
		}
	}
}

func TestSameCell(t *testing.T) {
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(v) }
	for _, c := range []struct {
		lo, hi float64
		want   float64
		ok     bool
	}{
		{0.1, 0.2, 0, true}, {-0.49, 0.49, 0, true}, {-0.5, 0.2, 0, false}, {0.4, 0.5, 0, false},
		{0.51, 1.49, 1, true}, {-1.49, -0.51, -1, true}, {-0.7, -0.6, -1, true}, {2.6, 3.2, 3, true},
		{1.4, 1.6, 0, false}, {-2.5, -2.4, 0, false}, {1e15 + 0.25, 1e15 + 0.375, 1e15, true},
	} {
		t.Run(fmt.Sprintf("%g,%g", c.lo, c.hi), func(t *testing.T) {
			got, ok := sameCell(f(c.lo), f(c.hi))
			if ok != c.ok || (ok && got != c.want) {
				t.Errorf("sameCell(%v, %v) = %v, %v; want %v, %v", c.lo, c.hi, got, ok, c.want, c.ok)
			}
		})
	}
}

// The exact path gives the same releases as the floating-point path for
// the same random stream: all deviates are drawn before any refinement, and
// a coordinate the float path decided lies in the same cell at any
// precision. Forced through the exact path (bound inflated to +Inf), from 4
// bits (several rounds) and from 128 bits (refining every deviate), the
// outputs must not change.
func TestExactPathMatchesFloatPath(t *testing.T) {
	cov := rbf(20, 3)
	for i := range 20 {
		for j := i; j < 20; j++ {
			cov.SetSym(i, j, 25*cov.At(i, j))
		}
	}
	mn, err := NewMultiNormalCholesky(cov)
	if err != nil {
		t.Fatal(err)
	}
	eig, err := NewMultiNormal(cov)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 20)
	for i := range x {
		x[i] = 100*math.Sin(float64(i)) + 1.0/3
	}
	for _, m := range []*MultiNormal{mn, eig} {
		for seed := range uint64(20) {
			for _, g := range []float64{0x1p-30, 0x1p-4, 2} {
				fast, refinedFast, err := m.addOnGrid(nil, x, g, Seeded(seed))
				if err != nil {
					t.Fatal(err)
				}
				for _, bits := range []uint{4, 64, 128} {
					var exact []float64
					var refined int
					withHooks(math.Inf(1), bits, func() {
						exact, refined, err = m.addOnGrid(nil, x, g, Seeded(seed))
					})
					if err != nil {
						t.Fatal(err)
					}
					if refined != 20 {
						t.Errorf("forced run refined %d of 20 coordinates", refined)
					}
					for i := range fast {
						if fast[i] != exact[i] {
							t.Fatalf("seed %d g %g first bits %d: coordinate %d: float path %v, exact path %v (float path refined %d)",
								seed, g, bits, i, fast[i], exact[i], refinedFast)
						}
					}
				}
			}
		}
	}
}

// cellExact refines: with the first round at 4 bits it needs several
// rounds and still finds the cell the float path found; with the first
// round at 128 bits it draws digits beyond the initial 64.
func TestCellExactRefines(t *testing.T) {
	f := &denseFactor{n: 1, k: 2, a: []float64{3.25, -1.5}}
	src := Seeded(54)
	for range 200 {
		z := []LazyNormal{*NewLazyNormal(src), *NewLazyNormal(src)}
		x := Normal(src)
		g := 0x1p-20
		w := f.a[0]*z[0].Float64() + f.a[1]*z[1].Float64()
		want := math.Round((x + w) / g)
		for _, bits := range []uint{4, 128} {
			r := &exactRelease{a: f, s: normalSampler{rd: digitReader{src: src}}, z: z}
			var c float64
			var err error
			withHooks(1, bits, func() { c, err = r.cellExact(0, x, g) })
			if err != nil {
				t.Fatal(err)
			}
			// The float estimate can only be off by one cell, and only
			// when x + w is within 1e-9 cells of a boundary.
			if d := math.Abs((x+w)/g - want); c != want && d < 0.5-1e-9 {
				t.Fatalf("bits %d: exact cell %v, float estimate %v", bits, c, want)
			}
			if bits == 128 && (z[0].Bits() < 128 || z[1].Bits() < 128) {
				t.Fatalf("deviates not refined: %d, %d bits", z[0].Bits(), z[1].Bits())
			}
		}
	}
}

func TestAddOnGridValidation(t *testing.T) {
	cov := mat.NewSymDense(2, []float64{4, 1, 1, 9})
	m, err := NewMultiNormalCholesky(cov)
	if err != nil {
		t.Fatal(err)
	}
	src := Seeded(55)
	for _, c := range []struct {
		name string
		dst  []float64
		x    []float64
		g    float64
	}{
		{"grid not a power of two", nil, []float64{1, 2}, 0.3},
		{"zero grid", nil, []float64{1, 2}, 0},
		{"NaN grid", nil, []float64{1, 2}, math.NaN()},
		{"negative grid", nil, []float64{1, 2}, -0.5},
		{"grid below 2^-1000", nil, []float64{1, 2}, 0x1p-1010},
		{"NaN x", nil, []float64{math.NaN(), 2}, 0.5},
		{"infinite x", nil, []float64{1, math.Inf(-1)}, 0.5},
		{"x too large for the grid", nil, []float64{0x1p53, 2}, 0.5},
		{"noise too large for the grid", nil, []float64{1, 2}, 0x1p-50},
		{"short x", nil, []float64{1}, 0.5},
		{"short dst", make([]float64, 1), []float64{1, 2}, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := m.AddOnGrid(c.dst, c.x, c.g, src); !errors.Is(err, param.ErrInvalid) {
				t.Errorf("%s: err = %v, want param.ErrInvalid", c.name, err)
			} else {
				t.Logf("%s: %v", c.name, err)
			}
		})
	}
	// dst may alias x.
	x := []float64{1, 2}
	y, err := m.AddOnGrid(x, x, 0.5, src)
	if err != nil || &y[0] != &x[0] {
		t.Errorf("aliased dst: %v", err)
	}
}

func TestAddSnappedGranularity(t *testing.T) {
	for _, sd := range []float64{1, 3, 100, 1e-3} {
		cov := mat.NewSymDense(2, []float64{sd * sd, 0, 0, sd * sd / 4})
		m, err := NewMultiNormalCholesky(cov)
		if err != nil {
			t.Fatal(err)
		}
		g := m.Granularity()
		if !isPowerOfTwo(g) || g < sd*0x1p-24 || g >= sd*0x1p-23 {
			t.Errorf("sd %g: granularity %g not the power of two in [2^-24 sd, 2^-23 sd)", sd, g)
		}
		y, err := m.AddSnapped(nil, []float64{0.1, 1e3 / 7}, Seeded(56))
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if v/g != math.Trunc(v/g) {
				t.Errorf("y[%d] = %v not a multiple of %g", i, v, g)
			}
		}
	}
	// A zero covariance has nothing to add.
	m, err := NewMultiNormal(mat.NewSymDense(2, nil))
	if err != nil {
		t.Fatal(err)
	}
	if y, err := m.AddSnapped(nil, []float64{0.1, 0.2}, nil); err != nil || y[0] != 0.1 || y[1] != 0.2 {
		t.Errorf("zero covariance: %v, %v", y, err)
	}
}

// cellCounts releases n draws of coordinate 0 and histograms round(y/g)
// over kmin..kmax, clamping the tails into the end cells.
func cellCounts(t *testing.T, m *MultiNormal, x []float64, g float64, n, kmin, kmax int, src Source) []int {
	t.Helper()
	counts := make([]int, kmax-kmin+1)
	y := make([]float64, len(x))
	for range n {
		if _, err := m.AddOnGrid(y, x, g, src); err != nil {
			t.Fatal(err)
		}
		k := int(y[0] / g)
		counts[max(kmin, min(kmax, k))-kmin]++
	}
	return counts
}

// The 1-D release is exactly the rounded Gaussian: chi-square of the cell
// frequencies against Φ(((k+½)g - x)/σ) - Φ(((k-½)g - x)/σ), σ the
// factor's L₁₁ (the release's exact standard deviation), on a coarse grid
// g = 1/2 ≈ σ/2 for inputs with arbitrary low-order bits. Each run has
// 100,000 draws; p < 1e-4 fails. A wrong σ (2% off) must be rejected, and
// the forced exact path must pass too.
func TestAddOnGridExact1D(t *testing.T) {
	m, err := NewMultiNormalCholesky(mat.NewSymDense(1, []float64{1.1}))
	if err != nil {
		t.Fatal(err)
	}
	sigma := m.f.a[0]
	const g, n = 0.5, 100000
	src := Seeded(57)
	chi := func(x float64, counts []int, kmin, kmax int, s float64) float64 {
		_, _, p, err := stattest.ChiSquare(counts, stattest.NormalCellProbs(x, s, g, kmin, kmax))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, x := range []float64{0.1, 1.0 / 3, -7.25 + 0x1p-40, 1e3 / 7, math.Pi * 1e-5} {
		c := int(math.Round(x / g))
		kmin, kmax := c-9, c+9
		counts := cellCounts(t, m, []float64{x}, g, n, kmin, kmax, src)
		if p := chi(x, counts, kmin, kmax, sigma); p < 1e-4 {
			t.Errorf("x = %v: chi-square p = %g, counts %v", x, p, counts)
		}
		if p := chi(x, counts, kmin, kmax, sigma*1.02); p >= 1e-4 {
			t.Errorf("x = %v: sigma 2%% too large not rejected (p = %g)", x, p)
		}
	}
	withHooks(math.Inf(1), 64, func() {
		x := 0.3
		counts := cellCounts(t, m, []float64{x}, g, n/5, -9, 10, src)
		if p := chi(x, counts, -9, 10, sigma); p < 1e-4 {
			t.Errorf("forced exact path: chi-square p = %g", p)
		}
	})
}

// The 2-D correlated release (ρ = 0.8) against exact cell probabilities from
// the bivariate normal with the factor's covariance L Lᵀ: 13×13 cells around
// x, cells with fewer than 5 expected pooled with everything outside.
func TestAddOnGridExact2D(t *testing.T) {
	t.Parallel()
	cov := mat.NewSymDense(2, []float64{1.3, 0.8 * 1.3, 0.8 * 1.3, 1.3})
	m, err := NewMultiNormalCholesky(cov)
	if err != nil {
		t.Fatal(err)
	}
	l00, l10, l11 := m.f.a[0], m.f.a[1], m.f.a[2]
	s1, s2 := l00, math.Hypot(l10, l11)
	rho := l10 / s2
	const g, n, half = 0.5, 200000, 6
	x := []float64{0.3, -1.0 / 3}
	c1, c2 := int(math.Round(x[0]/g)), int(math.Round(x[1]/g))
	side := 2*half + 1
	counts := make([]int, side*side+1) // last: outside the box
	src := Seeded(58)
	y := make([]float64, 2)
	for range n {
		if _, err := m.AddOnGrid(y, x, g, src); err != nil {
			t.Fatal(err)
		}
		i, j := int(y[0]/g)-c1+half, int(y[1]/g)-c2+half
		if i < 0 || i >= side || j < 0 || j >= side {
			counts[side*side]++
			continue
		}
		counts[i*side+j]++
	}
	probs := stattest.BivariateCellProbs(x[0], x[1], s1, s2, rho, g, c1, c2, half)
	oc, op := stattest.PoolSmall(counts, probs, 5)
	chi2, df, p, err := stattest.ChiSquare(oc, op)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2-D: chi2 = %.1f, df %d, p = %.3g", chi2, df, p)
	if p < 1e-4 {
		t.Errorf("2-D correlated release: chi2 = %g (df %d), p = %g", chi2, df, p)
	}
	// Negative control: the same counts against independent coordinates.
	probs = stattest.BivariateCellProbs(x[0], x[1], s1, s2, 0, g, c1, c2, half)
	oc, op = stattest.PoolSmall(counts, probs, 5)
	if _, _, p, _ := stattest.ChiSquare(oc, op); p >= 1e-4 {
		t.Errorf("negative control: correlation 0.8 not distinguished from 0 (p = %g)", p)
	}
}

// A singular covariance through the eigendecomposition factor (rank 1,
// W = v·z up to rounding-size directions) is released exactly too: the
// marginal of coordinate 0 is the rounded N(x₀, Σ_j L₀ⱼ²), and the
// coordinates keep the rank-1 relation W₁ = -2W₀.
func TestAddOnGridSingular(t *testing.T) {
	t.Parallel()
	v := []float64{1, -2, 0.5}
	cov := outer(v)
	m, err := NewMultiNormal(cov)
	if err != nil {
		t.Fatal(err)
	}
	var0 := 0.0
	for _, a := range m.f.row(0) {
		var0 += a * a
	}
	const g, n = 0.5, 60000
	x := []float64{0.2, -0.7, 3}
	src := Seeded(59)
	counts := make([]int, 19)
	y := make([]float64, 3)
	for range n {
		if _, err := m.AddOnGrid(y, x, g, src); err != nil {
			t.Fatal(err)
		}
		counts[max(-9, min(9, int(y[0]/g)))+9]++
		// |W₁ + 2W₀| is at most the rounding of both, 1.5g, plus the
		// rounding-size directions.
		if d := math.Abs((y[1] - x[1]) + 2*(y[0]-x[0])); d > 1.5*g+1e-6 {
			t.Fatalf("release %v breaks W₁ = -2W₀ by %g", y, d)
		}
	}
	_, _, p, err := stattest.ChiSquare(counts, stattest.NormalCellProbs(x[0], math.Sqrt(var0), g, -9, 9))
	if err != nil {
		t.Fatal(err)
	}
	if p < 1e-4 {
		t.Errorf("singular release, coordinate 0: p = %g, counts %v", p, counts)
	}
}
