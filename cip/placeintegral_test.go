package cip

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
)

// placeIntegralRef is placeIntegral as it was before session 42 (the
// plain form, one step at a time, each cell's suprema by the table's
// gRange, abSup and qSup: cellBounds, which the rewrite keeps only beyond
// the table), the reference TestPlaceIntegralSame compares it with; peaks false drops the peaks of |sin| inside a cell (the
// negative control: a bound too low). placeIntegral bounds (1/pi) int_0^wMax |h^|^2/D over the members with
// lengthscales in [l0, l1] and the windows of duration at most tMax: on
// each frequency cell, |h^| <= |h0^| + both sides' derivative responses,
// |h0^| at most the T-free (4/w^2) g, the cap T + 2 int tail, and |A|
// sup|sin| + |B| over the cell's phases wT/2 for T in a duration cell of
// ratio placeTRatio; above a split frequency the phase is averaged
// instead (placeHigh), and the least total over the split points is the
// duration cell's bound; the largest over the duration cells.
func placeIntegralRef(peaks bool, tab *placeTable, mu []float64, l0, l1, tMax float64, ws, weights, invD []float64, d0 float64) float64 {
	n := len(weights)
	g, a, b, sl := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	cj, slopes0 := tab.slopeCaps(mu, l1)
	for i := range n {
		w, w1 := ws[i], ws[i+1]
		u1, u2 := w*l0, w1*l1
		g[i], a[i], b[i], sl[i] = tab.cellBounds(mu, cj, w, u1, u2)
	}
	hi := newPlaceHigh(tab, l0, l1, ws, weights, invD, g, sl)
	// |sin| of each cell's top phase ws[i+1] tHi/2 is the next cell's
	// bottom phase ws[i+1] tLo/2 at the next duration cell (tLo takes tHi):
	// each sine is computed once (NaN: not yet).
	sinLo, sinHi := make([]float64, n+1), make([]float64, n+1)
	for i := range sinHi {
		sinLo[i], sinHi[i] = math.NaN(), math.NaN()
	}
	worst := 0.0
	tLo := 0.0
	for tHi := math.Min(0.1*l0, tMax); ; tHi = math.Min(tHi*placeTRatio, tMax) {
		sinLo, sinHi = sinHi, sinLo
		for i := range sinHi {
			sinHi[i] = math.NaN()
		}
		cap0 := tHi + 2*l1*tab.tauAbs
		m := cap0 + slopes0
		low := m * m * d0
		best := math.Inf(1)
		for i := range n {
			if tLo > 0 {
				best = math.Min(best, low+hi.bound(i, tLo))
			}
			main := math.Min(cap0*cap0, g[i])
			// ph >= b[i] (a[i], b[i] >= 0, the sine in [0, 1]): when b[i]^2
			// alone reaches main, the phase cannot lower it; its sines are
			// most of this loop's time.
			if b[i]*b[i] < main {
				if ph := a[i]*maxAbsSinRef(peaks, ws[i]*tLo/2, ws[i+1]*tHi/2, &sinLo[i], &sinHi[i+1]) + b[i]; ph*ph < main {
					main = ph * ph
				}
			}
			m := math.Sqrt(main) + sl[i]
			low += m * m * weights[i]
		}
		worst = math.Max(worst, math.Min(best, low))
		if tHi >= tMax {
			break
		}
		tLo = tHi
	}
	return worst
}

// maxAbsSin returns the largest |sin a| over a in [a1, a2]; s1 and s2 hold
// |sin a1| and |sin a2| once computed (NaN before).
func maxAbsSinRef(peaks bool, a1, a2 float64, s1, s2 *float64) float64 {
	if peaks && a2-a1 >= math.Pi {
		return 1
	}
	// A peak of |sin| at pi/2 + k pi inside the interval.
	if k := math.Ceil((a1 - math.Pi/2) / math.Pi); peaks && math.Pi/2+k*math.Pi <= a2 {
		return 1
	}
	if math.IsNaN(*s1) {
		*s1 = math.Abs(math.Sin(a1))
	}
	if math.IsNaN(*s2) {
		*s2 = math.Abs(math.Sin(a2))
	}
	return math.Max(*s1, *s2)
}

// TestPlaceIntegralSame: placeConditionalBound with the loop rewritten for
// speed (placeIntegral) returns, bit for bit, the value of the plain form
// it replaced (placeIntegralRef, kept here), for the three Matérn kernels
// under three noises (the synthetic test noise and the bundled family's
// envelope at two scales, as a release computes it), lengthscale ranges
// from one lengthscale to 360x, and windows from a minute to a day. The
// negative control: the reference without the peaks of |sin| inside a
// cell, a plausible slip in such a rewrite that lowers the bound, differs
// on some case, so a comparison that passed it would not be a check.
//
// The comparison is exact and deterministic, so each case is a path of
// the loop, not a draw: every (noise, kernel) pair runs the two short
// spans, and the three long spans (three quarters of the cost) rotate
// over the pairs so that each noise and each kernel meets each long span
// once (a Latin square: 9 long cases instead of 27; 27 cases in all, was
// 45).
func TestPlaceIntegralSame(t *testing.T) {
	t.Parallel()
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnvelope(pr.Families(), &EnvelopeOptions{StateSpace: true, PlaceScaled: true})
	if err != nil {
		t.Fatal(err)
	}
	type noiseCase struct {
		name  string
		noise []gp.Kernel
	}
	noises := []noiseCase{{"bundled envelope", env.ScaledComponents(1)}}
	type span struct{ lMin, lMax, tMax float64 }
	// -short: the release's noise and two short spans (the control differs
	// there too); the full suite adds two noises and the long spans a
	// release meets, one per (noise, kernel) pair in a Latin square.
	spans := []span{{20, 20, 600}, {60, 600, 60}}
	long := []span{{5, 50, 3600}, {20, 7200, 3600}, {5, 50, 86400}}
	if !testing.Short() {
		noises = append(noises, noiseCase{"test noise", placeTestNoise()}, noiseCase{"bundled envelope x 7.5", env.ScaledComponents(7.5)})
	}
	kernels := []string{gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}
	ref := func(peaks bool) placeIntegrator {
		return func(tab *placeTable, mu []float64, l0, l1, tMax float64, ws, weights, invD []float64, d0 float64) float64 {
			return placeIntegralRef(peaks, tab, mu, l0, l1, tMax, ws, weights, invD, d0)
		}
	}
	differs := 0
	for in, nc := range noises {
		name, noise := nc.name, nc.noise
		for ik, k := range kernels {
			cases := spans
			if !testing.Short() {
				cases = append(slices.Clip(spans), long[(in+ik)%len(long)])
			}
			for _, s := range cases {
				got, err := placeConditionalBound(k, s.lMin, s.lMax, s.tMax, noise)
				if err != nil {
					t.Fatal(err)
				}
				want, err := placeConditionalBoundWith(ref(true), k, s.lMin, s.lMax, s.tMax, noise)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s, %s, %+v: %v, the plain form %v", name, k, s, got, want)
				}
				if differs > 0 {
					continue // the control has shown; it need not run again
				}
				broken, err := placeConditionalBoundWith(ref(false), k, s.lMin, s.lMax, s.tMax, noise)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(broken) != math.Float64bits(want) {
					differs++
				}
			}
		}
	}
	if differs == 0 {
		t.Error("negative control: the reference without the peaks of |sin| agreed with it on every case")
	}
}
