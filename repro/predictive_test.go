package repro

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/trace"
)

// TestWritePredictive checks that results.json and the figures land
// together, and that results.json carries the case study and the input
// and randomness records under the keys the command prints.
func TestWritePredictive(t *testing.T) {
	row := func(p float64) PredictiveRow {
		m := PredictiveMetrics{MeanError: 1000 + 100*p, Alpha90: 3000, Rate: 0.033, PointsCovered: 30}
		return PredictiveRow{P: p, IM: m, PM: m, PMSkip: m}
	}
	res := &PredictiveCaseStudyResult{
		FixedRate:    []PredictiveRow{row(0), row(0.5), row(1)},
		FixedUtility: []PredictiveRow{row(0), row(0.5), row(1)},
		Traces:       2, SlowPoints: 40,
	}
	dir := filepath.Join(t.TempDir(), "out")
	files, err := WritePredictive(dir, Predictive{PredictiveCaseStudyResult: res, Randomness: "seeded:1", Files: 3, InputSummary: (*trace.Report)(nil).Summary()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"results.json", "fixed_rate.svg", "fixed_rate.png", "fixed_utility.svg", "fixed_utility.png"}
	got := map[string]bool{}
	for _, f := range files {
		if filepath.Dir(f) != dir {
			t.Errorf("%s is not in %s", f, dir)
		}
		got[filepath.Base(f)] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("%s not written (got %v)", w, files)
		}
		if st, err := os.Stat(filepath.Join(dir, w)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", w, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"fixed_rate", "fixed_utility", "traces", "randomness", "files", "skipped_rows", "skipped_by_reason"} {
		if _, ok := back[k]; !ok {
			t.Errorf("results.json has no %q", k)
		}
	}
	if back["randomness"] != "seeded:1" {
		t.Errorf("randomness %v", back["randomness"])
	}
}
