package cip

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
)

// scanMax is the reference: the maximum of f[a..b] by a scan (f[a] and
// f[b] when b < a, as maxTable documents).
func scanMax(f []float64, a, b int) float64 {
	if b < a {
		return math.Max(f[a], f[b])
	}
	v := f[a]
	for i := a + 1; i <= b; i++ {
		v = math.Max(v, f[i])
	}
	return v
}

// maxTable answers every run exactly as a scan does: every run of arrays
// of lengths around the block size (runs inside a block, across one block
// boundary, across several), random runs of a long array, and values with
// ties, signed zeros and NaN. The negative control: a table whose one block
// maximum is off gives a different answer on some run.
func TestMaxTableExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float64 {
		f := make([]float64, n)
		for i := range f {
			switch rng.IntN(20) {
			case 0:
				f[i] = math.Copysign(0, -1)
			case 1:
				f[i] = 0
			case 2:
				f[i] = 1 // ties
			default:
				f[i] = rng.NormFloat64()
			}
		}
		return f
	}
	// mismatch returns a run on which m and a scan of f differ.
	mismatch := func(m *maxTable, f []float64, runs [][2]int) (int, int, bool) {
		for _, r := range runs {
			got, want := m.max(r[0], r[1]), scanMax(f, r[0], r[1])
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				return r[0], r[1], true
			}
		}
		return 0, 0, false
	}
	all := func(n int) [][2]int {
		var runs [][2]int
		for a := range n {
			for b := range n {
				runs = append(runs, [2]int{a, b})
			}
		}
		return runs
	}
	for _, n := range []int{1, 2, 63, 64, 65, 127, 128, 129, 4*maxBlock + 5} {
		f := fill(n)
		if a, b, bad := mismatch(newMaxTable(f), f, all(n)); bad {
			t.Fatalf("n = %d, cells %d..%d: the table and a scan differ", n, a, b)
		}
	}
	// A table's length (the place tables have 73,700 cells): long runs
	// and runs of up to 2,000 cells, as the place bound asks.
	f := fill(73_700)
	f[500] = math.NaN()
	var runs [][2]int
	for k := range 50_000 {
		a, b := rng.IntN(len(f)), rng.IntN(len(f))
		if k >= 500 {
			b = min(a+rng.IntN(2_000), len(f)-1)
		}
		runs = append(runs, [2]int{a, b})
	}
	if a, b, bad := mismatch(newMaxTable(f), f, runs); bad {
		t.Fatalf("cells %d..%d: the table and a scan differ", a, b)
	}
	// Negative control: one block's maximum taken without its last cell.
	g := fill(10 * maxBlock)
	g[4*maxBlock-1] = 1e300
	broken := newMaxTable(g)
	broken.blocks[0][3] = scanMax(g, 3*maxBlock, 4*maxBlock-2)
	for lv := 1; lv < len(broken.blocks); lv++ { // rebuilt above it
		w := 1 << (lv - 1)
		for i := range broken.blocks[lv] {
			broken.blocks[lv][i] = math.Max(broken.blocks[lv-1][i], broken.blocks[lv-1][i+w])
		}
	}
	if _, _, bad := mismatch(broken, g, all(len(g))); !bad {
		t.Error("negative control: a table missing a cell's value agreed with the scan on every run")
	}
}

// BenchmarkPlaceTable builds the three Matérn kernels' tables, which every
// process releasing with the default certificate builds once.
func BenchmarkPlaceTable(b *testing.B) {
	for b.Loop() {
		for _, k := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
			if _, ok := newPlaceTable(k); !ok {
				b.Fatal(k)
			}
		}
	}
}

// BenchmarkPlaceConditionalBound computes, uncached, the bound a release
// pays per kernel and span: the three kernels over [20 s, 7,200 s] and
// windows up to an hour, and at one lengthscale over 10 minutes.
func BenchmarkPlaceConditionalBound(b *testing.B) {
	noise := placeTestNoise()
	kernels := []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}
	for _, k := range kernels {
		placeTableFor(k)
	}
	for b.Loop() {
		for _, k := range kernels {
			if _, err := placeConditionalBound(k, 20, 7200, 3600, noise); err != nil {
				b.Fatal(err)
			}
			if _, err := placeConditionalBound(k, 20, 20, 600, noise); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// PlaceConditionalBound remembers its answers by value: a call with any
// argument changed (one noise component's variance or lengthscale, the
// order of the components, the kernel, a lengthscale, the duration) gives
// the bound computed afresh for those arguments, never a remembered one
// (a key that dropped one of them would certify with another noise's
// bound), and a repeated call gives the same value. The negative control:
// each change does change the bound, so a stale answer would be caught.
// The memo computes a key once however many callers ask at the same time,
// keeps no error, and keeps at most placeBoundsMax answers. Without the
// wait for the first caller (a plain load-or-compute, as before) the eight
// concurrent callers compute the slow key several times.
func TestPlaceBoundMemoOnce(t *testing.T) {
	var m placeBoundMemo
	release := make(chan struct{})
	slow := func() (float64, error) { <-release; return 1.5, nil }
	var wg sync.WaitGroup
	got := make([]float64, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = m.get("k", slow) }()
	}
	for m.computed.Load() == 0 { // the first caller is computing
		runtime.Gosched()
	}
	time.Sleep(20 * time.Millisecond) // the others reach the memo meanwhile
	close(release)
	wg.Wait()
	if n := m.computed.Load(); n != 1 {
		t.Errorf("eight concurrent callers computed the key %d times", n)
	}
	for _, v := range got {
		if v != 1.5 {
			t.Fatalf("a waiting caller got %v", v)
		}
	}
	if _, err := m.get("bad", func() (float64, error) { return 0, errors.New("refused") }); err == nil {
		t.Fatal("the error was lost")
	}
	if v, err := m.get("bad", func() (float64, error) { return 2, nil }); err != nil || v != 2 {
		t.Errorf("an error was remembered: %v, %v", v, err)
	}
	for i := range placeBoundsMax + 10 {
		m.get(strconv.Itoa(i), func() (float64, error) { return 0, nil })
	}
	if n := len(m.m); n > placeBoundsMax {
		t.Errorf("the memo holds %d answers, more than %d", n, placeBoundsMax)
	}
}

func TestPlaceConditionalBoundRemembered(t *testing.T) {
	t.Parallel()
	base := placeTestNoise()
	with := func(i int, variance, lengthscale float64) []gp.Kernel {
		n := append([]gp.Kernel(nil), base...)
		n[i] = gp.Matern12{Variance: variance, Lengthscale: lengthscale}
		return n
	}
	reversed := append([]gp.Kernel(nil), base...)
	slices.Reverse(reversed)
	type call struct {
		name             string
		kernel           string
		lMin, lMax, tMax float64
		noise            []gp.Kernel
	}
	first := call{"base", gp.KernelMatern32, 20, 40, 600, base}
	calls := []call{
		first,
		{"variance of one component", gp.KernelMatern32, 20, 40, 600, with(0, 0.6, 10)},
		{"lengthscale of one component", gp.KernelMatern32, 20, 40, 600, with(0, 0.3, 15)},
		{"components reversed", gp.KernelMatern32, 20, 40, 600, reversed},
		{"kernel", gp.KernelMatern52, 20, 40, 600, base},
		{"lMin", gp.KernelMatern32, 25, 40, 600, base},
		{"lMax", gp.KernelMatern32, 20, 80, 600, base},
		{"duration", gp.KernelMatern32, 20, 40, 1200, base},
		first,
	}
	fresh := map[string]float64{}
	for _, c := range calls {
		got, err := PlaceConditionalBound(c.kernel, c.lMin, c.lMax, c.tMax, c.noise)
		if err != nil {
			t.Fatal(err)
		}
		want, err := placeConditionalBound(c.kernel, c.lMin, c.lMax, c.tMax, c.noise)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s: remembered %v, computed afresh %v", c.name, got, want)
		}
		fresh[c.name] = want
	}
	for _, c := range calls[1 : len(calls)-1] {
		if c.name != "components reversed" && fresh[c.name] == fresh["base"] {
			t.Errorf("negative control: changing the %s leaves the bound at %v, so a stale answer would pass", c.name, fresh["base"])
		}
	}
}
