package cip_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// TestEdgeLossFactorDense checks the edge bound against an independent
// dense recomputation: the (E1) loss of every point of a small irregular
// trace, under the envelope noise of the bundled-like family, for
// standard kernels just outside the family, is never above
// cip.EdgeLossFactor; and the bound is not vacuous (within a factor 2
// of the worst point somewhere). Negative control: the ratio of the
// densities at w = 0 alone, a plausible but wrong bound, is exceeded.
func TestEdgeLossFactorDense(t *testing.T) {
	fam := prior.FamilySet{Kernels: []prior.Family{
		{Kernel: gp.KernelMatern12, LengthscaleMin: 180, LengthscaleMax: 717800, Variance: 650},
		{Kernel: gp.KernelMatern32, LengthscaleMin: 97.6, LengthscaleMax: 7200, Variance: 560},
		{Kernel: gp.KernelMatern52, LengthscaleMin: 92.6, LengthscaleMax: 7200, Variance: 420},
	}}
	env, err := cip.NewEnvelope(fam, &cip.EnvelopeOptions{StateSpace: true, PlaceScaled: true})
	if err != nil {
		t.Fatal(err)
	}
	const alpha = 1e4 // loss factor 1/alpha for every member's point
	var noise []gp.Kernel
	for _, c := range env.Components {
		k, err := gp.NewKernel(gp.KernelName(c), alpha*c.Params()[0].Value, c.Params()[1].Value, 0)
		if err != nil {
			t.Fatal(err)
		}
		noise = append(noise, k)
	}
	sum := noise[0]
	for _, k := range noise[1:] {
		sum = gp.Sum{K1: sum, K2: k}
	}
	// 70 fixes 2-40 s apart (a deterministic irregular pattern).
	ts := []float64{0}
	for i := 1; i < 70; i++ {
		ts = append(ts, ts[i-1]+2+float64((i*37)%39))
	}
	g := gp.Gram(sum, ts)
	tightest := 0.0
	naiveBroken := false
	for _, e := range []cip.EdgeKernel{
		{Kernel: gp.KernelRBF, LengthscaleS: 4}, {Kernel: gp.KernelRBF, LengthscaleS: 16}, {Kernel: gp.KernelRBF, LengthscaleS: 23},
		{Kernel: gp.KernelRBF, LengthscaleS: 300},
		{Kernel: gp.KernelMatern12, LengthscaleS: 5}, {Kernel: gp.KernelMatern12, LengthscaleS: 60}, {Kernel: gp.KernelMatern12, LengthscaleS: 144},
		{Kernel: gp.KernelMatern32, LengthscaleS: 10}, {Kernel: gp.KernelMatern32, LengthscaleS: 56}, {Kernel: gp.KernelMatern32, LengthscaleS: 14400},
		{Kernel: gp.KernelMatern52, LengthscaleS: 30}, {Kernel: gp.KernelMatern52, LengthscaleS: 75}, {Kernel: gp.KernelMatern52, LengthscaleS: 72000},
	} {
		bound, err := cip.EdgeLossFactor(noise, e.Kernel, e.LengthscaleS)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := gp.NewKernel(e.Kernel, 1, e.LengthscaleS, 0)
		sigma := gp.Gram(k, ts)
		worst := 0.0
		for i := range ts {
			lf, err := cip.LossFactorDirect(sigma, g, cip.Secret{Indices: []int{i}})
			if err != nil {
				t.Fatalf("%s %g s point %d: %v", e.Kernel, e.LengthscaleS, i, err)
			}
			worst = math.Max(worst, lf)
		}
		t.Logf("%s at %g s: dense worst point %.4g, bound %.4g (ratio %.3f; every member: at most 1)", e.Kernel, e.LengthscaleS, worst*alpha, bound*alpha, worst/bound)
		if worst > bound*(1+1e-9) {
			t.Errorf("%s at %g s: dense loss factor %.6g above the edge bound %.6g", e.Kernel, e.LengthscaleS, worst, bound)
		}
		tightest = math.Max(tightest, worst/bound)
		sp := k.(gp.Spectral)
		var d0 float64
		for _, c := range noise {
			d0 += c.(gp.Spectral).SpectralDensity(0)
		}
		if worst > sp.SpectralDensity(0)/d0 {
			naiveBroken = true
		}
	}
	if tightest < 0.5 {
		t.Errorf("the edge bound is loose everywhere (best dense/bound %.3f): a test that cannot catch an overstated epsilon", tightest)
	}
	if !naiveBroken {
		t.Error("negative control: the density ratio at w = 0 alone, which is not a bound, was never exceeded by a dense loss")
	}
}

// TestEdgeLossFactorTail: an adversary whose spectral tail is heavier
// than every noise component's gets no bound (+Inf); one with a lighter
// tail a finite one.
func TestEdgeLossFactorTail(t *testing.T) {
	noise := []gp.Kernel{gp.Matern32{Variance: 1e4, Lengthscale: 100}}
	if b, err := cip.EdgeLossFactor(noise, gp.KernelMatern12, 50); err != nil || !math.IsInf(b, 1) {
		t.Errorf("Matérn 1/2 against Matérn 3/2 noise: bound %v, err %v; want +Inf", b, err)
	}
	for _, k := range []string{gp.KernelMatern32, gp.KernelMatern52, gp.KernelRBF} {
		if b, err := cip.EdgeLossFactor(noise, k, 50); err != nil || math.IsInf(b, 0) || !(b > 0) {
			t.Errorf("%s against Matérn 3/2 noise: bound %v, err %v; want finite", k, b, err)
		}
	}
	// Same kernel, same lengthscale: the ratio is 1/variance exactly.
	if b, _ := cip.EdgeLossFactor(noise, gp.KernelMatern32, 100); math.Abs(b*1e4-1) > 0.01 {
		t.Errorf("Matérn 3/2 noise against itself: bound %v, want 1e-4 within 1 %%", b)
	}
}

// BenchmarkEdgeLossFactors: a certificate's edge (the ladder of
// cip.EdgeKernels down to 5 s) against the bundled family's envelope.
func BenchmarkEdgeLossFactors(b *testing.B) {
	fam := prior.FamilySet{Kernels: []prior.Family{
		{Kernel: gp.KernelMatern12, LengthscaleMin: 20, LengthscaleMax: 720000},
		{Kernel: gp.KernelMatern32, LengthscaleMin: 20, LengthscaleMax: 7200},
		{Kernel: gp.KernelMatern52, LengthscaleMin: 20, LengthscaleMax: 7200},
	}}
	env, err := cip.NewEnvelope(fam, &cip.EnvelopeOptions{StateSpace: true, PlaceScaled: true})
	if err != nil {
		b.Fatal(err)
	}
	noise := append(slices.Clone(env.Components), gp.Matern12{Variance: 1, Lengthscale: cip.RouteLengthscale})
	edges := cip.EdgeKernels(fam, 5)
	b.ReportMetric(float64(len(edges)), "edges")
	for b.Loop() {
		if _, err := cip.EdgeLossFactors(noise, edges); err != nil {
			b.Fatal(err)
		}
	}
}
