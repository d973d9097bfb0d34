package prior

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/trace"
)

// kernelTraces simulates m traces at the given times, each coordinate a GP
// with kernel k plus white noise of the given variance (m^2, a GPS error).
func kernelTraces(t *testing.T, m int, ts []float64, k gp.Kernel, noise float64, seed uint64, uid string) []*trace.Trace {
	t.Helper()
	rng := newRand(seed)
	out := make([]*trace.Trace, m)
	for i := range out {
		e := sampleGP(t, k, ts, noise, rng)
		n := sampleGP(t, k, ts, noise, rng)
		out[i] = enuTrace(uid, ts, e, n)
	}
	return out
}

// compareOpt compares the four single kernels on 45-minute synthetic
// traces at 15 s (one window each, every fix kept); sumOpt compares every
// default candidate, the sums too.
var (
	compareOpt = config{MinDuration: 30 * time.Minute, Workers: 2, Kernels: singleKernels}
	sumOpt     = config{MinDuration: 30 * time.Minute, Workers: 2, Kernels: append(slices.Clone(CompareKernels), SumKernels...)}
)

var singleKernels = []string{gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}

const sum3232 = gp.KernelMatern32 + SumSep + gp.KernelMatern32

// gainOver returns, for each window, kernel a's held-out log-likelihood
// minus kernel b's.
func gainOver(t *testing.T, rep *Report, a, b string) []float64 {
	t.Helper()
	ia, ib := -1, -1
	for i, k := range rep.Comparison.Kernels {
		switch k.Kernel {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	if ia < 0 || ib < 0 {
		t.Fatalf("%s or %s not compared", a, b)
	}
	var g []float64
	for _, f := range rep.Fits {
		g = append(g, f.Kernels[ia].HeldOut-f.Kernels[ib].HeldOut)
	}
	return g
}

func logComparison(t *testing.T, what string, rep *Report) {
	t.Helper()
	for _, k := range rep.Comparison.Kernels {
		gain := "none (rbf not compared)"
		if k.MedianGainOverRBF != nil {
			gain = fmt.Sprintf("%.2f", *k.MedianGainOverRBF)
		}
		t.Logf("%s: %s won %d, median gain over rbf %s, lengthscale percentiles %.0f, censored %d", what, k.Kernel, k.Won, gain, k.LengthscalePercentilesS, k.Censored)
		for _, p := range k.Parts {
			t.Logf("%s:    %s part %s: lengthscale percentiles %.0f, variance percentiles %.0f, censored %d, family %v", what, p.Role, p.Kernel, p.LengthscalePercentilesS, p.VariancePercentilesM2, p.Censored, p.Family)
		}
	}
}

// sumTraces draws m traces whose coordinates are a short (30 s, 100 m^2)
// plus a long (1,000 s, 2,500 m^2) Matern-3/2, with 1 m GPS noise, 45
// minutes at 15 s. (With 3 m noise the fits on the even fixes, 30 s apart,
// often trade the nugget for the short part, and the sums win only about
// half of the windows: see docs/fit.md, "Limits".)
func sumTraces(t *testing.T, m int, seed uint64) []*trace.Trace {
	k := gp.Sum{K1: gp.Matern32{Variance: 100, Lengthscale: 30}, K2: gp.Matern32{Variance: 2500, Lengthscale: 1000}}
	return kernelTraces(t, m, regular(0, 15, 181), k, 1, seed, "sum")
}

// TestCompareSumWins: on traces drawn from a sum of a 30 s and a 1,000 s
// Matern-3/2, the sum candidate "matern32+matern32" predicts the held-out
// fixes better than every single kernel: it wins at least 4 of the 6
// windows, its median gain over the best single kernel is at least 5
// nats, and its parts' median lengthscales are within a factor 2 of 30 s
// and 1,000 s. The family rule then puts both parts' ranges into the one
// matern32 entry (the union), and the nominal member is matern32.
func TestCompareSumWins(t *testing.T) {
	if testing.Short() {
		t.Skip("a statistical sweep of 6 windows x 6 kernels; TestCompareSumParts checks the sums' wiring with -short")
	}
	t.Parallel()
	traces := sumTraces(t, 6, 21)
	p, rep, err := fit(traces, sumOpt)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, rep)
	logComparison(t, "sum data", rep)
	if rep.Windows != 6 {
		t.Fatalf("%d windows, skipped %v", rep.Windows, rep.Skipped)
	}
	ks := summaryOf(t, rep, sum3232)
	if ks.Won < 4 {
		t.Errorf("%s won %d of 6 windows, want at least 4", sum3232, ks.Won)
	}
	for _, single := range singleKernels {
		g := gainOver(t, rep, sum3232, single)
		if m := quantile(g, 0.5); m < 5 {
			t.Errorf("median held-out gain of %s over %s is %.2f nats (%.1f), want at least 5", sum3232, single, m, g)
		}
	}
	if len(ks.Parts) != 2 {
		t.Fatalf("parts %+v", ks.Parts)
	}
	for i, want := range []float64{30, 1000} {
		if med := ks.Parts[i].LengthscalePercentilesS[2]; med < want/2 || med > 2*want {
			t.Errorf("%s part: median lengthscale %.0f s, want %v s within a factor 2", ks.Parts[i].Role, med, want)
		}
	}
	// l1 < l2 in every fit.
	ki := slices.Index(sumOpt.Kernels, sum3232)
	for _, f := range rep.Fits {
		kf := f.Kernels[ki]
		for d := range 2 {
			if !(kf.Parts[0].LengthscaleS[d] < kf.Parts[1].LengthscaleS[d]) || kf.LengthscaleS[d] != kf.Parts[1].LengthscaleS[d] {
				t.Errorf("parts %+v not short then long", kf.Parts)
			}
		}
	}
	// The family: one matern32 entry holding both parts' ranges.
	var m32 *Family
	for i, f := range p.FamilySet.Kernels {
		if f.Kernel == gp.KernelMatern32 {
			if m32 != nil {
				t.Fatalf("matern32 listed twice: %v", p.FamilySet)
			}
			m32 = &p.FamilySet.Kernels[i]
		}
	}
	if m32 == nil || ks.Parts[0].Family == nil || ks.Parts[1].Family == nil {
		t.Fatalf("family %v, parts %+v", p.FamilySet, ks.Parts)
	}
	if err := p.FamilySet.Validate(); err != nil {
		t.Error(err)
	}
	sh, lg := ks.Parts[0].Family, ks.Parts[1].Family
	if m32.LengthscaleMin > sh.LengthscaleMin || m32.LengthscaleMax < lg.LengthscaleMax || lg.LengthscaleMax < 2700 ||
		sh.LengthscaleMin > 60 || m32.Variance > sh.Variance {
		t.Errorf("matern32 family %v does not hold the parts' %v and %v", m32, sh, lg)
	}
	if p.Kernel != gp.KernelMatern32 || p.Lengthscale < m32.LengthscaleMin || p.Lengthscale > m32.LengthscaleMax {
		t.Errorf("nominal %s at %v s, family %v", p.Kernel, p.Lengthscale, m32)
	}
}

// TestCompareSumOnSingle: on traces from one Matern-3/2 (300 s), a sum
// nests the single kernel (its short part can vanish), so it may win a
// window by chance, but not by much. The rule checked: the sums together
// win at most half of the windows, and each sum's median held-out gain
// over matern32 is below 1 nat. Four windows (six before session 43: the
// first four are the same draws, and the sums' gains there are -48.8,
// -33.8, -0.25, 0 and -11.4, -3.7, 0, 0 nats); scoring each window on its
// training fixes instead of the held-out ones (planted, run, reverted)
// makes the sums win 4 of 4 with median gains of about 140 nats. Only matern32
// and the sums are compared:
// each kernel's fit and held-out score are its own, so the gains are those
// of the whole comparison, and without the other single kernels a sum
// wins every window it would have won among them, and more (a stricter
// check, at half the fits of the six kernels).
func TestCompareSumOnSingle(t *testing.T) {
	if testing.Short() {
		t.Skip("a statistical sweep of 4 windows x 3 kernels; TestCompareSumParts checks the sums' wiring with -short")
	}
	t.Parallel()
	const windows = 4
	traces := kernelTraces(t, windows, regular(0, 15, 181), gp.Matern32{Variance: 100 * 100, Lengthscale: 300}, 9, 7, "sim")
	opt := sumOpt
	opt.Kernels = append([]string{gp.KernelMatern32}, SumKernels...)
	_, rep, err := fit(traces, opt)
	if err != nil {
		t.Fatal(err)
	}
	logComparison(t, "matern32 data", rep)
	won := 0
	for _, k := range rep.Comparison.Kernels {
		if len(k.Parts) == 0 {
			continue
		}
		won += k.Won
		g := gainOver(t, rep, k.Kernel, gp.KernelMatern32)
		t.Logf("%s minus matern32 per window: %.2f", k.Kernel, g)
		if m := quantile(g, 0.5); m >= 1 {
			t.Errorf("%s: median held-out gain over matern32 %.2f nats on matern32 data, want < 1", k.Kernel, m)
		}
	}
	if won > windows/2 {
		t.Errorf("sums won %d of %d windows of matern32 data, want at most %d", won, windows, windows/2)
	}
}

// TestCompareSumParts checks the sum candidates' wiring on one window of
// sum data, cheap enough for -short (TestCompareSumWins checks what they
// recover): the sum's fit has a short then a long part in each coordinate,
// its lengthscale is the long part's and its variance the parts' total,
// its summary lists both parts, and the prior's family, where a sum's parts
// fold into their kernel's entry, names no kernel twice and validates.
func TestCompareSumParts(t *testing.T) {
	t.Parallel()
	opt := sumOpt
	opt.Kernels = []string{gp.KernelMatern32, sum3232}
	p, rep, err := fit(sumTraces(t, 1, 21), opt)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, rep)
	if rep.Windows != 1 || len(rep.Fits[0].Kernels) != 2 {
		t.Fatalf("%d windows, skipped %v", rep.Windows, rep.Skipped)
	}
	kf := rep.Fits[0].Kernels[1]
	if kf.Kernel != sum3232 || len(kf.Parts) != 2 || kf.Parts[0].Role != "short" || kf.Parts[1].Role != "long" {
		t.Fatalf("sum fit %+v", kf)
	}
	for d := range 2 {
		sh, lg := kf.Parts[0], kf.Parts[1]
		if !(sh.LengthscaleS[d] < lg.LengthscaleS[d]) || kf.LengthscaleS[d] != lg.LengthscaleS[d] ||
			kf.VarianceM2[d] != sh.VarianceM2[d]+lg.VarianceM2[d] {
			t.Errorf("coordinate %d: sum %v s, %v m^2 from parts %+v", d, kf.LengthscaleS[d], kf.VarianceM2[d], kf.Parts)
		}
	}
	if ks := summaryOf(t, rep, sum3232); len(ks.Parts) != 2 {
		t.Errorf("summary parts %+v", ks.Parts)
	}
	seen := map[string]bool{}
	for _, f := range p.FamilySet.Kernels {
		if seen[f.Kernel] {
			t.Errorf("%s listed twice: %v", f.Kernel, p.FamilySet)
		}
		seen[f.Kernel] = true
	}
	if err := p.FamilySet.Validate(); err != nil {
		t.Error(err)
	}
}

func summaryOf(t *testing.T, rep *Report, kernel string) KernelSummary {
	t.Helper()
	for _, k := range rep.Comparison.Kernels {
		if k.Kernel == kernel {
			return k
		}
	}
	t.Fatalf("kernel %s not compared", kernel)
	return KernelSummary{}
}

// TestCompareRecoversKernel draws traces from a Matern-3/2 GP with a long
// lengthscale (300 s) and from an RBF GP (120 s), 45 minutes at 15 s with
// 3 m GPS noise, and checks that the held-out comparison picks the kernel
// they were drawn from (it wins most windows and is the nominal kernel),
// and that its median fitted lengthscale is within 25 % of the truth.
// Each coordinate is fitted on 90 points, so one fit is uncertain by
// roughly 20-30 %; the median of 12 fits much less.
func TestCompareRecoversKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("a statistical sweep of 12 windows; TestCompareFamily checks the comparison's rules with -short")
	}
	t.Parallel()
	ts := regular(0, 15, 181) // 0..2700 s
	for _, c := range []struct {
		k    gp.Kernel
		name string
		ls   float64
	}{
		{gp.Matern32{Variance: 100 * 100, Lengthscale: 300}, gp.KernelMatern32, 300},
		{gp.RBF{Variance: 100 * 100, Lengthscale: 120}, gp.KernelRBF, 120},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			traces := kernelTraces(t, 6, ts, c.k, 9, 7, "sim")
			p, rep, err := fit(traces, compareOpt)
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, rep)
			if rep.Windows != 6 {
				t.Fatalf("%s: %d windows, skipped %v", c.name, rep.Windows, rep.Skipped)
			}
			ks := summaryOf(t, rep, c.name)
			for _, k := range rep.Comparison.Kernels {
				t.Logf("%s data: %s won %d, median gain over rbf %.2f, lengthscale percentiles %.0f, censored %d", c.name, k.Kernel, k.Won, *k.MedianGainOverRBF, k.LengthscalePercentilesS, k.Censored)
			}
			if rep.Comparison.Nominal != c.name || p.Kernel != c.name || ks.Won < 4 {
				t.Errorf("%s data: nominal %s, %s won %d of 6 windows", c.name, rep.Comparison.Nominal, c.name, ks.Won)
			}
			if med := ks.LengthscalePercentilesS[2]; math.Abs(med/c.ls-1) > 0.25 {
				t.Errorf("%s data: median lengthscale %.1f s, want %v s within 25%%", c.name, med, c.ls)
			}
			if ks.Censored != 0 {
				t.Errorf("%s data: %d censored fits", c.name, ks.Censored)
			}
		})
	}
}

// TestCompareCensored: traces far smoother than any window can show (a
// Matern-3/2 at 10^6 s, 370 times the window) put the lengthscale on the
// search's bound, 100 times the window; the fits are reported censored
// and the family reaches the longest bound a window can have (100 x 2 h).
func TestCompareCensored(t *testing.T) {
	t.Parallel()
	ts := regular(0, 15, 181)
	traces := kernelTraces(t, 3, ts, gp.Matern32{Variance: 1e8, Lengthscale: 1e6}, 1, 9, "smooth")
	opt := compareOpt
	opt.Kernels = []string{gp.KernelMatern32}
	p, rep, err := fit(traces, opt)
	if err != nil {
		t.Fatal(err)
	}
	ks := summaryOf(t, rep, gp.KernelMatern32)
	bound := 100 * 2700.0
	t.Logf("censored %d of %d, percentiles %.0f", ks.Censored, ks.Fits, ks.LengthscalePercentilesS)
	if ks.Censored < 4 || ks.Fits != 6 {
		t.Errorf("%d of %d fits censored, want at least 4", ks.Censored, ks.Fits)
	}
	// Censored fits count at the longest bound any window can have, 100
	// times the longest window (2 h): they are only known to be long.
	if f := p.Family(); math.Abs(f.LengthscaleMax/(100*7200)-1) > 1e-9 {
		t.Errorf("family %v, want its top at the longest bound %v s", f, 100*7200)
	}
	for _, f := range rep.Fits {
		if f.Kernels[0].BoundS != bound {
			t.Errorf("bound %v s, want %v", f.Kernels[0].BoundS, bound)
		}
	}
	// A short lengthscale is not censored (TestCompareRecoversKernel checks
	// the others). No fit may be: -short checks one trace's two, as strict
	// per fit.
	rough := 3
	if testing.Short() {
		rough = 1
	}
	traces = kernelTraces(t, rough, ts, gp.Matern32{Variance: 1e4, Lengthscale: 200}, 9, 10, "rough")
	_, rep, err = fit(traces, opt)
	if err != nil {
		t.Fatal(err)
	}
	if ks := summaryOf(t, rep, gp.KernelMatern32); ks.Censored != 0 {
		t.Errorf("lengthscale 200 s: %d censored", ks.Censored)
	}
}

// TestCompareFamily checks the family rule and the written prior on a
// mixed corpus (Matern-3/2 and RBF traces): every kernel winning at least
// 5 % of the windows is in the family, with lengthscales from the fixes'
// spacing (20 s) to the 95th percentile of its fits (censored ones at the
// longest bound, ones below the spacing at it), extended to the longest
// window; the others are not. The prior is version 3, round-trips through
// Read, and records the corpus's fingerprints. The rule is
// recomputed from the fits, an equality as strict on three windows as on
// more (each kernel in or out of the family by its wins, its range from
// its fits), so the full suite checks it at -short's size too
// (TestCompareRecoversKernel fits 12 windows of such data): one window of
// each kernel's data, two persons (three windows cost half as much again).
func TestCompareFamily(t *testing.T) {
	t.Parallel()
	ts := regular(0, 15, 181)
	na, nb := 1, 1
	traces := append(kernelTraces(t, na, ts, gp.Matern32{Variance: 1e4, Lengthscale: 300}, 9, 11, "a"),
		kernelTraces(t, nb, ts, gp.RBF{Variance: 1e4, Lengthscale: 120}, 9, 12, "b")...)
	p, rep, err := fit(traces, compareOpt)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Comparison
	for _, k := range c.Kernels {
		t.Logf("%s won %d, family %v", k.Kernel, k.Won, k.Family)
	}
	if c.LongestWindowS != 2700 || len(c.Kernels) != 4 {
		t.Fatalf("comparison %+v", c)
	}
	var fams []Family
	for ki, k := range c.Kernels {
		var ls []float64
		won := 0
		for _, f := range rep.Fits {
			kf := f.Kernels[ki]
			for d := range 2 {
				l := math.Max(kf.LengthscaleS[d], 20)
				if kf.Censored[d] {
					l = 100 * 7200
				}
				ls = append(ls, l)
			}
			if f.Best == k.Kernel {
				won++
			}
		}
		if won != k.Won {
			t.Errorf("%s: won %d, counted %d", k.Kernel, k.Won, won)
		}
		slices.Sort(ls)
		lo, hi := 20.0, math.Max(quantile(ls, 0.95), 2700)
		if float64(k.Won) >= 0.05*float64(len(rep.Fits)) {
			if k.Family == nil || k.Family.LengthscaleMin != lo || k.Family.LengthscaleMax != hi {
				t.Errorf("%s (won %d): family %v, want [%v, %v]", k.Kernel, k.Won, k.Family, lo, hi)
			} else {
				fams = append(fams, *k.Family)
			}
		} else if k.Family != nil {
			t.Errorf("%s won %d of %d windows but is in the family", k.Kernel, k.Won, len(rep.Fits))
		}
	}
	if !reflect.DeepEqual(p.FamilySet.Kernels, fams) || p.Version != Version || p.LengthscaleMin != 0 {
		t.Errorf("prior family %v, want %v", p.FamilySet, fams)
	}
	if f := p.Family(); p.Lengthscale < f.LengthscaleMin || p.Lengthscale > f.LengthscaleMax || f.Kernel != c.Nominal {
		t.Errorf("nominal %s at %v s outside its family %v", p.Kernel, p.Lengthscale, f)
	}
	// The prior records its private index's digest and nothing of a
	// trace; the report carries the index.
	d, err := p.Digest()
	if err != nil {
		t.Fatal(err)
	}
	x := trace.CorpusIndexOf(traces...)
	x.Prior = d
	if p.Fit.Fingerprints != nil || !p.Fit.CorpusIndexed || !reflect.DeepEqual(rep.CorpusIndex, x) || len(x.Persons) != 2 {
		t.Errorf("fingerprints %v, corpus indexed %v, report's index %+v", p.Fit.Fingerprints, p.Fit.CorpusIndexed, rep.CorpusIndex)
	}
	var buf, again bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	first := buf.String()
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Write(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != first || !reflect.DeepEqual(back.FamilySet, p.FamilySet) || back.Version != Version || !back.Fit.CorpusIndexed {
		t.Errorf("round trip\n%s\n%s", first, again.String())
	}
}

// TestCompareWindows: the comparison's windows last up to 2 h with fixes
// at least 10 s apart and at most 200 of them, and a corpus with more
// windows than MaxWindows is subsampled evenly, every window accounted for.
func TestCompareWindows(t *testing.T) {
	// 1 s fixes over 5 h: two spans of 2 h thinned to at most 200 points
	// (37 s apart on whole seconds), and the last hour at 19 s.
	ws, rep := windowsOf(t, []*trace.Trace{walkTrace(regular(0, 1, 5*3600))}, config{})
	if len(ws) != 3 || rep.Skipped[SkipTooShort] > 1 {
		t.Fatalf("%d windows, skipped %v", len(ws), rep.Skipped)
	}
	for i, w := range ws {
		d := w.T[len(w.T)-1]
		if len(w.T) > 200 || len(w.T) < 190 || i < 2 && (d > 7200 || d < 7000) || i == 2 && (d < 3400 || d > 3800) {
			t.Errorf("window %d of %d points over %v s", i, len(w.T), d)
		}
		for k := 1; k < len(w.T); k++ {
			if g := w.T[k] - w.T[k-1]; g < 10 {
				t.Fatalf("fixes %v s apart", g)
			}
		}
	}
	// 5 s fixes over 30 min: one window at 10 s; over 40 min, at 15 s
	// (200 points at 10 s would not cover it).
	for _, c := range []struct {
		n, points int
		step      float64
	}{{361, 181, 10}, {481, 161, 15}} {
		t.Run(fmt.Sprintf("%d_fixes", c.n), func(t *testing.T) {
			ws, _ = windowsOf(t, []*trace.Trace{walkTrace(regular(0, 5, c.n))}, config{})
			if len(ws) != 1 || len(ws[0].T) != c.points || ws[0].T[1] != c.step {
				t.Errorf("%d fixes: %d windows, first of %d points", c.n, len(ws), len(ws[0].T))
			}
		})
	}

	var traces []*trace.Trace
	for range 7 {
		traces = append(traces, walkTrace(regular(0, 30, 50)))
	}
	ws, rep = windowsOf(t, traces, config{MinDuration: 20 * time.Minute})
	kept := subsample(ws, 3, rep)
	if len(kept) != 3 || kept[0].Trace != 0 || kept[1].Trace != 2 || kept[2].Trace != 4 || rep.Skipped[SkipSubsampled] != 4 {
		t.Errorf("kept traces %v, skipped %v", []int{kept[0].Trace, kept[1].Trace, kept[2].Trace}, rep.Skipped)
	}
	n := 0
	for _, w := range kept {
		n += len(w.Index)
	}
	if n+rep.PointsThinned+rep.PointsSkipped != rep.Points {
		t.Errorf("points not accounted for after subsampling")
	}
}
