package repro

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/noise"
)

// TestExample37ThesisRelease: the release the thesis works through, the
// centroids {(5, 2), (3.5, 3.5)} of P3, identifies P3 and gives back
// l1 = (2, 2) exactly (thesis L1209-1217).
func TestExample37ThesisRelease(t *testing.T) {
	g, k, err := Example37Attack([][2]float64{{3.5, 3.5}, {5, 2}}, [2]float64{5, 2}, [2]float64{5, 5}, Example37Box)
	if err != nil {
		t.Fatal(err)
	}
	if g != [2]float64{2, 2} || k != 2 {
		t.Fatalf("recovered %v from partition %d, want (2, 2) from P3", g, k+1)
	}
	if _, _, err := Example37Attack([][2]float64{{1, 1}}, [2]float64{5, 2}, [2]float64{5, 5}, Example37Box); err == nil {
		t.Error("a release of one centroid accepted")
	}
}

// TestExample37AttackInvertsEveryPartition: against the flawed clustering
// the attack recovers the target exactly whichever partition is drawn and
// wherever the target is (not only at the thesis's (2, 2)).
func TestExample37AttackInvertsEveryPartition(t *testing.T) {
	src := noise.Seeded(3)
	h := example37Hua{Example37Box}
	l2, l3 := Example37Locations[1], Example37Locations[2]
	for range 200 {
		l1 := [2]float64{8 * noise.Uniform(src), 8 * noise.Uniform(src)}
		outs, probs := h.outputs([][2]float64{l1, l2, l3}, 1)
		if len(outs) != 3 || math.Abs(probs[0]+probs[1]+probs[2]-1) > 1e-12 {
			t.Fatalf("%d outputs, probabilities %v", len(outs), probs)
		}
		for k, o := range outs {
			g, pk, err := Example37Attack(o, l2, l3, Example37Box)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Hypot(g[0]-l1[0], g[1]-l1[1]); d > 1e-9 || pk != k {
				t.Fatalf("l1 = %v, partition P%d: recovered %v from P%d (error %g)", l1, k+1, g, pk+1, d)
			}
		}
	}
}

// TestExample37 runs the reproduction: the attack recovers l1 exactly from
// every release of the flawed mechanism and fails against the corrected
// one, whose releases obey epsilon-DP between D and D' exactly and in the
// attack's hit rates.
func TestExample37(t *testing.T) {
	t.Parallel()
	res, err := ReproduceExample37(Example37Options{Epsilon: 1, Draws: 3000, Src: noise.Seeded(37)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Summary {
		t.Log(s)
	}
	if res.ThesisRecovered != [2]float64{2, 2} || res.ThesisPartition != example37PartitionNames[2] {
		t.Fatalf("thesis release: recovered %v via %s", res.ThesisRecovered, res.ThesisPartition)
	}
	fl, co := res.Flawed, res.Correct
	// The flawed mechanism: exact recovery every time, a hit rate of 1
	// with the target and 0 without, releases impossible under the
	// neighbour.
	if res.RecoveredError > 1e-9 || fl.ExactRecoveries != fl.Draws || fl.MaxError > 1e-9 || fl.ExpectedError > 1e-9 {
		t.Errorf("flawed: mean error %g, %d of %d exact", res.RecoveredError, fl.ExactRecoveries, fl.Draws)
	}
	if fl.HitWith != 1 || fl.HitWithout != 0 || !fl.OutputLossInfinite || !fl.EventLossInfinite || !(fl.EpsilonLower > res.Epsilon) {
		t.Errorf("flawed: %+v", fl)
	}
	// The corrected mechanism: the attack is far off, never exact, and
	// the releases are 1-DP: exactly over every output, and in the hit
	// rates within their confidence intervals.
	if !(res.RecoveredErrorCorrect > 2) || co.ExactRecoveries > co.Draws/100 {
		t.Errorf("corrected: mean error %g, %d of %d exact", res.RecoveredErrorCorrect, co.ExactRecoveries, co.Draws)
	}
	if co.OutputLossInfinite || !(co.OutputLoss <= res.Epsilon+1e-12) || co.EventLossInfinite || co.ExactEventLoss > res.Epsilon+1e-12 {
		t.Errorf("corrected: exact losses %+v", co)
	}
	// The strongest attacker for the prior learns l1 from the flawed
	// release and next to nothing from the corrected one: its error stays
	// within 10 % of guessing the box's centre.
	if fl.BayesError > 1e-9 || !(co.BayesError > 0.9*res.PriorError) || math.Abs(res.PriorError-math.Sqrt(8)) > 1e-12 {
		t.Errorf("Bayes attacker: flawed %g, corrected %g, no release %g", fl.BayesError, co.BayesError, res.PriorError)
	}
	if co.EpsilonLower > res.Epsilon || !(co.HitWithCI[0] <= math.Exp(res.Epsilon)*co.HitWithoutCI[1]) {
		t.Errorf("corrected: the hit rates refute epsilon: %+v", co)
	}
	if z := (co.MeanError - co.ExpectedError) / (co.MaxError / math.Sqrt(float64(co.Draws))); math.Abs(z) > 4.5 {
		t.Errorf("corrected: sampled mean error %g, exact %g", co.MeanError, co.ExpectedError)
	}
	// The exact curve: the flawed error is 0 at every epsilon; the
	// corrected one falls as epsilon grows (the guarantee is the knob).
	for i, r := range res.Sweep {
		if r.Flawed > 1e-9 {
			t.Errorf("epsilon %g: flawed expected error %g", r.Epsilon, r.Flawed)
		}
		if i > 0 && r.Correct > res.Sweep[i-1].Correct+1e-12 {
			t.Errorf("epsilon %g: corrected expected error %g above %g at %g", r.Epsilon, r.Correct, res.Sweep[i-1].Correct, res.Sweep[i-1].Epsilon)
		}
	}
	dir := t.TempDir()
	if err := WriteExample37(dir, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results-ex3_7.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"recovered_error", "recovered_error_correct", "flawed", "correct", "sweep"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, f := range []string{"ex3_7.svg", "ex3_7.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestExample37DetectsABrokenCorrection: a "corrected" mechanism whose
// universe is the data's own locations (the flaw again) is caught by the
// same checks: the exact loss between D and D' is infinite.
func TestExample37DetectsABrokenCorrection(t *testing.T) {
	t.Parallel()
	d := Example37Locations[:]
	dp := [][2]float64{{8, 8}, d[1], d[2]}
	side, err := example37Measure(dataUniverse{}, d, dp, Example37Options{Epsilon: 1, Draws: 500, Radius: 1}, noise.Seeded(5))
	if err != nil {
		t.Fatal(err)
	}
	if !side.OutputLossInfinite {
		t.Fatalf("a data-dependent range passed: %+v", side)
	}
}

// dataUniverse picks, by the same exponential mechanism, a pair of the
// data's own locations as the centres: its range depends on the data.
type dataUniverse struct{}

func (dataUniverse) name() string     { return "data-universe" }
func (dataUniverse) describe() string { return "pairs of the data's own locations" }
func (dataUniverse) outputs(locs [][2]float64, eps float64) ([][][2]float64, []float64) {
	var outs [][][2]float64
	var logw []float64
	for a := range locs {
		for b := a + 1; b < len(locs); b++ {
			outs = append(outs, example37Sorted([][2]float64{locs[a], locs[b]}))
			logw = append(logw, 0)
		}
	}
	return outs, example37Normalise(logw)
}
