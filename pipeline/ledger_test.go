package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
)

// TestSanitizeLedger: the pipeline follows the one admission policy: its
// people are charged their certified epsilon once the job has written the
// manifest, a person whose file failed is not charged, and a release over
// budget is refused before the job with the ledger byte-identical.
func TestSanitizeLedger(t *testing.T) {
	in := copyGeoLife(t, "000/20081023025304.plt", "004/20081024015454.plt")
	os.MkdirAll(filepath.Join(in, "bad"), 0o755)
	if err := os.WriteFile(filepath.Join(in, "bad", "cut.geojson"), []byte(`{"type": "Feature", "geometry": {"type": "LineStr`), 0o644); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(t.TempDir(), "ledger.json")
	release := func(out string, budgetB float64) (*SanitizeResult, error) {
		f, err := budget.Open(ledger, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		o := testOptions(in, out, 0)
		o.Seeded = false
		o.Admission = budget.NewAdmission(f, budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: budgetB, Command: "test", Release: "pipeline " + filepath.Base(out)})
		return Sanitize(context.Background(), o)
	}
	res, err := release(filepath.Join(t.TempDir(), "r1"), 1.5)
	if err != nil {
		t.Fatal(err)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Manifest.Persons) != 2 || len(l.Accounts) != 2 || len(l.Charges) != 2 || res.Manifest.Ledger != "ledger.json" {
		t.Fatalf("manifest people %d (ledger %q), ledger accounts %d, charges %d: want 2 each", len(res.Manifest.Persons), res.Manifest.Ledger, len(l.Accounts), len(l.Charges))
	}
	for _, p := range res.Manifest.Persons {
		a := l.Account(p.UID)
		if a == nil || a.Spent != p.EpsilonMax || len(l.Pending("pipeline r1")) != 0 {
			t.Errorf("person %s: account %+v, want settled to the certified %v", p.UID, a, p.EpsilonMax)
		}
	}
	before, _ := os.ReadFile(ledger)
	out2 := filepath.Join(t.TempDir(), "r2")
	if _, err := release(out2, 1.5); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("second release past the budget: %v", err)
	}
	if after, _ := os.ReadFile(ledger); !bytes.Equal(before, after) {
		t.Error("a refused release changed the ledger")
	}
	if _, err := os.Stat(filepath.Join(out2, "manifest.json")); err == nil {
		t.Error("a refused release ran")
	}
}
