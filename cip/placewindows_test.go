package cip

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
)

// windowTrial returns n timestamps with gaps of 3 to hi seconds and a
// dense trial noise on them: Matérn 1/2 at l12 plus half a Matérn 3/2 at
// l32 plus 0.05 on the diagonal.
func windowTrial(n int, hi float64, seed uint64, l12, l32 float64) ([]float64, *mat.SymDense) {
	ts := lowerTimes(n, 3, hi, seed)
	k := gp.Sum{K1: gp.Matern12{Variance: 1, Lengthscale: l12}, K2: gp.Matern32{Variance: 0.5, Lengthscale: l32}}
	g := gp.Gram(k, ts)
	for i := range ts {
		g.SetSym(i, i, g.At(i, i)+0.05)
	}
	return ts, g
}

// windowScanCheck returns the largest relative difference between the
// every-window scan (with the planted error plant) and v_S' G^-1 v_S
// recomputed per window: v_S by the Kalman conditionalMean, then a dense
// Cholesky solve with G. It also counts the windows visited.
func windowScanCheck(t *testing.T, ts []float64, g *mat.SymDense, mem PlaceLowerMember, plant float64) (float64, int) {
	t.Helper()
	n := len(ts)
	lm, err := newLowerModel(mem, ts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gp.Factorize(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	var chol mat.Cholesky
	if !chol.Factorize(g) {
		t.Fatal("trial not positive definite")
	}
	s := newWindowScan(f)
	s.plant = plant
	worst, visited := 0.0, 0
	seen := make([]bool, n*n)
	v := make([]float64, n)
	s.run(lm, func(a, b int, q float64) {
		visited++
		seen[a*n+b] = true
		lm.conditionalMean(PlaceWindow{First: a, Last: b}, v)
		vv := mat.NewVecDense(n, v)
		var x mat.VecDense
		if err := chol.SolveVecTo(&x, vv); err != nil {
			t.Fatal(err)
		}
		want := mat.Dot(vv, &x)
		worst = math.Max(worst, math.Abs(q-want)/want)
	})
	for a := range n {
		for b := a; b < n; b++ {
			if !seen[a*n+b] {
				t.Fatalf("%s at %g s: window [%d, %d] not visited", mem.Kernel, mem.Lengthscale, a, b)
			}
		}
	}
	return worst, visited
}

// TestEveryWindowQuad checks the every-window scan (EveryWindowQuad's
// recursions over the windows' ends) against v_S' G^-1 v_S recomputed per
// window (Kalman conditional mean, dense Cholesky solve) for every window
// of a 40-point trace, Matérn 1/2, 3/2 and 5/2 at 20 s and 300 s: within
// 1e-9 relative. Negative control: the first derivative response past the
// window's end off by 1e-4 (Matérn 3/2 and 5/2) is caught.
func TestEveryWindowQuad(t *testing.T) {
	ts, g := windowTrial(40, 12, 5, 200, 15)
	n := len(ts)
	for _, kern := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		for _, l := range []float64{20, 300} {
			mem := PlaceLowerMember{Kernel: kern, Lengthscale: l, Variance: 400}
			rel, visited := windowScanCheck(t, ts, g, mem, 0)
			if visited != n*(n+1)/2 {
				t.Errorf("%s at %g s: %d windows visited, want %d", kern, l, visited, n*(n+1)/2)
			}
			if rel > 1e-9 {
				t.Errorf("%s at %g s: scan off the per-window solve by %.3g relative", kern, l, rel)
			}
			t.Logf("%s at %g s: relative %.2g", kern, l, rel)
			if kern == gp.KernelMatern12 {
				continue
			}
			if bad, _ := windowScanCheck(t, ts, g, mem, 1e-4); bad <= 1e-9 {
				t.Errorf("%s at %g s: a derivative response off by 1e-4 passes the check (%.3g)", kern, l, bad)
			} else {
				t.Logf("%s at %g s: planted error caught at %.2g relative", kern, l, bad)
			}
		}
	}
}

// TestPlacesLowerEveryWindow is the cutting-plane bound's falsifier on a
// 30-point trace (465 windows) against Matérn 1/2, 3/2 and 5/2 at 20 s,
// starting from the 1- and 2-minute stays from every fourth point: the
// bound never exceeds the RMS of a noise certified for every window by
// dense (E1) recomputation (RigidLossFactor): each round's trial scaled
// to its every-window upper end, which that recomputation must find
// within epsilon 1 for every window (and without -short, the best trial
// scaled until it is). Negative control: the same trial
// scaled only for the constraints it was built from (DesignRMSM, which
// does not scan every window) leaves windows above 1.
func TestPlacesLowerEveryWindow(t *testing.T) {
	t.Parallel()
	const eps, lambda, r = 1, 2, 100
	ts, g0 := windowTrial(30, 12, 7, 300, 10)
	var members []PlaceLowerMember
	for _, kern := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		members = append(members, PlaceLowerMember{Kernel: kern, Lengthscale: 20, Variance: 400})
	}
	var every []PlaceWindow
	for a := range ts {
		for b := a; b < len(ts); b++ {
			every = append(every, PlaceWindow{First: a, Last: b})
		}
	}
	req := PlaceLowerRequest{Times: ts, Members: members, Windows: StayWindows(ts, []float64{60, 120}, 4), Epsilon: eps, Lambda: lambda, Radius: r,
		Trial: g0, Steps: 3, Rounds: 2, EveryWindow: true, CutWindows: 100}
	type trialEnd struct {
		g   *mat.SymDense
		rms float64
	}
	var ends []trialEnd
	var bestG *mat.SymDense
	hooks := lowerHooks{
		everyTrial: func(g mat.Symmetric, rms float64) {
			ends = append(ends, trialEnd{mat.NewSymDense(g.SymmetricDim(), nil), rms})
			ends[len(ends)-1].g.CopySym(g)
		},
		bestTrial: func(g mat.Symmetric) { bestG = mat.NewSymDense(g.SymmetricDim(), nil); bestG.CopySym(g) },
	}
	b, err := placesLowerBound(req, hooks)
	if err != nil {
		t.Fatal(err)
	}
	plain := req
	plain.EveryWindow = false
	pb, err := PlacesNoiseLowerBound(plain)
	if err != nil {
		t.Fatal(err)
	}
	if b.Cuts == 0 || len(b.History) != req.Rounds+1 {
		t.Fatalf("%d cutting planes over %d rounds: the scan added nothing", b.Cuts, len(b.History))
	}
	t.Logf("bound %.2f m with %d cutting planes (share %.3f; without them %.2f m), every-window upper end %.2f m, constraint-set upper end %.2f m",
		b.RMSNoiseM, b.Cuts, b.CutShare, pb.RMSNoiseM, b.EveryWindowDesignRMSM, b.DesignRMSM)
	if !testing.Short() {
		// A noise certified for every window: the best trial scaled by
		// dense recomputation (with -short, the upper ends below, each
		// checked densely, are the certified noises).
		s, worst := certifiedScale(t, lowerSetup{ts: ts, windows: every, trial: bestG}, members, eps, lambda, r)
		design := rmsOf(bestG, s)
		if b.RMSNoiseM > design {
			t.Errorf("cutting-plane bound %.2f m above the RMS %.2f m of a noise certified for every window (worst exact epsilon %.4f)", b.RMSNoiseM, design, worst)
		}
		if !(b.RMSNoiseM > 0.3*design) {
			t.Errorf("cutting-plane bound %.2f m under 0.3 of the certified %.2f m: broken directions or weights", b.RMSNoiseM, design)
		}
		t.Logf("every window certified densely at %.2f m (best trial)", design)
	}
	caught := false
	for i, e := range ends {
		worstAt := denseWorstEpsilon(t, lowerSetup{ts: ts, windows: every, trial: e.g}, members, lambda, r)
		scale := func(rms float64) float64 { return rms * rms * float64(len(ts)) / (2 * mat.Trace(e.g)) }
		if w := worstAt(scale(e.rms)); w > eps*(1+1e-9) {
			t.Errorf("round %d: the trial scaled to its every-window upper end %.2f m has a window at exact epsilon %.6f", i, e.rms, w)
		}
		// A certified noise for every window: the bound is below it.
		if b.RMSNoiseM > e.rms {
			t.Errorf("round %d: cutting-plane bound %.2f m above the every-window certified noise %.2f m", i, b.RMSNoiseM, e.rms)
		}
		if set := b.History[i].DesignRMSM; !caught && set < e.rms*(1-1e-6) {
			w := worstAt(scale(set))
			caught = w > eps
			t.Logf("round %d: constraint-set upper end %.2f m leaves a window at %.4f (every-window %.2f m)", i, set, w, e.rms)
		}
	}
	if !(b.RMSNoiseM > 0.3*b.EveryWindowDesignRMSM) {
		t.Errorf("cutting-plane bound %.2f m under 0.3 of the every-window upper end %.2f m: broken directions or weights", b.RMSNoiseM, b.EveryWindowDesignRMSM)
	}
	if !caught {
		t.Error("negative control: no round's trial scaled for its constraints alone left a window above epsilon; the every-window check is untested")
	}
}

// BenchmarkEveryWindowQuad scans every window (1,091,503 of them) of a
// 1,477-point trace (gaps of 3-18 s, the held-out trace's size) against
// Matérn 1/2, 3/2 and 5/2 at 20 s under a dense trial: the cost of one
// member's cutting-plane scan (inverting the trial is shared by the
// members and reported apart).
func BenchmarkEveryWindowQuad(b *testing.B) {
	ts, g := windowTrial(1477, 18, 11, 300, 10)
	f, err := gp.Factorize(g, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("inverse", func(b *testing.B) {
		for b.Loop() {
			newWindowScan(f)
		}
	})
	s := newWindowScan(f)
	for _, kern := range []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52} {
		lm, err := newLowerModel(PlaceLowerMember{Kernel: kern, Lengthscale: 20}, ts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(kern, func(b *testing.B) {
			windows := 0
			for b.Loop() {
				windows = 0
				s.run(lm, func(int, int, float64) { windows++ })
			}
			b.ReportMetric(float64(windows), "windows")
		})
	}
}

// worstWindows keeps the k largest of the windows it is shown, skipping
// the constrained ones, and counts every window above its threshold.
func TestWorstWindows(t *testing.T) {
	skip := map[PlaceWindow]bool{{First: 0, Last: 7}: true}
	h := &worstWindows{k: 3, skip: skip, thr: 0.5}
	qs := []float64{0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.6, 0.99, 0.4}
	for i, q := range qs {
		h.visit(PlaceWindow{First: 0, Last: i}, q)
	}
	var got []float64
	for _, it := range h.items {
		got = append(got, it.q)
	}
	slices.Sort(got)
	if want := []float64{0.7, 0.8, 0.9}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v (0.99 is skipped)", got, want)
	}
	if h.above != 5 || h.max != 0.99 {
		t.Errorf("above %d, max %v; want 5 and 0.99", h.above, h.max)
	}
}
