package noise

import (
	"crypto/cipher"
	"errors"
	"math"
	"math/big"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/stattest"

	"github.com/tracepriv/tracepriv/param"
	"gonum.org/v1/gonum/mat"
)

// stateComps returns the state-space forms of the kernels.
func stateComps(t testing.TB, ks ...gp.Kernel) []StateSpace {
	t.Helper()
	out := make([]StateSpace, len(ks))
	for i, k := range ks {
		m, err := gp.StateSpace(k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m
	}
	return out
}

// sumGram returns alpha·Σ_k Gram(k, ts).
func sumGram(alpha float64, ts []float64, ks ...gp.Kernel) *mat.SymDense {
	n := len(ts)
	c := mat.NewSymDense(n, nil)
	for _, k := range ks {
		g := gp.Gram(k, ts)
		for i := range n {
			for j := i; j < n; j++ {
				c.SetSym(i, j, c.At(i, j)+alpha*g.At(i, j))
			}
		}
	}
	return c
}

// gapTimes returns n timestamps with gaps drawn from gaps (seeded), so the
// steps repeat as GPS sampling does.
func gapTimes(n int, gaps []float64, seed uint64) []float64 {
	src := Seeded(seed)
	ts := make([]float64, n)
	ts[0] = 1000.25
	for i := 1; i < n; i++ {
		ts[i] = ts[i-1] + gaps[Int64N(src, int64(len(gaps)))]
	}
	return ts
}

// markovRelease runs one release of x (one coordinate per slice) with the
// key of Seeded(seed) and returns it.
func markovRelease(t testing.TB, comps []StateSpace, alpha float64, opt MarkovOptions, seed uint64, x [][]float64, ts []float64) ([][]float64, *MarkovRelease) {
	t.Helper()
	opt.Source = Seeded(seed)
	r, err := NewMarkovRelease(comps, alpha, opt)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([][]float64, len(x))
	for i := range dst {
		dst[i] = make([]float64, len(ts))
	}
	if err := r.Release(dst, x, ts); err != nil {
		t.Fatal(err)
	}
	return dst, r
}

func zeros(dims, n int) [][]float64 {
	x := make([][]float64, dims)
	for i := range x {
		x[i] = make([]float64, n)
	}
	return x
}

// The key streams are AES-256-CTR: stream i is the keystream of
// crypto/cipher's CTR mode from the counter block (i, 0), the same index
// gives the same words, and different indices different ones.
func TestKeyStreamIsCTR(t *testing.T) {
	k, err := newStreamKey(Seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range []uint64{0, 1, 12345678901234} {
		s := k.stream(idx)
		got := make([]byte, 80)
		for i := 0; i < 80; i += 8 {
			v := s.Uint64()
			for b := range 8 {
				got[i+b] = byte(v >> (8 * b))
			}
		}
		var iv [16]byte
		for b := range 8 {
			iv[7-b] = byte(idx >> (8 * b))
		}
		want := make([]byte, 80)
		ctrStream(k, iv[:]).XORKeyStream(want, want)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("index %d: byte %d differs from crypto/cipher CTR", idx, i)
			}
		}
	}
	a, b := k.stream(7), k.stream(8)
	if a.Uint64() == b.Uint64() {
		t.Error("streams 7 and 8 start alike")
	}
	k2, _ := newStreamKey(Seeded(3))
	if k.stream(9).Uint64() != k2.stream(9).Uint64() {
		t.Error("same seed, same index: different streams")
	}
}

// ctrStream is crypto/cipher's CTR mode under the stream key.
func ctrStream(k *streamKey, iv []byte) cipher.Stream { return cipher.NewCTR(k.block, iv) }

// The release is a function of the key, the inputs and N alone: chunked
// (streaming) calls and any number of workers give the same output, bit
// for bit, and another seed a different one.
func TestMarkovDeterministicWhateverTheSharding(t *testing.T) {
	t.Parallel()
	comps := stateComps(t, gp.Matern32{Variance: 1, Lengthscale: 7}, gp.Matern72{Variance: 2, Lengthscale: 20}, gp.Matern12{Variance: 0.5, Lengthscale: 3})
	n := 2500
	ts := gapTimes(n, []float64{1, 2, 3, 5, 0.5}, 1)
	x := zeros(2, n)
	for i := range n {
		x[0][i] = 3 * math.Sin(float64(i)/40)
		x[1][i] = 1.0 / 3
	}
	opt := MarkovOptions{N: n, Dims: 2, Grid: 0x1p-10, Workers: 1}
	want, r := markovRelease(t, comps, 9, opt, 11, x, ts)
	if r.Randomness() != "seeded:11" || r.Released() != n {
		t.Errorf("Randomness %q, Released %d", r.Randomness(), r.Released())
	}
	for _, workers := range []int{2, 5} {
		for _, chunks := range [][]int{{n}, {1, 999, 1500}, {700, 700, 700, 400}} {
			opt.Workers = workers
			opt.Source = Seeded(11)
			r, err := NewMarkovRelease(comps, 9, opt)
			if err != nil {
				t.Fatal(err)
			}
			got := zeros(2, n)
			lo := 0
			for _, m := range chunks {
				if err := r.Release([][]float64{got[0][lo : lo+m], got[1][lo : lo+m]}, [][]float64{x[0][lo : lo+m], x[1][lo : lo+m]}, ts[lo:lo+m]); err != nil {
					t.Fatal(err)
				}
				lo += m
			}
			for d := range 2 {
				for i := range n {
					if got[d][i] != want[d][i] {
						t.Fatalf("workers %d, chunks %v: point %d coordinate %d: %v, want %v", workers, chunks, i, d, got[d][i], want[d][i])
					}
				}
			}
		}
	}
	other, _ := markovRelease(t, comps, 9, opt, 12, x, ts)
	if other[0][0] == want[0][0] && other[0][1] == want[0][1] {
		t.Error("another seed gave the same release")
	}
}

func TestMarkovValidation(t *testing.T) {
	comps := stateComps(t, gp.Matern32{Variance: 1, Lengthscale: 7})
	ok := MarkovOptions{N: 4, Grid: 0x1p-10, Source: Seeded(1)}
	for _, c := range []struct {
		name  string
		comps []StateSpace
		alpha float64
		opt   MarkovOptions
	}{
		{"no components", nil, 1, ok},
		{"zero alpha", comps, 0, ok},
		{"NaN alpha", comps, math.NaN(), ok},
		{"zero N", comps, 1, MarkovOptions{N: 0, Grid: 0x1p-10}},
		{"grid not a power of two", comps, 1, MarkovOptions{N: 4, Grid: 0.3}},
		{"grid too fine", comps, 1, MarkovOptions{N: 4, Grid: 0x1p-60}},
		{"too many dims", comps, 1, MarkovOptions{N: 4, Dims: 100, Grid: 0x1p-10}},
		{"nil component", []StateSpace{nil}, 1, ok},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewMarkovRelease(c.comps, c.alpha, c.opt); !errors.Is(err, param.ErrInvalid) {
				t.Errorf("%s: err = %v, want param.ErrInvalid", c.name, err)
			}
		})
	}
	r, err := NewMarkovRelease(comps, 1, ok)
	if err != nil {
		t.Fatal(err)
	}
	one := func(v float64) [][]float64 { return [][]float64{{v}} }
	for _, c := range []struct {
		name      string
		dst, x    [][]float64
		ts        []float64
		wantParam bool
	}{
		{"NaN x", one(0), one(math.NaN()), []float64{0}, true},
		{"x too large", one(0), one(0x1p43), []float64{0}, true},
		{"NaN time", one(0), one(1), []float64{math.NaN()}, true},
		{"length mismatch", one(0), [][]float64{{1, 2}}, []float64{0}, true},
		{"wrong dims", [][]float64{{0}, {0}}, [][]float64{{1}, {1}}, []float64{0}, true},
		{"too many points", [][]float64{make([]float64, 5)}, [][]float64{make([]float64, 5)}, make([]float64, 5), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := r.Release(c.dst, c.x, c.ts); !errors.Is(err, param.ErrInvalid) {
				t.Errorf("%s: err = %v, want param.ErrInvalid", c.name, err)
			}
		})
	}
	if err := r.Release(one(0), one(1), []float64{10}); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(one(0), one(1), []float64{9}); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("decreasing time: err = %v", err)
	}
	// A parameter error leaves the release usable.
	if err := r.Release(one(0), one(1), []float64{10}); err != nil {
		t.Errorf("repeated time after a rejected chunk: %v", err)
	}
	// Timestamps given in advance must be the ones released, and N must
	// agree with them.
	times := []float64{0, 1, 3}
	if _, err := NewMarkovRelease(comps, 1, MarkovOptions{N: 4, Times: times, Grid: 0x1p-10}); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("N != len(Times): err = %v", err)
	}
	if _, err := NewMarkovRelease(comps, 1, MarkovOptions{Times: []float64{0, 2, 1}, Grid: 0x1p-10}); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("decreasing Times: err = %v", err)
	}
	rt, err := NewMarkovRelease(comps, 1, MarkovOptions{Times: times, Grid: 0x1p-10, Source: Seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Release(one(0), one(1), []float64{0.5}); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("timestamp differing from Times: err = %v", err)
	}
	if err := rt.Release([][]float64{make([]float64, 3)}, [][]float64{{1, 2, 3}}, times); err != nil {
		t.Errorf("the announced times: %v", err)
	}
}

// The empirical covariance of 20,000 seeded releases of 6 points at
// irregular times (one repeated) matches alpha·Σ_c Gram(k_c) + ηI entry by
// entry within z = stattest.Z standard errors (CovarianceSE), the means
// are 0, and the two coordinates are uncorrelated. The negative control
// (one lengthscale 30% off) must fail some entry.
func TestMarkovEmpiricalCovariance(t *testing.T) {
	t.Parallel()
	ks := []gp.Kernel{gp.Matern32{Variance: 1, Lengthscale: 3}, gp.Matern72{Variance: 0.7, Lengthscale: 10}}
	comps := stateComps(t, ks...)
	ts := []float64{0, 1.5, 1.5, 4, 9, 9.75}
	n, alpha := len(ts), 4.0
	const m = 20000
	r, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: n * m, Dims: 2, Grid: 0x1p-30, Source: Seeded(21)})
	if err != nil {
		t.Fatal(err)
	}
	// One long release of m copies of the trace, 1e6 s apart: the copies
	// are independent to e^-1e5 (far below float resolution), and share N.
	ys := [2][][]float64{}
	for d := range 2 {
		ys[d] = make([][]float64, m)
	}
	var tsAll []float64
	for c := range m {
		for _, t0 := range ts {
			tsAll = append(tsAll, float64(c)*1e6+t0)
		}
	}
	out := zeros(2, n*m)
	if err := r.Release(out, zeros(2, n*m), tsAll); err != nil {
		t.Fatal(err)
	}
	for d := range 2 {
		for c := range m {
			ys[d][c] = out[d][c*n : (c+1)*n]
		}
	}
	want := sumGram(alpha, ts, ks...)
	for i := range n {
		want.SetSym(i, i, want.At(i, i)+r.Eta())
	}
	check := func(cov *mat.SymDense) (bad int) {
		for i := range n {
			for j := i; j < n; j++ {
				for d := range 2 {
					s := 0.0
					for c := range m {
						s += ys[d][c][i] * ys[d][c][j]
					}
					se := stattest.CovarianceSE(cov.At(i, i), cov.At(j, j), cov.At(i, j), m)
					if math.Abs(s/m-cov.At(i, j)) > stattest.Z*se {
						bad++
					}
				}
			}
		}
		return bad
	}
	if bad := check(want); bad > 0 {
		t.Errorf("%d covariance entries off by more than z = %g standard errors", bad, stattest.Z)
	}
	for i := range n {
		for d := range 2 {
			col := make([]float64, m)
			for c := range m {
				col[c] = ys[d][c][i]
			}
			if err := stattest.CheckMean(col, 0, want.At(i, i), stattest.Z); err != nil {
				t.Errorf("coordinate %d, point %d: %v", d, i, err)
			}
		}
		s := 0.0
		for c := range m {
			s += ys[0][c][i] * ys[1][c][i]
		}
		if se := stattest.CovarianceSE(want.At(i, i), want.At(i, i), 0, m); math.Abs(s/m) > stattest.Z*se {
			t.Errorf("point %d: the coordinates are correlated (%g)", i, s/m)
		}
	}
	wrong := sumGram(alpha, ts, ks[0], gp.Matern72{Variance: 0.7, Lengthscale: 13})
	if bad := check(wrong); bad == 0 {
		t.Error("negative control: a lengthscale 30% off passes every entry")
	}
}

// Exactness of the released cells on a coarse grid (g = 1 for a standard
// deviation of about 1.6): the joint law of two consecutive released
// points (correlation about 0.8) is the rounded bivariate normal with the
// implemented covariance (chi-square over 13×13 cells, 100,000 releases,
// p < 1e-4 fails); the same counts against independent coordinates must be
// rejected. Inputs have arbitrary low-order bits.
func TestMarkovCellsExact2D(t *testing.T) {
	t.Parallel()
	k := gp.Matern32{Variance: 1, Lengthscale: 4}
	comps := stateComps(t, k)
	const g, m, half = 1.0, 100000, 6
	ts := []float64{0, 1.25, 2.5}
	x := []float64{0.3 + 0x1p-40, -1.0 / 3, 2.0 / 7}
	n := len(ts)
	r, err := NewMarkovRelease(comps, 2.5, MarkovOptions{N: n * m, Grid: g, Source: Seeded(22)})
	if err != nil {
		t.Fatal(err)
	}
	side := 2*half + 1
	counts := make([]int, side*side+1)
	c1, c2 := int(math.Round(x[1]/g)), int(math.Round(x[2]/g))
	xa, tsa := make([]float64, n*m), make([]float64, n*m)
	for c := range m {
		for i := range n {
			xa[c*n+i] = x[i]
			tsa[c*n+i] = float64(c)*1e4 + ts[i]
		}
	}
	out := make([]float64, n*m)
	if err := r.Release([][]float64{out}, [][]float64{xa}, tsa); err != nil {
		t.Fatal(err)
	}
	for c := range m {
		i, j := int(out[c*n+1]/g)-c1+half, int(out[c*n+2]/g)-c2+half
		if i < 0 || i >= side || j < 0 || j >= side {
			counts[side*side]++
			continue
		}
		counts[i*side+j]++
	}
	// The implemented law: variance h² + ω² per point (to 1e-15), the
	// covariance of consecutive points h²·Â_00 with Â the release's own
	// transition over 1.25 s.
	h := r.comps[0].h
	v := h*h + r.Eta()
	id := r.stepIndex[[2]float64{1.25, 0}]
	st, _ := r.step(0, id)
	rho := h * h * st.a[0] / v
	sd := math.Sqrt(v)
	t.Logf("sd %.4f, correlation %.4f, η = %.3g", sd, rho, r.Eta())
	probs := func(rho float64) []float64 {
		return stattest.BivariateCellProbs(x[1], x[2], sd, sd, rho, g, c1, c2, half)
	}
	oc, op := stattest.PoolSmall(counts, probs(rho), 5)
	chi2, df, p, err := stattest.ChiSquare(oc, op)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chi2 = %.1f, df %d, p = %.3g", chi2, df, p)
	if p < 1e-4 {
		t.Errorf("released cells: chi2 = %g (df %d), p = %g", chi2, df, p)
	}
	oc, op = stattest.PoolSmall(counts, probs(0), 5)
	if _, _, p, _ := stattest.ChiSquare(oc, op); p >= 1e-4 {
		t.Errorf("negative control: correlation %.2f not distinguished from 0 (p = %g)", rho, p)
	}
}

// withMarkovHooks sets the exact-release hooks for the duration of f.
func withMarkovHooks(inflation float64, firstBits uint, every int, f func()) {
	old := markovCheckpointEvery
	markovCheckpointEvery = every
	defer func() { markovCheckpointEvery = old }()
	withHooks(inflation, firstBits, f)
}

// The exact path reproduces the float path: with the float bound inflated
// to +Inf every coordinate is decided by big-float refinement (from 4 bits,
// several rounds; from 64 and 128), from checkpoints (every 8 points, short
// lengthscales, so the error balls decay within the trace) or from the
// first point, and the outputs are the same cells, bit for bit, on a fine
// and on a coarse grid.
func TestMarkovExactPathMatchesFloatPath(t *testing.T) {
	comps := stateComps(t, gp.Matern52{Variance: 1, Lengthscale: 1.5}, gp.Matern12{Variance: 0.3, Lengthscale: 4})
	const n = 60
	ts := gapTimes(n, []float64{1, 2, 3, 4, 5}, 2)
	x := zeros(2, n)
	for i := range n {
		x[0][i] = 100*math.Sin(float64(i)) + 1.0/3
		x[1][i] = -7.25 + 0x1p-40
	}
	fromCk := 0
	for seed := range uint64(3) {
		for _, g := range []float64{0x1p-30, 0x1p-10, 1} {
			opt := MarkovOptions{N: n, Dims: 2, Grid: g}
			var fast [][]float64
			withMarkovHooks(1, 64, 8, func() { fast, _ = markovRelease(t, comps, 25, opt, 30+seed, x, ts) })
			for _, b := range []uint{4, 64, 128} {
				var exact [][]float64
				var r *MarkovRelease
				withMarkovHooks(math.Inf(1), b, 8, func() { exact, r = markovRelease(t, comps, 25, opt, 30+seed, x, ts) })
				if r.Refined() != 2*n {
					t.Errorf("forced run refined %d of %d coordinates", r.Refined(), 2*n)
				}
				for _, e := range r.exact {
					fromCk += e.fromCheckpoint
				}
				for d := range 2 {
					for i := range n {
						if fast[d][i] != exact[d][i] {
							t.Fatalf("seed %d g %g first bits %d: point %d coordinate %d: float path %v, exact path %v", seed, g, b, i, d, fast[d][i], exact[d][i])
						}
					}
				}
			}
		}
	}
	t.Logf("component recomputations started from a checkpoint: %d", fromCk)
	if fromCk == 0 {
		t.Error("no exact recomputation started from a checkpoint")
	}
}

// The float path's error bound contains the exact noise and is not loose:
// for every coordinate, |w - W| <= bound with W enclosed at 200 bits from
// the first point, and the bound is within a factor 1000 of the largest
// actual error over the trace (the bound is a worst case over rounding
// directions; actual errors partly cancel).
func TestMarkovFloatBound(t *testing.T) {
	ks := []gp.Kernel{gp.Matern72{Variance: 0.8, Lengthscale: 8.6}, gp.Matern72{Variance: 0.6, Lengthscale: 41}, gp.Matern32{Variance: 0.1, Lengthscale: 2}}
	testMarkovFloatBound(t, ks)
}

// The same for components whose lengthscales are far longer than the trace
// (the envelope of a family reaching days), whose double-double states
// (markovTask.stepDD) make the bound small: one- and more-dimensional.
func TestMarkovFloatBoundDoubleDouble(t *testing.T) {
	testMarkovFloatBound(t, []gp.Kernel{gp.Matern12{Variance: 0.5, Lengthscale: 9e5}, gp.Matern12{Variance: 0.4, Lengthscale: 3e3}, gp.Matern12{Variance: 0.1, Lengthscale: 2}})
	testMarkovFloatBound(t, []gp.Kernel{gp.Matern32{Variance: 0.5, Lengthscale: 9e5}, gp.Matern52{Variance: 0.3, Lengthscale: 4e4}, gp.Matern72{Variance: 0.1, Lengthscale: 3}})
}

// A component whose lengthscale is long next to the trace never contracts
// its float error ball; with states and deviates in double-double and the
// deviates' error weighted by ||B̂||_F, its ball stays far below the grid
// over 20,000 points (about 2e-13 m) and no coordinate needs the exact
// path. With the deviates' float error weighted by ||Â|| instead, the bound
// reaches 1.4e-9 m for the Matérn 1/2 components and 2.8e-9 m for the
// Matérn 3/2 ones (2.9e-9 m with float states), and every coordinate it
// left open replayed the component from the first point: a release
// quadratic in its length.
func TestMarkovSlowComponent(t *testing.T) {
	t.Run("matern12", func(t *testing.T) {
		testMarkovSlowComponent(t, 1e-12, gp.Matern12{Variance: 0.5, Lengthscale: 9e5}, gp.Matern12{Variance: 0.5, Lengthscale: 1.6e5}, gp.Matern12{Variance: 0.1, Lengthscale: 10})
	})
	t.Run("matern32", func(t *testing.T) {
		testMarkovSlowComponent(t, 1e-12, gp.Matern32{Variance: 0.5, Lengthscale: 9e5}, gp.Matern32{Variance: 0.5, Lengthscale: 5.6e4}, gp.Matern52{Variance: 0.1, Lengthscale: 10})
	})
}

func testMarkovSlowComponent(t *testing.T, limit float64, ks ...gp.Kernel) {
	comps := stateComps(t, ks...)
	const n = 20000
	ts := gapTimes(n, []float64{1, 2, 3, 4, 5}, 5)
	var mu sync.Mutex
	worst := 0.0
	markovTraceHook = func(dim, k int, w, bound float64) {
		mu.Lock()
		worst = math.Max(worst, bound)
		mu.Unlock()
	}
	defer func() { markovTraceHook = nil }()
	_, r := markovRelease(t, comps, 1.5e4, MarkovOptions{Times: ts, Dims: 2, Grid: 0x1p-10}, 7, zeros(2, n), ts)
	t.Logf("largest float bound %.3g m over %d points, %d refined", worst, n, r.Refined())
	if worst > limit {
		t.Errorf("float bound %.3g m: the slow component's error ball grows with the trace", worst)
	}
}

func testMarkovFloatBound(t *testing.T, ks []gp.Kernel) {
	comps := stateComps(t, ks...)
	// Each point is enclosed exactly from the first one (quadratic in n):
	// -short checks a 200-point trace.
	n := 400
	if testing.Short() {
		n = 200
	}
	ts := gapTimes(n, []float64{1, 2, 3, 4, 5}, 3)
	type wb struct{ w, bound float64 }
	got := make([]wb, n)
	var mu sync.Mutex
	markovTraceHook = func(dim, k int, w, bound float64) {
		mu.Lock()
		got[k] = wb{w, bound}
		mu.Unlock()
	}
	defer func() { markovTraceHook = nil }()
	var r *MarkovRelease
	withMarkovHooks(1, 64, n+1, func() {
		_, r = markovRelease(t, comps, 1e4, MarkovOptions{N: n, Grid: 0x1p-10}, 40, zeros(1, n), ts)
	})
	worstRatio, maxErr, maxBound := 0.0, 0.0, 0.0
	ex := newMarkovExact(r, 0)
	for k := range n {
		mid, rad, _, err := ex.enclose(k, ts[k], 200)
		if err != nil {
			t.Fatal(err)
		}
		var d big.Float
		d.SetPrec(300).Sub(new(big.Float).SetFloat64(got[k].w), mid)
		actual, _ := d.Abs(&d).Float64()
		actual += math.Ldexp(rad, -200)
		if !(actual <= got[k].bound) {
			t.Fatalf("point %d: actual error %.3g exceeds the bound %.3g", k, actual, got[k].bound)
		}
		worstRatio = math.Max(worstRatio, actual/got[k].bound)
		maxErr = math.Max(maxErr, actual)
		maxBound = math.Max(maxBound, got[k].bound)
	}
	t.Logf("largest actual error %.3g, largest bound %.3g (%.3g of the grid), worst error/bound %.3g", maxErr, maxBound, maxBound/0x1p-10, worstRatio)
	if maxBound > 1000*maxErr {
		t.Errorf("bound %.3g more than 1000 times the largest actual error %.3g", maxBound, maxErr)
	}
}

// Black-box lattice coverage: with noise of about 50 grid steps, every
// release of the last of three points is a multiple of g and every lattice
// point within ±2σ of x is hit, for x and for inputs differing from it in
// the low-order bits, by a fraction of a step and by several steps. The
// false-alarm probability is bounded as in TestLatticeCoverage.
func TestMarkovLatticeCoverage(t *testing.T) {
	t.Parallel()
	const g, m = 0x1p-10, 20000
	comps := stateComps(t, gp.Matern32{Variance: 1, Lengthscale: 5})
	ts := []float64{0, 2, 3}
	alpha := (50 * g) * (50 * g)
	base := 1234.5678912345
	variants := map[string]float64{
		"x": base, "x, 1-ulp": math.Nextafter(base, 2e3), "x + 0.37 g": base + 0.37*g, "x + 7 g": base + 7*g, "x - 2.5 g": base - 2.5*g,
	}
	r0, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: 3, Grid: g})
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(r0.comps[0].h*r0.comps[0].h + r0.Eta())
	falseAlarm := 0.0
	for _, x0 := range variants {
		falseAlarm += stattest.CoverLatticeFalseAlarm(x0, sd, g, x0-2*sd, x0+2*sd, m)
	}
	t.Logf("false-alarm probability of the coverage check <= %.2g", falseAlarm)
	if falseAlarm > 1e-6 {
		t.Fatalf("coverage check too weak: false-alarm bound %g", falseAlarm)
	}
	seed := uint64(50)
	for name, x0 := range variants {
		seed++
		r, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: 3 * m, Grid: g, Source: Seeded(seed)})
		if err != nil {
			t.Fatal(err)
		}
		xa, tsa := make([]float64, 3*m), make([]float64, 3*m)
		for c := range m {
			for i := range 3 {
				xa[3*c+i] = x0
				tsa[3*c+i] = float64(c)*1e4 + ts[i]
			}
		}
		out := make([]float64, 3*m)
		if err := r.Release([][]float64{out}, [][]float64{xa}, tsa); err != nil {
			t.Fatal(err)
		}
		ys := make([]float64, m)
		for c := range m {
			ys[c] = out[3*c+2]
		}
		cv, err := stattest.CoverLattice(ys, g, x0-2*sd, x0+2*sd)
		if err != nil {
			t.Fatal(err)
		}
		if cv.OffLattice != 0 || cv.Hit != cv.Points {
			t.Errorf("%s: %d off the lattice, %d of %d points hit, missing %v", name, cv.OffLattice, cv.Hit, cv.Points, cv.Missing)
		}
	}
}

// implementedCov returns the exact covariance Ĉ of one coordinate of the
// implemented recursion (the release's float Â, B̂ and h read as reals),
// Σ_c h_c²·[Cov(ŝ_c,i, ŝ_c,j)]_00, computed at 160 bits and rounded:
// Ŝ_1 = I, Ŝ_k = Â Ŝ Âᵀ + B̂ B̂ᵀ, Cov(ŝ_i, ŝ_j) = Â_i···Â_(j+1) Ŝ_j.
func implementedCov(r *MarkovRelease, n int) *mat.SymDense {
	const prec = 160
	out := make([][]big.Float, n)
	for i := range out {
		out[i] = make([]big.Float, n)
		for j := range out[i] {
			out[i][j].SetPrec(prec)
		}
	}
	var p big.Float
	p.SetPrec(prec)
	for c, comp := range r.comps {
		d := comp.d
		bf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
		// Each step's Â and B̂ converted once (exactly: SetFloat64), not
		// at every use of the O(n²) propagation below.
		aBig, bBig := make([][]big.Float, n), make([][]big.Float, n)
		for i := 1; i < n; i++ {
			st, _ := r.step(c, r.ids[i])
			aBig[i], bBig[i] = make([]big.Float, d*d), make([]big.Float, d*d)
			for q := range d * d {
				aBig[i][q].SetPrec(prec).SetFloat64(st.a[q])
				bBig[i][q].SetPrec(prec).SetFloat64(st.b[q])
			}
		}
		sm := make([]big.Float, d*d) // Ŝ_j
		for i := range sm {
			sm[i].SetPrec(prec)
		}
		for i := range d {
			sm[i*d+i].SetInt64(1)
		}
		h2 := new(big.Float).SetPrec(prec).Mul(bf(comp.h), bf(comp.h))
		as := make([]big.Float, d*d)
		v, nv := make([]big.Float, d), make([]big.Float, d)
		for j := range n {
			if j > 0 {
				sa, sb := aBig[j], bBig[j]
				// Ŝ = Â Ŝ Âᵀ + B̂ B̂ᵀ.
				for a := range d {
					for b := range d {
						as[a*d+b].SetPrec(prec).SetInt64(0)
						for q := range d {
							as[a*d+b].Add(&as[a*d+b], p.Mul(&sa[a*d+q], &sm[q*d+b]))
						}
					}
				}
				for a := range d {
					for b := range d {
						v := &sm[a*d+b]
						v.SetInt64(0)
						for q := range d {
							v.Add(v, p.Mul(&as[a*d+q], &sa[b*d+q]))
							v.Add(v, p.Mul(&sb[a*d+q], &sb[b*d+q]))
						}
					}
				}
			}
			// Column j: v = Ŝ_j e_0, propagated by Â_i.
			for a := range d {
				v[a].SetPrec(prec).Set(&sm[a*d])
			}
			for i := j; i < n; i++ {
				if i > j {
					sa := aBig[i]
					for a := range d {
						nv[a].SetPrec(prec).SetInt64(0)
						for q := range d {
							nv[a].Add(&nv[a], p.Mul(&sa[a*d+q], &v[q]))
						}
					}
					v, nv = nv, v
				}
				out[i][j].Add(&out[i][j], p.Mul(h2, &v[0]))
			}
		}
	}
	cov := mat.NewSymDense(n, nil)
	for i := range n {
		for j := 0; j <= i; j++ {
			f, _ := out[i][j].Float64()
			cov.SetSym(j, i, f)
		}
	}
	return cov
}

// symNorm returns the spectral norm and smallest eigenvalue of a.
func symNorm(a *mat.SymDense) (norm, lmin float64) {
	lmin, lmax := symEigRange(a)
	return math.Max(-lmin, lmax), lmin
}

// shiftedModel is a deliberately wrong state-space model: its transitions
// are those of a step longer by a relative 1e-3. Honest, it says how far
// that is from the true transition; dishonest, it claims its own rounding
// bound only.
type shiftedModel struct {
	StateSpace
	honest bool
}

func (m shiftedModel) WhitenedTransition(a []float64, dt, lo float64) (float64, error) {
	d := m.StateDim()
	e, err := m.StateSpace.WhitenedTransition(a, dt*(1+1e-3), lo*(1+1e-3))
	if err != nil || !m.honest {
		return e, err
	}
	truth := make([]float64, d*d)
	e2, err := m.StateSpace.WhitenedTransition(truth, dt, lo)
	frob := 0.0
	for i := range a {
		frob += (a[i] - truth[i]) * (a[i] - truth[i])
	}
	return ballUp(e + e2 + math.Sqrt(frob)), err
}

// Domination (3): the implemented covariance Ĉ, computed exactly at 160
// bits, is within η of C = alpha·Σ Gram(k_c) in spectral norm, so
// Ĉ + ηI ⪰ C (smallest eigenvalue of Ĉ + ηI - C non-negative), for the
// four-component Matérn-7/2 envelope of the bundled prior at 300 GPS-like
// times. C is the float64 Gram matrix, accurate to a few ulps per entry,
// far below η. Negative controls: a model whose transitions are those of
// a step 1e-3 longer makes ||Ĉ - C|| exceed η when it hides the error,
// and is refused (its bound exceeds the budget) when it states it. With
// -short at 150 times (the exact covariance costs n²), controls included.
func TestMarkovCovarianceDominates(t *testing.T) {
	t.Parallel()
	ks := envelopeKernels()
	const alpha = 1e4
	n := 300
	if testing.Short() {
		n = 150
	}
	ts := gapTimes(n, []float64{1, 2, 3, 4, 5, 1.5}, 4)
	c := sumGram(alpha, ts, ks...)
	run := func(comps []StateSpace, times []float64) (*MarkovRelease, float64, float64) {
		_, r := markovRelease(t, comps, alpha, MarkovOptions{N: n, Grid: 0x1p-10, Times: times}, 60, zeros(1, n), ts)
		d := implementedCov(r, n)
		d.AddSym(d, scaledSym(c, -1))
		norm, _ := symNorm(d)
		for i := range n {
			d.SetSym(i, i, d.At(i, i)+r.Eta())
		}
		_, lmin := symNorm(d)
		return r, norm, lmin
	}
	comps := stateComps(t, ks...)
	etas := map[string]float64{}
	for _, times := range [][]float64{nil, ts} {
		name := "N only"
		if times != nil {
			name = "Times known (decay bound)"
		}
		r, norm, lmin := run(comps, times)
		etas[name] = r.Eta()
		t.Logf("%s, n = %d: ||Ĉ - C|| = %.3g, η = %.3g (ratio %.3g), λ_min(Ĉ + ηI - C) = %.3g", name, n, norm, r.Eta(), norm/r.Eta(), lmin)
		if norm > r.Eta() || lmin < 0 {
			t.Errorf("%s: ||Ĉ - C|| = %g exceeds η = %g (λ_min %g)", name, norm, r.Eta(), lmin)
		}
	}
	if !(etas["Times known (decay bound)"] < etas["N only"]) {
		t.Errorf("the decay bound η = %g is not below the N-only η = %g", etas["Times known (decay bound)"], etas["N only"])
	}
	wrong := make([]StateSpace, len(comps))
	for i, m := range comps {
		wrong[i] = shiftedModel{StateSpace: m}
	}
	for _, times := range [][]float64{nil, ts} {
		r, norm, lmin := run(wrong, times)
		t.Logf("transitions of a step 1e-3 longer (times known %v): ||Ĉ - C|| = %.3g, η = %.3g, λ_min(Ĉ + ηI - C) = %.3g", times != nil, norm, r.Eta(), lmin)
		if norm <= r.Eta() {
			t.Errorf("negative control: a wrong transition stays within η (%g <= %g)", norm, r.Eta())
		}
	}
	for i, m := range comps {
		wrong[i] = shiftedModel{StateSpace: m, honest: true}
	}
	rr, err := NewMarkovRelease(wrong, alpha, MarkovOptions{N: n, Grid: 0x1p-10, Source: Seeded(60)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rr.Release(zeros(1, n), zeros(1, n), ts); err == nil {
		t.Error("negative control: a transition error of 1e-3 was accepted")
	} else {
		t.Logf("honest wrong model refused: %v", err)
	}
}

func scaledSym(a *mat.SymDense, f float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(f, a)
	return &s
}

// envelopeKernels is the noise kernel `tracepriv cip envelope --prior
// internal/sample/prior.json` prints (four Matérn-7/2 components, weights
// per unit of noise variance), for tests that must not depend on package
// cip; BenchmarkMarkovRelease builds it with cip.
func envelopeKernels() []gp.Kernel {
	return []gp.Kernel{
		gp.Matern72{Variance: 0.807628, Lengthscale: 8.635},
		gp.Matern72{Variance: 0.283571, Lengthscale: 10.27},
		gp.Matern72{Variance: 0.598632, Lengthscale: 41.07},
		gp.Matern72{Variance: 0.0630506, Lengthscale: 48.85},
	}
}

// Dense and linear-time samplers agree for the same kernel at 300 points:
// their exact covariances (Ĉ + ηI from the recursion, L Lᵀ from the
// certified Cholesky factor) both dominate C and differ by at most
// η + 2·jitter in spectral norm; and 3,000 releases of each pass
// two-sample Kolmogorov–Smirnov tests (p < 2.5e-4 fails each) on four
// statistics: the first point, a first difference in the middle, the
// mean, and a fixed random projection. A dense sampler with lengthscales
// 40% shorter must be rejected on the first difference.
func TestMarkovMatchesDense(t *testing.T) {
	t.Parallel()
	ks := []gp.Kernel{gp.Matern32{Variance: 0.4, Lengthscale: 3}, gp.Matern72{Variance: 1, Lengthscale: 12}}
	const n, alpha, m = 300, 25.0, 3000
	ts := gapTimes(n, []float64{1, 2, 3, 4, 5}, 5)
	c := sumGram(alpha, ts, ks...)
	dense, err := NewMultiNormalCholesky(c)
	if err != nil {
		t.Fatal(err)
	}
	comps := stateComps(t, ks...)
	r, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: n * m, Grid: 0x1p-10, Source: Seeded(70)})
	if err != nil {
		t.Fatal(err)
	}
	// Exact covariances. The linear release's η is for N = n·m points; a
	// release of n points has the covariance of the first n.
	rn, err := NewMarkovRelease(comps, alpha, MarkovOptions{N: n, Grid: 0x1p-10, Source: Seeded(70)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rn.Release(zeros(1, n), zeros(1, n), ts); err != nil {
		t.Fatal(err)
	}
	lin := implementedCov(rn, n)
	for i := range n {
		lin.SetSym(i, i, lin.At(i, i)+rn.Eta())
	}
	res := exactResidual(dense.f, c) // L Lᵀ - C, exactly
	var diff mat.SymDense
	diff.AddSym(lin, scaledSym(c, -1))
	diff.AddSym(&diff, scaledSym(res, -1))
	norm, _ := symNorm(&diff)
	t.Logf("||(Ĉ + ηI) - L Lᵀ|| = %.3g; η = %.3g, dense jitter %.3g", norm, rn.Eta(), dense.Jitter())
	if norm > 2*rn.Eta()+2*dense.Jitter() {
		t.Errorf("exact covariances differ by %g > 2η + 2j = %g", norm, 2*rn.Eta()+2*dense.Jitter())
	}

	x := make([]float64, n)
	for i := range x {
		x[i] = 50*math.Sin(float64(i)/20) + 0.123456789
	}
	proj := make([]float64, n)
	psrc := Seeded(71)
	for i := range proj {
		proj[i] = Normal(psrc)
	}
	stats := func(y []float64) [4]float64 {
		mean, dot := 0.0, 0.0
		for i, v := range y {
			mean += v / n
			dot += proj[i] * (v - x[i])
		}
		return [4]float64{y[0], y[151] - y[150], mean, dot}
	}
	var sl, sd, sw [4][]float64
	xa, tsa := make([]float64, n*m), make([]float64, n*m)
	for k := range m {
		copy(xa[k*n:], x)
		for i := range n {
			tsa[k*n+i] = float64(k)*1e5 + ts[i]
		}
	}
	out := make([]float64, n*m)
	if err := r.Release([][]float64{out}, [][]float64{xa}, tsa); err != nil {
		t.Fatal(err)
	}
	var wrongKs []gp.Kernel
	for _, k := range ks {
		p := k.Params()
		kk, _ := k.WithParams([]float64{p[0].Value, 0.6 * p[1].Value})
		wrongKs = append(wrongKs, kk)
	}
	wrong, err := NewMultiNormalCholesky(sumGram(alpha, ts, wrongKs...))
	if err != nil {
		t.Fatal(err)
	}
	src := Seeded(72)
	for k := range m {
		yd, err := dense.AddOnGrid(nil, x, 0x1p-10, src)
		if err != nil {
			t.Fatal(err)
		}
		yw, err := wrong.AddOnGrid(nil, x, 0x1p-10, src)
		if err != nil {
			t.Fatal(err)
		}
		a, b, w := stats(out[k*n:(k+1)*n]), stats(yd), stats(yw)
		for s := range 4 {
			sl[s] = append(sl[s], a[s])
			sd[s] = append(sd[s], b[s])
			sw[s] = append(sw[s], w[s])
		}
	}
	names := []string{"first point", "first difference", "mean", "random projection"}
	for s := range 4 {
		d, p := stattest.KS2(sl[s], sd[s])
		t.Logf("%s: D = %.4f, p = %.3g", names[s], d, p)
		if p < 2.5e-4 {
			t.Errorf("%s: linear and dense releases differ (D = %g, p = %g)", names[s], d, p)
		}
	}
	d, p := stattest.KS2(sl[1], sw[1])
	t.Logf("negative control, lengthscales 40%% shorter, first difference: D = %.4f, p = %.3g", d, p)
	if p >= 2.5e-4 {
		t.Errorf("negative control: lengthscales 40%% shorter not rejected (D = %g, p = %g)", d, p)
	}
}

// η is fixed from N alone and grows as N²; the release reports what the
// certificate needs.
func TestMarkovEta(t *testing.T) {
	comps := stateComps(t, envelopeKernels()...)
	prev := 0.0
	for _, n := range []int{1, 2, 1000, 1000000} {
		r, err := NewMarkovRelease(comps, 1, MarkovOptions{N: n, Grid: 0x1p-10, Source: Seeded(1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("N = %d: η = %.3g of the noise variance", n, r.Eta()/1.7529)
		if n == 1 && r.Eta() != 0 {
			t.Errorf("N = 1: η = %g, want 0 (a single point is sampled exactly)", r.Eta())
		}
		if n > 1 && !(r.Eta() > prev) {
			t.Errorf("N = %d: η = %g not above %g", n, r.Eta(), prev)
		}
		prev = r.Eta()
	}
}

// The transition cache is bounded: with room for 3 steps out of 40
// distinct ones, transitions are evicted and computed again (in the float
// path when a step recurs, in the exact path when a recomputation needs
// one), and the release is unchanged bit for bit.
func TestMarkovCacheEviction(t *testing.T) {
	comps := stateComps(t, gp.Matern52{Variance: 1, Lengthscale: 2}, gp.Matern32{Variance: 0.5, Lengthscale: 6})
	gaps := make([]float64, 40)
	for i := range gaps {
		gaps[i] = 0.5 + 0.125*float64(i)
	}
	const n = 3000
	ts := gapTimes(n, gaps, 6)
	x := zeros(1, n)
	for i := range x[0] {
		x[0][i] = float64(i) / 7
	}
	opt := MarkovOptions{N: n, Grid: 0x1p-10}
	want, r := markovRelease(t, comps, 4, opt, 80, x, ts)
	if r.DistinctSteps() != 40 {
		t.Fatalf("%d distinct steps, want 40", r.DistinctSteps())
	}
	old := markovCacheSteps
	markovCacheSteps = 3
	defer func() { markovCacheSteps = old }()
	got, _ := markovRelease(t, comps, 4, opt, 80, x, ts)
	for i := range n {
		if got[0][i] != want[0][i] {
			t.Fatalf("point %d: %v with a 3-step cache, %v with a full one", i, got[0][i], want[0][i])
		}
	}
	// The exact path with evicted steps, from checkpoints every 16 points.
	short := MarkovOptions{N: 200, Grid: 0x1p-10}
	var fast, exact [][]float64
	withMarkovHooks(1, 64, 16, func() { fast, _ = markovRelease(t, comps, 4, short, 81, [][]float64{x[0][:200]}, ts[:200]) })
	withMarkovHooks(math.Inf(1), 64, 16, func() { exact, _ = markovRelease(t, comps, 4, short, 81, [][]float64{x[0][:200]}, ts[:200]) })
	for i := range 200 {
		if fast[0][i] != exact[0][i] {
			t.Fatalf("point %d: float path %v, exact path %v", i, fast[0][i], exact[0][i])
		}
	}
}
