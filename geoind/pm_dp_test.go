package geoind

import (
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/noise"
)

// pmEvents runs a two-step PM on the constant trace [x, x] n times and
// bins the runs by (z₁, b₂, z₂) on coarse x-coordinate bins.
func pmEvents(t *testing.T, m *Mechanism, x Vec, n int, src noise.Source) []int {
	const lo, nb = -3, 8 // bins [-3,-2), …, [3,4) with end bins open
	bin := func(v float64) int { return min(max(int(math.Floor(v))-lo, 0), nb-1) }
	counts := make([]int, nb+nb*nb)
	ts := []time.Time{time.Unix(0, 0), time.Unix(60, 0)}
	for range n {
		r, err := m.Sanitize([]Vec{x, x}, ts, src)
		if err != nil || len(r) != 2 {
			t.Fatalf("run: %v (%d steps)", err, len(r))
		}
		i := bin(r[0].Z.X)
		if r[1].Hard {
			counts[nb+i*nb+bin(r[1].Z.X)]++
		} else {
			counts[i]++
		}
	}
	return counts
}

// TestPredictiveMechanismGeoInd falsifies Theorem 3 end to end: for two
// traces at d_∞ = 1, the distributions of whole runs (reported values and
// hard flags) differ by at most e^{ε d_∞}, ε = sup_r ε_β(r) = 2ε_N + ε_θ
// here; a PM spending three times the budget it claims is caught.
func TestPredictiveMechanismGeoInd(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 30000
	}
	mk := func(alpha float64) *Mechanism {
		return &Mechanism{
			Manager: FixedUtility{Params: Params{Epsilon: 100}, Accuracy: alpha},
			Noise:   PlanarLaplace{Grid: 0.5},
		}
	}
	alpha := CN(0.9) // ε_N = 1 per unit
	d0, err := mk(alpha).Manager.Decide(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	sup := 2*d0.EpsN + d0.EpsTheta
	if math.Abs(d0.EpsN-1) > 1e-12 {
		t.Fatalf("ε_N = %g", d0.EpsN)
	}
	src := noise.Seeded(50)
	a := pmEvents(t, mk(alpha), Vec{0, 0}, n, src)
	b := pmEvents(t, mk(alpha), Vec{1, 0}, n, src)
	res, err := stattest.DPCheck{Epsilon: sup}.Check(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Errorf("PM violates ε·d_∞-privacy with ε = %g: %+v", sup, res.Worst)
	}
	// Negative control: the same mechanism with a third of the accuracy
	// radius (3× the ε) checked against the claim for α.
	a = pmEvents(t, mk(alpha/3), Vec{0, 0}, n, src)
	b = pmEvents(t, mk(alpha/3), Vec{1, 0}, n, src)
	if res, err = (stattest.DPCheck{Epsilon: sup}).Check(a, b); err != nil {
		t.Fatal(err)
	}
	if res.OK {
		t.Errorf("falsifier accepted a PM spending 3× its claimed budget (max ratio %.1f vs e^%.2f)", res.MaxRatio, sup)
	}
}
