package noise

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/internal/stattest"
)

// The planar Laplace radius quantile table of ../shared/notes/anchors.md
// §A.4 (recomputed there; mpmath at 40 digits agrees to 3e-16).
var planarQuantiles = []struct{ p, epsR float64 }{
	{0.5, 1.678346990016661},
	{0.9, 3.889720169867429},
	{0.95, 4.743864518390577},
	{0.99, 6.638352067993811},
}

func TestPlanarRadiusQuantileTable(t *testing.T) {
	for _, eps := range []float64{10, 1, 0.1, 0.01, 0.001} {
		pl := PlanarLaplace{Epsilon: eps}
		for _, c := range planarQuantiles {
			got := pl.RadiusQuantile(c.p)
			want := c.epsR / eps
			if e := relErr(got, want); e > 1e-12 {
				t.Errorf("eps=%g: RadiusQuantile(%g) = %.17g, want %.17g (rel err %.2g)", eps, c.p, got, want, e)
			}
			if got := pl.AccuracyRadius(c.p); relErr(got, want) > 1e-12 {
				t.Errorf("eps=%g: AccuracyRadius(%g) = %.17g, want %.17g", eps, c.p, got, want)
			}
		}
	}
}

// The quantile must agree with the textbook Lambert form
// -(W₋₁((p-1)/e)+1)/ε where that form has no cancellation, and with
// mpmath's values where it does.
func TestPlanarRadiusQuantileLambert(t *testing.T) {
	pl := PlanarLaplace{Epsilon: 1}
	for _, p := range []float64{0.3, 0.5, 0.7, 0.9, 0.99, 0.999999} {
		lw := -(numeric.LambertWm1((p-1)/math.E) + 1)
		if e := relErr(pl.RadiusQuantile(p), lw); e > 1e-13 {
			t.Errorf("p=%g: RadiusQuantile %.17g vs Lambert form %.17g", p, pl.RadiusQuantile(p), lw)
		}
	}
	// mpmath: -(lambertw((p-1)/e, -1) + 1).
	for _, c := range []struct{ p, want float64 }{
		{1e-10, 0.00001414220229082974115},
		{1e-3, 0.04540201776948955682},
	} {
		if e := relErr(pl.RadiusQuantile(c.p), c.want); e > 1e-14 {
			t.Errorf("RadiusQuantile(%g) = %.17g, want %.17g", c.p, pl.RadiusQuantile(c.p), c.want)
		}
	}
}

func TestPlanarRadiusCDFRoundTrip(t *testing.T) {
	for _, eps := range []float64{10, 1, 0.001} {
		pl := PlanarLaplace{Epsilon: eps}
		for _, p := range []float64{1e-300, 1e-100, 1e-12, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999999, 1 - 1e-12} {
			got := pl.RadiusCDF(pl.RadiusQuantile(p))
			// The quantile is well conditioned (relative condition <= 1), the
			// CDF near 1 is limited by the spacing of floats near 1.
			tol := 1e-14*p + 0x1p-52
			if p < 0.5 {
				tol = 1e-14 * p
			}
			if math.Abs(got-p) > tol {
				t.Errorf("eps=%g: CDF(Quantile(%g)) = %.17g", eps, p, got)
			}
		}
	}
	pl := PlanarLaplace{Epsilon: 1}
	if q := pl.RadiusQuantile(0); q != 0 {
		t.Errorf("RadiusQuantile(0) = %v, want 0", q)
	}
	if q := pl.RadiusQuantile(1); !math.IsInf(q, 1) {
		t.Errorf("RadiusQuantile(1) = %v, want +Inf", q)
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if q := pl.RadiusQuantile(p); !math.IsNaN(q) {
			t.Errorf("RadiusQuantile(%v) = %v, want NaN", p, q)
		}
	}
}

func TestPlanarValidate(t *testing.T) {
	for _, eps := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		pl := PlanarLaplace{Epsilon: eps, Src: Seeded(1)}
		if pl.Validate() == nil {
			t.Errorf("Validate accepted epsilon %v", eps)
		}
		if dx, dy := pl.Rand(); !math.IsNaN(dx) || !math.IsNaN(dy) {
			t.Errorf("Rand with epsilon %v = (%v, %v), want NaN", eps, dx, dy)
		}
	}
}

func TestPlanarMoments(t *testing.T) {
	t.Parallel()
	const n = 125000
	for i, eps := range []float64{10, 1, 0.01} {
		pl := PlanarLaplace{Epsilon: eps, Src: Seeded(uint64(100 + i))}
		rs := make([]float64, n)
		ths := make([]float64, n)
		xs := make([]float64, n)
		for k := range n {
			r, th := pl.RandPolar()
			rs[k], ths[k] = r, th
			xs[k] = r * math.Cos(th)
		}
		// Radius ~ Gamma(2, 1/eps): mean 2/eps, variance 2/eps², kurtosis 6.
		if err := stattest.CheckMoments(rs, pl.Mean(), pl.RadiusVariance(), stattest.KurtosisLaplace, stattest.Z); err != nil {
			t.Errorf("eps=%g radius: %v", eps, err)
		}
		// Angle uniform on [0, 2π): mean π, variance π²/3.
		if err := stattest.CheckMoments(ths, math.Pi, math.Pi*math.Pi/3, stattest.KurtosisUniform, stattest.Z); err != nil {
			t.Errorf("eps=%g angle: %v", eps, err)
		}
		// x = R cos θ: mean 0, variance E[R²]/2 = (6/eps²)/2 = 3/eps².
		if err := stattest.CheckMean(xs, 0, 3/(eps*eps), stattest.Z); err != nil {
			t.Errorf("eps=%g x: %v", eps, err)
		}
		// Goodness of fit of the radius to C(r); with a fixed seed the
		// p-value is deterministic, 1e-4 would flag a wrong law.
		if d, p := stattest.KS(rs, pl.RadiusCDF); p < 1e-4 {
			t.Errorf("eps=%g: radius KS D=%g p=%g", eps, d, p)
		}
		if d, p := stattest.KS(ths, func(x float64) float64 { return math.Min(math.Max(x/(2*math.Pi), 0), 1) }); p < 1e-4 {
			t.Errorf("eps=%g: angle KS D=%g p=%g", eps, d, p)
		}
	}
}

// planarHistogram bins n outputs c + noise in polar cells around (0, 0):
// nr radius rings of width w (the last open-ended) times na angle sectors.
func planarHistogram(pl PlanarLaplace, cx, cy float64, n, nr, na int, w float64) []int {
	counts := make([]int, nr*na)
	rb := stattest.Bins{Lo: 0, Hi: float64(nr) * w, N: nr}
	ab := stattest.Bins{Lo: -math.Pi, Hi: math.Pi, N: na}
	for range n {
		dx, dy := pl.Rand()
		x, y := cx+dx, cy+dy
		counts[rb.Index(math.Hypot(x, y))*na+ab.Index(math.Atan2(y, x))]++
	}
	return counts
}

// TestPlanarGeoIndFalsifier checks ε·d-privacy empirically: outputs from
// centres at (±d/2, 0) binned in polar cells must satisfy
// P(cell|c1) <= e^{εd} P(cell|c2) + slack, by majority of 3 runs. The
// negative control (noise at twice ε, half the scale, claimed at ε) must be
// rejected, so the test can fail.
func TestPlanarGeoIndFalsifier(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("statistical falsifier")
	}
	const (
		eps = 1.0
		d   = 1.0
		n   = 60000
	)
	run := func(sampleEps float64, seed uint64) (stattest.DPResult, error) {
		a := planarHistogram(PlanarLaplace{Epsilon: sampleEps, Src: Seeded(seed)}, -d/2, 0, n, 8, 8, 0.6)
		b := planarHistogram(PlanarLaplace{Epsilon: sampleEps, Src: Seeded(seed + 1000)}, d/2, 0, n, 8, 8, 0.6)
		return stattest.DPCheck{Epsilon: eps * d}.Check(a, b)
	}
	var last stattest.DPResult
	ok := stattest.Vote(3, func(i int) bool {
		r, err := run(eps, uint64(10+i))
		if err != nil {
			t.Fatal(err)
		}
		last = r
		return r.OK
	})
	if !ok {
		t.Errorf("planar Laplace rejected at e^(eps d): worst %+v", last.Worst)
	}
	t.Logf("genuine: max cell ratio %.3f vs e^(eps d) = %.3f, %d events", last.MaxRatio, math.Exp(eps*d), last.Tested)
	broken := stattest.Vote(3, func(i int) bool {
		r, err := run(2*eps, uint64(20+i))
		if err != nil {
			t.Fatal(err)
		}
		last = r
		return r.OK
	})
	if broken {
		t.Errorf("falsifier accepted planar Laplace at 2*eps claimed as eps: %+v", last.Worst)
	}
	t.Logf("broken: max cell ratio %.3f", last.MaxRatio)
}
