package repro

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/trajdb"
)

// The reports print themselves (WriteText) as "tracepriv repro ..."
// shows them. Each test builds a report by hand and checks that the text
// holds its values, spelled out here, in the places the reader looks
// for them.

// text runs a report's WriteText.
func text(t *testing.T, write func(w *strings.Builder) error) string {
	t.Helper()
	var b strings.Builder
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wantLines checks that each of want is in s, in order.
func wantLines(t *testing.T, s string, want ...string) {
	t.Helper()
	rest := s
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("text lacks %q (or has it out of order):\n%s", w, s)
		}
		rest = rest[i+len(w):]
	}
}

func TestParseCIPFigures(t *testing.T) {
	all, err := ParseCIPFigures("all")
	if err != nil || len(all) != 8 {
		t.Fatalf("all: %d panels, %v", len(all), err)
	}
	figs, err := ParseCIPFigures("2e, 2a")
	if err != nil || len(figs) != 2 || figs[0].ID != "2e" || figs[1].ID != "2a" {
		t.Fatalf("2e, 2a: %+v, %v", figs, err)
	}
	if _, err := ParseCIPFigures("2a,2z"); err == nil || !strings.Contains(err.Error(), `"2z"`) {
		t.Errorf("2z: %v", err)
	}
}

func TestCIPFigureReportsWriteText(t *testing.T) {
	sdp, unif, loss, nu := 0.51234, 1.98765, Num(3.25), 1e-6
	r := CIPFigureReports{{
		CIPFigureResult: &CIPFigureResult{Figure: "2d", Title: "RBF, misspecified", N: 50, BudgetPerUnit: 1, Stabilisation: 10,
			AdversaryNugget: &nu, Seconds: 1.5,
			Points: []CIPFigurePoint{{LEff: 2.5, Budget: 1, SDP: &sdp, IndUniform: &unif, LossSDP: &loss}}},
		Band:  &LEffBand{Source: "GeoLife", Q25: 1.5, Median: 2, Q75: 3},
		Files: []string{"out/fig2d.svg"},
	}}
	s := text(t, func(w *strings.Builder) error { return r.WriteText(w) })
	wantLines(t, s, "Figure 2d: RBF, misspecified (n = 50, budget 1, stab. factor 10) in 1.5s",
		"nugget: 1e-06 x prior variance", "fitted l_eff (GeoLife): quartiles 1.5 / 2 / 3",
		"l_eff", "2.500", "0.5123", "1.988", "-", "3.25", "wrote out/fig2d.svg")
	// A panel scored without a nugget says its 1.5 l curve is not determined.
	zero := 0.0
	r[0].AdversaryNugget = &zero
	if s := text(t, func(w *strings.Builder) error { return r.WriteText(w) }); !strings.Contains(s, "nugget: none") {
		t.Errorf("no nugget:\n%s", s)
	}
}

// TestReplotCIPPanels draws a recorded panel again from its JSON alone.
func TestReplotCIPPanels(t *testing.T) {
	dir := t.TempDir()
	f, err := LookupCIPFigure("2a")
	if err != nil {
		t.Fatal(err)
	}
	sdp := 0.75
	rec := &CIPFigureReport{CIPFigureResult: &CIPFigureResult{Figure: f.ID, Title: f.Title, N: f.N,
		Points: []CIPFigurePoint{{LEff: 1, SDP: &sdp}, {LEff: 2, SDP: &sdp}}}}
	if err := WriteCIPFigure(dir, rec); err != nil {
		t.Fatal(err)
	}
	got, err := ReplotCIPPanels(dir, []CIPFigure{f})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Points) != 2 || *got[0].Points[1].SDP != sdp {
		t.Fatalf("replotted %+v", got)
	}
	for _, name := range got[0].Files {
		if st, err := os.Stat(name); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	e, _ := LookupCIPFigure("2e")
	if _, err := ReplotCIPPanels(dir, []CIPFigure{e}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a panel never recorded: %v", err)
	}
}

// TestRunCIPSensitivitiesRefuses: the study is of the misspecified panels
// only; asked of another it refuses before computing, and with every
// panel it skips the others.
func TestRunCIPSensitivitiesRefuses(t *testing.T) {
	a, _ := LookupCIPFigure("2a")
	if _, err := RunCIPSensitivities([]CIPFigure{a}, CIPSensitivitiesOptions{}); !errors.Is(err, ErrNotMisspecified) || !strings.Contains(err.Error(), "2a") {
		t.Errorf("2a: %v", err)
	}
	res, err := RunCIPSensitivities([]CIPFigure{a}, CIPSensitivitiesOptions{All: true})
	if err != nil || len(res) != 0 {
		t.Errorf("2a among all: %v, %v", res, err)
	}
	d, _ := LookupCIPFigure("2d")
	if _, err := RunCIPSensitivities([]CIPFigure{d}, CIPSensitivitiesOptions{Replot: true}); err == nil {
		t.Error("replot without a directory accepted")
	}
}

func TestCIPSensitivityResultsWriteText(t *testing.T) {
	hi, cond := 0.912345, Num(1e12)
	r := CIPSensitivityResults{{Figure: "2h", Title: "periodic", N: 48, Secret: 24, Budget: 0.96,
		HighPrecision: &HighPrecisionRun{Error: "no python3 with mpmath"},
		Points: []CIPSensitivityPoint{{LEff: 1.25,
			Designs: []CIPSensitivityDesign{{Name: DesignClosedForm}, {Name: "interior point, tol 1e-08", Distance: 3e-7}},
			Summary: []CIPSensitivitySummary{{Scale: 1.5, Nugget: 1e-6, Condition: &cond, Float64Min: 0.9, Float64Max: 0.95,
				HighPrecisionMax: &hi, Spread: 0.05, Determined: false}}}}}}
	s := text(t, func(w *strings.Builder) error { return r.WriteText(w) })
	wantLines(t, s, "Figure 2h sensitivity: periodic (n = 48, secret {24}, budget 0.96)",
		"high precision: none (no python3 with mpmath)", "l_eff 1.250; designs: interior point, tol 1e-08 3e-07 from the closed form;",
		"1.5", "1e-06", "1e+12", "0.900000", "0.950000", "-", "0.912345", "0.05", "false")
}

func TestCIPCompareReportWriteText(t *testing.T) {
	eps, ratio, er := Num(2.5), Num(1.25), 0.7
	out := &CIPCompareReport{Randomness: "seeded:3", Seconds: 12.34, Files: []string{"d/compare.json"}, Rows: []CIPCompareRow{
		{Setting: "paper 2a", Mechanism: MechOptimal, MSE: 1, Adversary: "known prior", Epsilon: &eps, LossFactor: &eps, RatioToOptimal: &ratio,
			Posterior2Sigma: 0.9, ReconstructionRMSE: 0.5, ReleaseRMSE: 0.6, ReconstructionWithinR: 0.975, ReleaseWithinR: 0.5, Coverage95: 0.95},
		{Setting: "paper 2a", Mechanism: MechPlanarLaplace, MSE: 1, GeoIndEpsilonR: &er, AttackReads: "release"},
	}}
	s := text(t, func(w *strings.Builder) error { return out.WriteText(w) })
	wantLines(t, s, "paper 2a (MSE 1 per dimension)", "adversary: known prior", MechOptimal, "2.5", "2.5", "1.25", "0.9", "97.5%", "50.0%", "95.0%",
		MechPlanarLaplace+" (eps*r 0.7)", "-", "the attack reads the release", "randomness seeded:3; 12.3 s", "wrote d/compare.json")
	if strings.Count(s, "(MSE") != 1 {
		t.Errorf("one setting printed as several:\n%s", s)
	}
}

func TestTrajDBReportWriteText(t *testing.T) {
	box, err := trace.ParseBBox("39.75,116.15,40.10,116.60")
	if err != nil {
		t.Fatal(err)
	}
	g, err := trajdb.NewGrid(box, 10000)
	if err != nil {
		t.Fatal(err)
	}
	mean, uni, np := &trajdb.Metrics{QueryARE: 0.25}, &trajdb.Metrics{QueryARE: 0.5}, &trajdb.Metrics{QueryARE: 0.125}
	o := &TrajDBReport{Universe: g, Files: []string{"a.svg", "b.json"}, TrajDBUtilityResult: &TrajDBUtilityResult{
		Bounds: trajdb.Bounds{MaxLen: 3, MaxSeqs: 1}, Persons: 3, Reps: 2, Against: "all", NonPrivate: np,
		Rows: []TrajDBUtilityRow{{Mechanism: "prefix", Epsilon: 1, Mean: mean, Uniform: uni, NotBetter: []string{"trip_jsd"}}},
	}}
	s := text(t, func(w *strings.Builder) error { return o.WriteText(w) })
	wantLines(t, s, g.String()+"; 3 persons, bounds 3 cells x 1 trajectories, 2 reps, against all",
		"prefix  1", "0.250 (uni   0.500)", "no: trip_jsd", "non-private: query_are 0.125", "wrote a.svg, b.json")
}

func TestChapter3ReportWriteText(t *testing.T) {
	o := &Chapter3Report{Chapter3Result: &Chapter3Result{Summary: []string{"first finding", "second finding"},
		QIAttack: []*trajdb.QIAttackReport{{All: trajdb.QIAttackRates{Advantage: 0.25}}, {All: trajdb.QIAttackRates{Advantage: 0.625}}}},
		Files: []string{"x.json"}}
	s := text(t, func(w *strings.Builder) error { return o.WriteText(w) })
	wantLines(t, s, "first finding\nsecond finding\n", "advantage measured: 0.625", "wrote [x.json]")
}

func TestThesisWriteText(t *testing.T) {
	res := &ThesisResult{Files: []string{"results.json"},
		Fig51: []Fig51Row{{Epsilon: 0.75, GRR: 0.9}, {Epsilon: 1, GRR: 0.12282, Thm52: 0.42011}},
		Fig53: []Fig53Row{{Epsilon: 2, Prop513: 0.5, Thm515: 0.25, OUE: 0.125}}}
	s := text(t, func(w *strings.Builder) error { return res.WriteText(w) })
	wantLines(t, s, "Fig 5.1 (m = 11):", "1       0.12282", "0.42011", "Fig 5.3", "eps 2    Prop 5.13 0.50000  Thm 5.15 0.25000  OUE 0.12500", "wrote results.json")
	if strings.Contains(s, "0.75") {
		t.Errorf("an epsilon the thesis does not quote is shown:\n%s", s)
	}
	ex := &Example37Result{Summary: []string{"the attack inverts the centroid"}, RecoveredError: 0, RecoveredErrorCorrect: 3.5, Files: []string{"ex3_7.svg"}}
	s = text(t, func(w *strings.Builder) error { return ex.WriteText(w) })
	wantLines(t, s, "the attack inverts the centroid\n", "recovered_error 0 (flawed), recovered_error_correct 3.5 (corrected)", "wrote ex3_7.svg")
}

func TestPredictiveWriteText(t *testing.T) {
	m := PredictiveMetrics{MeanError: 512, Alpha90: 1024, PointsCovered: 30.25, PredictionRate: 0.5, TestShare: 0.25}
	p := Predictive{PredictiveCaseStudyResult: &PredictiveCaseStudyResult{Traces: 7,
		FixedRate: []PredictiveRow{{P: 0.1, IM: m, PM: m, PMSkip: m}}}}
	s := text(t, func(w *strings.Builder) error { return p.WriteText(w) })
	wantLines(t, s, "fixed rate (3.3 % of ε per query): 7 traces", " 0.1", "  512/ 1024/ 30.2", "0.50/0.25", "fixed utility (α(0.9) = 3 km): 7 traces")
}

// TestRunCIPCompareInputs: the comparison reads its prior and traces
// before computing anything, and a missing one is an error that names it.
func TestRunCIPCompareInputs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "prior.json")
	if _, err := RunCIPCompare(CIPCompareOptions{LEffs: []float64{1}, PriorFile: missing}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "prior") {
		t.Errorf("missing prior: %v", err)
	}
	if _, err := RunCIPCompare(CIPCompareOptions{LEffs: []float64{1}, Data: t.TempDir(), User: "000", Windows: 1}); err == nil || !strings.Contains(err.Error(), "000") {
		t.Errorf("missing user: %v", err)
	}
}
