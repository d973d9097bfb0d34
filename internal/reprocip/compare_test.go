package reprocip

import (
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/noise"
)

// Issue 5's acceptance claim on the paper's basic-secret setting: at equal
// noise the optimal design's certified epsilon is at most 0.4x SDP_A's,
// and its attack error is the largest.
func TestCompareBasic(t *testing.T) {
	s := PaperSettings([]float64{6.1})[0]
	rows, err := Compare(s, noise.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]CompareRow{}
	for _, r := range rows {
		by[r.Mechanism] = r
		if math.Abs(r.MSE-1) > 1e-9 {
			t.Errorf("%s: MSE %v, want 1", r.Mechanism, r.MSE)
		}
	}
	opt, paper := by[MechOptimal], by[MechPaperSDPA]
	if got := float64(*opt.Epsilon) / float64(*paper.Epsilon); got > 0.4 {
		t.Errorf("optimal/paper epsilon %v, want <= 0.4", got)
	}
	for _, m := range []string{MechPaperSDPA, MechIndependent, MechConcentrated} {
		if !(opt.AttackRMSE > by[m].AttackRMSE) || !(opt.Posterior2Sigma > by[m].Posterior2Sigma) {
			t.Errorf("optimal attack RMSE %v / 2-sigma %v, %s %v / %v", opt.AttackRMSE, opt.Posterior2Sigma, m, by[m].AttackRMSE, by[m].Posterior2Sigma)
		}
	}
}

// Real-trace settings: target mode fixes the common noise, planar Laplace
// shares the independent mechanism's per-point variance.
func TestCompareRealTrace(t *testing.T) {
	n := 12
	ts := make([]float64, n)
	truth := attack.Planar{East: make([]float64, n), North: make([]float64, n)}
	for i := range ts {
		ts[i] = 5 * float64(i)
		truth.East[i], truth.North[i] = 3*float64(i), math.Sin(float64(i))*20
	}
	sigma := gp.Gram(gp.RBF{Variance: 400, Lengthscale: 20}, ts)
	s := CompareSetting{Name: "synthetic", Sigma: sigma, Secrets: cip.EveryPoint(n), Lambda: 2, R: 50, Truth: &truth, TargetEpsilon: 1}
	rows, err := Compare(s, noise.Seeded(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	if e := float64(*rows[0].Epsilon); rows[0].Mechanism != MechOptimal || e > 1+1e-9 || e < 0.999 {
		t.Errorf("optimal row %+v", rows[0])
	}
	lap := rows[3]
	if lap.Mechanism != MechPlanarLaplace || lap.Epsilon != nil || lap.GeoIndEpsilonR == nil || math.Abs(lap.MSE-rows[0].MSE) > 1e-9*lap.MSE {
		t.Errorf("laplace row %+v", lap)
	}
}
