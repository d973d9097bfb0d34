package repro

import (
	"testing"

	"github.com/tracepriv/tracepriv/trajdb"
)

// TestMetricRows checks the table rows: one per metric, a value per
// Metrics, diameter_jsd only when every one has it.
func TestMetricRows(t *testing.T) {
	d := 0.5
	a := &trajdb.Metrics{QueryARE: 1, DiameterJSD: &d, KendallTau: 0.5}
	b := &trajdb.Metrics{QueryARE: 2, DiameterJSD: &d, KendallTau: -0.5}
	rows := MetricRows(a, b)
	scores := a.Scores()
	if len(rows) != len(scores) || rows[0].Name != "query_are" || rows[0].Values[0] != 1 || rows[0].Values[1] != 2 {
		t.Fatalf("rows %+v", rows)
	}
	for i, sc := range scores {
		if rows[i].Name != sc.Name {
			t.Fatalf("row %d is %s, metric %s", i, rows[i].Name, sc.Name)
		}
	}
	b.DiameterJSD = nil
	rows = MetricRows(a, b)
	if len(rows) != len(scores)-1 {
		t.Fatalf("with one diameter missing: %+v", rows)
	}
	for _, r := range rows {
		if r.Name == "diameter_jsd" || len(r.Values) != 2 {
			t.Errorf("row %+v", r)
		}
	}
	if MetricRows() != nil {
		t.Error("no metrics gives rows")
	}
}
