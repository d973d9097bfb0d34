package attack

import (
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/sanitize"
)

// The truth-free model-selection adversary tells a rough truth from a
// smooth one: an Ornstein-Uhlenbeck (matern12) truth and an RBF truth,
// each 150 points at 5 s with lengthscale 120 s and variance 10,000 m^2,
// released with the real-data tests' 100 m correlated noise. It must
// choose matern12 for the first and a smooth kernel for the second, each
// by more than 2 nats of restricted likelihood over the other kind (the
// smooth kernels are within a nat of each other on one draw, so which of
// them wins is not asserted), and report every candidate. (300 points
// before session 43: the margins were 11.3 and 5.6 nats there, 13.9 and
// 5.6 at 150 points, at a fifth of the cost.)
func TestAttackModelSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("two 150-point model selections; cmd/tracepriv's TestAttackStayErrorCLI runs the selection with -short")
	}
	t.Parallel()
	n := 150
	ts := make([]float64, n)
	times := make([]time.Time, n)
	t0 := time.Date(2008, 10, 24, 0, 0, 0, 0, time.UTC)
	for i := range ts {
		ts[i] = 5 * float64(i)
		times[i] = t0.Add(time.Duration(i) * 5 * time.Second)
	}
	g := testReleaseNoise(ts)
	gn, err := noise.NewMultiNormalCholesky(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		truth gp.Kernel
		rough bool
	}{
		{gp.Matern12{Variance: 10000, Lengthscale: 120}, true},
		{gp.RBF{Variance: 10000, Lengthscale: 120}, false},
	} {
		prior, err := noise.NewMultiNormalCholesky(gp.Gram(tc.truth, ts))
		if err != nil {
			t.Fatal(err)
		}
		src := noise.Seeded(7)
		p := &person{
			cert: &sanitize.Certificate{RadiusM: 100}, pc: &sanitize.PersonCertificate{UID: "synthetic"},
			times: times, ts: ts, noise: &noiseLaw{ts: ts, dense: g}, window: n, windows: 1, pts: make([]personPoint, n),
		}
		p.truthP = Planar{East: prior.Rand(nil, src), North: prior.Rand(nil, src)}
		p.relP = Planar{East: make([]float64, n), North: make([]float64, n)}
		ge, gnn := gn.Rand(nil, src), gn.Rand(nil, src)
		for i := range n {
			p.relP.East[i], p.relP.North[i] = p.truthP.East[i]+ge[i], p.truthP.North[i]+gnn[i]
			p.secretPts = append(p.secretPts, i)
		}
		sel, err := p.selectModel(DefaultSelectKernels, &progress{})
		if err != nil {
			t.Fatal(err)
		}
		rel, err := score(p.truthP, p.relP, [2]*Estimate{{Mean: p.relP.East, Variance: ones(n), Risk: ones(n)}, {Mean: p.relP.North, Variance: ones(n), Risk: ones(n)}}, p.secretPts, 100)
		if err != nil {
			t.Fatal(err)
		}
		// The best log likelihood of each kind.
		bestRough, bestSmooth := math.Inf(-1), math.Inf(-1)
		for _, c := range sel.Candidates {
			if c.Kernel == gp.KernelMatern12 {
				bestRough = math.Max(bestRough, c.LogLikelihood)
			} else {
				bestSmooth = math.Max(bestSmooth, c.LogLikelihood)
			}
		}
		margin := bestSmooth - bestRough
		if tc.rough {
			margin = -margin
		}
		if (sel.Kernel == gp.KernelMatern12) != tc.rough || !(margin > 2) {
			t.Errorf("truth %T: chose %s by %.2f nats over the other kind; candidates %+v", tc.truth, sel.Kernel, margin, sel.Candidates)
		}
		if len(sel.Candidates) != len(DefaultSelectKernels) || !(sel.RMSE > 0) {
			t.Errorf("truth %T: RMSE %.1f m, candidates %+v", tc.truth, sel.RMSE, sel.Candidates)
		}
		t.Logf("truth %T: chose %s (east lengthscale %.0f s), RMSE %.1f m, release %.1f m; candidates %+v", tc.truth, sel.Kernel, sel.East.Lengthscale, sel.RMSE, rel.ReleasedRMSE, sel.Candidates)
	}
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
