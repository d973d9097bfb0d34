package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/repro"
)

// TestReproThesis checks the command's wiring with --reps 2: the values
// asserted are closed forms (risk's TestClosedFormsM11Table derives them again),
// and the experiments' row counts do not depend on the repetitions.
func TestReproThesis(t *testing.T) {
	dir := t.TempDir()
	riskRunJSON(t, "repro", "thesis", "--out", dir, "--reps", "2", "--seed", "4")
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res repro.ThesisResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	// Fig 5.1 at ε = 1 against the m = 11 table of thesis_part2 §5.3.
	var row repro.Fig51Row
	for _, r := range res.Fig51 {
		if r.Epsilon == 1 {
			row = r
		}
	}
	riskClose(t, "GRR", row.GRR, 0.12282, 5.01e-6)
	riskClose(t, "OUE", row.OUE, 0.07470, 5.01e-6)
	riskClose(t, "SS", row.SS, 0.09738, 5.01e-6)
	riskClose(t, "Laplace", row.Laplace, 0.04434, 5.01e-6)
	riskClose(t, "Thm 5.2", row.Thm52, 0.42011, 5.01e-6)
	for _, r := range res.Fig51 {
		if r.Gaussian > r.Thm52 || r.Laplace > r.Thm52 || r.GRR > r.Thm52+1e-15 {
			t.Errorf("ε=%v: a Theorem 5.3 curve above Theorem 5.2: %+v", r.Epsilon, r)
		}
	}
	// Fig 5.2 at γ = 0.1: ε = 2.1201 (thesis_part2 §5.3), α = ln 20/ε = 1.413.
	for _, r := range res.Fig52 {
		if r.Risk == 0.1 {
			riskClose(t, "Fig 5.2 ε", r.EpsilonRAD, 2.1201, 5.01e-5)
			riskClose(t, "Fig 5.2 α", r.AlphaRAD, 1.413, 5.01e-4)
			if r.EpsilonHayes >= r.EpsilonRAD {
				t.Errorf("ReRo calibration %v not stricter than RAD's %v", r.EpsilonHayes, r.EpsilonRAD)
			}
		}
	}
	if len(res.Fig66) != 21 || len(res.Fig67) != 21 || res.Randomness != "seeded:4" {
		t.Errorf("experiment rows %d/%d, randomness %q", len(res.Fig66), len(res.Fig67), res.Randomness)
	}
	for _, f := range []string{"fig5_1.svg", "fig5_2.svg", "fig5_3.png", "fig6_2.svg", "fig6_6.svg", "fig6_7.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestReproThesisExample37: "repro thesis --example 3.7 --json" prints the
// attack's error on the flawed clustering (0: it recovers l1 exactly) and
// on the corrected one (far off).
func TestReproThesisExample37(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := riskRunJSON(t, "repro", "thesis", "--example", "3.7", "--out", dir, "--draws", "500", "--seed", "37")
	flawed, correct := riskNum(t, v, "recovered_error"), riskNum(t, v, "recovered_error_correct")
	if flawed > 1e-9 || !(correct > 2) {
		t.Errorf("recovered_error %v (want 0), recovered_error_correct %v (want far off)", flawed, correct)
	}
	if st, err := os.Stat(filepath.Join(dir, "ex3_7.svg")); err != nil || st.Size() == 0 {
		t.Errorf("figure: %v", err)
	}
	if err := riskRunErr(t, "repro", "thesis", "--example", "3.8"); err == nil {
		t.Error("--example 3.8 accepted")
	}
}
