package repro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/trajdb"
)

// Issue 32: the evaluate plot's uniform baseline no longer flattens the
// release: every bar's value is written on it (and the count-query panel
// is on a log axis, viz.TestBarsLogYKeepsSmallBarsReadable).
func TestPlotMetricsReadable(t *testing.T) {
	rel := &trajdb.Metrics{QueryARE: 0.5, PaperARE: 0.25, TripJSD: 0.1, LengthJSD: 0.2, PatternF1: 0.9, KendallTau: 0.8, TopKPrecision: 0.7}
	uni := &trajdb.Metrics{QueryARE: 500, PaperARE: 40, TripJSD: 0.9, LengthJSD: 0.6, PatternF1: 0.1, KendallTau: 0, TopKPrecision: 0.1}
	real := &trajdb.Metrics{PatternF1: 1, KendallTau: 1, TopKPrecision: 1}
	path := filepath.Join(t.TempDir(), "m.svg")
	if err := PlotMetrics(path, "released vs real", []string{"released", "uniform", "non-private"}, []*trajdb.Metrics{rel, uni, real}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">0.5<", ">500<", ">0.25<", ">40<"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("evaluate's plot does not write %s beside its bar", want)
		}
	}
}
