package trajdb

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/internal/trajdata"
	"github.com/tracepriv/tracepriv/noise"
)

func TestQIAttackReadsOffThePath(t *testing.T) {
	t.Parallel()
	rel := [][]int{{1, 2, 3}, {4, 5, 6, 7}, {4, 8, 7}, {4, 5, 6, 7}, {7, 4}, {9, 4, 8, 8, 7}}
	g, ok := QIAttack(rel, 4, 7)
	if !ok || !slices.Equal(g, []int{4, 5, 6, 7}) {
		t.Fatalf("guess %v %v, want the most frequent match [4 5 6 7]", g, ok)
	}
	if _, ok := QIAttack(rel, 7, 1); ok {
		t.Fatal("matched a quasi-identifier visited in the wrong order")
	}
	// Ties go to the smallest sequence.
	if g, _ := QIAttack([][]int{{4, 8, 7}, {4, 5, 7}}, 4, 7); !slices.Equal(g, []int{4, 5, 7}) {
		t.Fatalf("tie broken to %v", g)
	}
	if f := qiCellsRecovered([]int{4, 5, 6, 7}, []int{4, 5, 9, 7}); f != 0.5 {
		t.Fatalf("cells recovered %v, want 0.5", f)
	}
}

// The flawed control gives the attack the victim's path; a DP mechanism
// keeps the attack's advantage within what epsilon allows.
func TestQIAttackFlawedVersusDP(t *testing.T) {
	t.Parallel()
	db, err := commuters(trajdata.CommuterOptions{Rows: 5, Cols: 5, Persons: 150, MaxLen: 5}, noise.Seeded(21))
	if err != nil {
		t.Fatal(err)
	}
	b := Bounds{MaxLen: 5, MaxSeqs: 1}
	opt := QIAttackOptions{Epsilon: 1, Victims: 40, Draws: 20, Src: noise.Seeded(22)}
	fl, err := MeasureQIAttack(FlawedPresentOnly{Contribution: b}, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	logQI(t, fl)
	if !fl.ExceedsDP || !fl.All.ExceedsDP || fl.All.Advantage <= fl.AdvantageBoundPriorFree || fl.All.Trials != 800 {
		t.Fatalf("the attack on the flawed control does not break epsilon = 1: %+v", fl)
	}
	// A victim whose path nobody else holds never has it released without
	// them, so the attack cannot succeed there.
	if fl.UniquePath.Victims == 0 || fl.UniquePath.ExactWithout != 0 || fl.UniquePath.PathWithout != 0 {
		t.Fatalf("unique-path victims: %+v", fl.UniquePath)
	}
	js, _ := json.Marshal(fl)
	var v map[string]any
	_ = json.Unmarshal(js, &v)
	all, _ := v["all"].(map[string]any)
	for _, k := range []string{"exact_with_victim", "exact_without_victim", "advantage", "advantage_bound", "exceeds_dp_bound"} {
		if _, ok := all[k]; !ok {
			t.Fatalf("JSON lacks all.%s: %s", k, js)
		}
	}
	if v["exceeds_dp_bound"] != true {
		t.Fatalf("JSON exceeds_dp_bound: %s", js)
	}
}

func TestQIAttackStoppedByUniverseControl(t *testing.T) {
	t.Parallel()
	// The whole-universe control is only tractable on a small universe:
	// a 3x3 grid, paths of 3 cells (819 sequences of length <= 3).
	db, err := commuters(trajdata.CommuterOptions{Rows: 3, Cols: 3, Persons: 40, MaxLen: 3}, noise.Seeded(31))
	if err != nil {
		t.Fatal(err)
	}
	b := Bounds{MaxLen: 3, MaxSeqs: 1}
	opt := QIAttackOptions{Epsilon: 1, Victims: 30, Draws: 20, Src: noise.Seeded(32)}
	fl, err := MeasureQIAttack(FlawedPresentOnly{Contribution: b}, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := MeasureQIAttack(universeControl{b}, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	logQI(t, fl)
	logQI(t, dp)
	if !fl.ExceedsDP {
		t.Fatalf("flawed control not caught on the small grid: %+v", fl)
	}
	if dp.ExceedsDP {
		t.Fatalf("a DP mechanism exceeds its own bound: %+v", dp)
	}
	// Under the DP control a sequence matching the QI is there whether or
	// not the victim is: the noise fills the universe.
	if dp.All.MatchWithout < 0.9 {
		t.Fatalf("QI matches without the victim %.2f: the noise should supply them", dp.All.MatchWithout)
	}
}

func logQI(t *testing.T, r *QIAttackReport) {
	t.Helper()
	for _, g := range []struct {
		name string
		r    QIAttackRates
	}{{"all", r.All}, {"unique path", r.UniquePath}} {
		t.Logf("%s, %s (%d victims): TPR %.3f [%.3f, %.3f] FPR %.3f [%.3f, %.3f] adv %.3f (DP bound %.3f, prior-free %.3f), cells adv %.3f (bound %.3f), path %.3f/%.3f, QI match %.2f/%.2f, exceeds %v",
			r.Mechanism, g.name, g.r.Victims, g.r.ExactWith, g.r.ExactWithCI[0], g.r.ExactWithCI[1], g.r.ExactWithout, g.r.ExactWithoutCI[0], g.r.ExactWithoutCI[1],
			g.r.Advantage, g.r.AdvantageBound, r.AdvantageBoundPriorFree, g.r.CellsAdvantage, g.r.CellsAdvantageBound, g.r.PathWith, g.r.PathWithout, g.r.MatchWith, g.r.MatchWithout, g.r.ExceedsDP)
	}
}

// The exploration trees stop the attack: on the 5x5 commuters, at epsilon
// 1 and 8, the success with the victim stays within what epsilon allows
// over the success without.
func TestQIAttackStoppedByExplorationTrees(t *testing.T) {
	t.Parallel()
	db, err := commuters(trajdata.CommuterOptions{Rows: 5, Cols: 5, Persons: 150, MaxLen: 5}, noise.Seeded(21))
	if err != nil {
		t.Fatal(err)
	}
	b := Bounds{MaxLen: 5, MaxSeqs: 1}
	epsilons := []float64{1, 8}
	if testing.Short() {
		epsilons = epsilons[:1] // the same check at one budget; the full suite adds epsilon 8
	}
	for _, eps := range epsilons {
		for _, m := range []Mechanism{&Prefix{Contribution: b}, &NGram{Contribution: b}} {
			r, err := MeasureQIAttack(m, db, QIAttackOptions{Epsilon: eps, Victims: 20, Draws: 12, Src: noise.Seeded(23)})
			if err != nil {
				t.Fatal(err)
			}
			logQI(t, r)
			if r.ExceedsDP || r.All.EpsilonLower > eps || r.UniquePath.EpsilonLower > eps {
				t.Errorf("%s at epsilon %g: the attack exceeds the DP bound", m.Name(), eps)
			}
		}
	}
}
