package cip

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
)

// TestEnvelopeDominatesBundled: the default release's envelope (the
// bundled family, Matérn 1/2, 3/2 and 5/2, scaled per kernel for places,
// state-space components) dominates PlaceNorm times every member of every
// kernel, checked at random frequencies and lengthscales, and at each
// kernel's most demanding lengthscale for the frequency (1/w clamped to
// the range, where s_l(w) peaks), independently of the verification code.
// The verification leaves about 0.03 % (issue 31: the bracketing used to
// leave 0.2 %, 0.24 % of the RMS noise), so the control is an envelope
// 0.2 % smaller, which the same check must catch.
func TestEnvelopeDominatesBundled(t *testing.T) {
	t.Parallel()
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		t.Fatal(err)
	}
	fs := pr.Families()
	e, err := NewEnvelope(fs, &EnvelopeOptions{StateSpace: true, PlaceScaled: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	worst := math.Inf(-1)
	n := 300_000
	if testing.Short() {
		n = 60_000
	}
	for i := range n {
		f := fs.Kernels[i%len(fs.Kernels)]
		scale, ok := PlaceNorm(f.Kernel, 1)
		if !ok {
			scale = 1
		}
		a, b := f.LengthscaleMin, f.LengthscaleMax
		w := math.Exp(math.Log(1e-3/b) + rng.Float64()*math.Log(1e5*b/a))
		l := math.Min(math.Max(1/w, a), b)
		if i%5 == 0 {
			l = a * math.Pow(b/a, rng.Float64())
		}
		worst = math.Max(worst, math.Log(scale)+memberLogDensity(t, f, l, w)-envelopeLogDensity(e, w))
	}
	t.Logf("overhead %.6f with %d components; tightest ratio %.9f", e.Overhead, len(e.Components), math.Exp(worst))
	if worst > 1e-12 {
		t.Errorf("a member exceeds the envelope by a factor %v", math.Exp(worst))
	}
	if worst-math.Log(0.998) <= 0 {
		t.Errorf("the check does not catch an envelope 0.2 %% too small (tightest ratio %v)", math.Exp(worst))
	}
}

// BenchmarkEnvelopeBundled designs the default release's envelope for the
// bundled family (what a process, or the device's page, pays once per
// family): the linear program and the verification.
func BenchmarkEnvelopeBundled(b *testing.B) {
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		b.Fatal(err)
	}
	fs := pr.Families()
	var e *Envelope
	for b.Loop() {
		if e, err = newEnvelope(fs, &EnvelopeOptions{StateSpace: true, PlaceScaled: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(e.Overhead, "overhead")
	b.ReportMetric(float64(len(e.Components)), "components")
}

// roundUpBits never rounds down and keeps the requested bits; a negative
// control (rounding to nearest) would go below x for some of them.
func TestRoundUpBits(t *testing.T) {
	for _, x := range []float64{1, 0.75, 1.0000001, 3.14159265358979, 123456.789, 7.3e-10, math.Nextafter(1, 2)} {
		r := roundUpBits(x, 16)
		if r < x || r > x*(1+math.Ldexp(1, -15)) {
			t.Errorf("roundUpBits(%v) = %v: below it or more than 2^-15 above", x, r)
		}
		if m, _ := math.Frexp(r); math.Ldexp(m, 16) != math.Trunc(math.Ldexp(m, 16)) {
			t.Errorf("roundUpBits(%v) = %v has more than 16 significant bits", x, r)
		}
	}
}

// BenchmarkReleasePreDraw is what a fresh process (a CLI sanitize) pays
// before it draws, with the bundled prior: the envelope's design and, for
// each Matérn kernel, its place table and the place bound for the span of
// the bundled sample trace (internal/sample's commute: 00:05:17 to
// 00:28:27, 1,390 s). Every memo is emptied at each iteration.
func BenchmarkReleasePreDraw(b *testing.B) {
	pr, err := prior.Read(bytes.NewReader(sample.Prior))
	if err != nil {
		b.Fatal(err)
	}
	fs := pr.Families()
	for b.Loop() {
		forgetEnvelopes()
		placeBounds.forget()
		placeTablesMu.Lock()
		clear(placeTables)
		placeTablesMu.Unlock()
		e, err := NewEnvelope(fs, &EnvelopeOptions{StateSpace: true, PlaceScaled: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range fs.Kernels {
			if _, ok := PlaceNorm(f.Kernel, 1); !ok {
				continue
			}
			if _, err := e.PlaceBound(f, 1390); err != nil {
				b.Fatal(err)
			}
		}
	}
}
