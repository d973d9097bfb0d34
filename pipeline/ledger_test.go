package pipeline

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/sanitize"
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
		return charged(t, ledger, in, out, nil, func(o *SanitizeOptions) budget.Request {
			return budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Budget: budgetB, Command: "test", Release: "pipeline " + filepath.Base(out)}
		})
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

// TestSanitizeSettlesKilledRun: the next run of a release settles, before
// it charges, what a run killed between its charge and its settlement
// left pending (here made by hand: a finished release whose charges are
// put back pending, manifest removed, as a kill leaves them): a person
// whose certificate is under the output is settled to its epsilon, one
// with a file but no certificate stays at the target (an upper bound), one
// with nothing there is undone; the run says so, keeps the release of the
// person whose group landed whole (resumed: neither drawn nor charged
// again), and releases and charges the others. Before issue 31 item 3 (a
// random key per run) all three were left pending; before resuming, 001
// was released and charged again.
func TestSanitizeSettlesKilledRun(t *testing.T) {
	in := copyGeoLife(t, "001/20081027235802.plt", "003/20081025182454.plt", "004/20081024155859.plt")
	ledger := filepath.Join(t.TempDir(), "ledger.json")
	out := filepath.Join(t.TempDir(), "r")
	request := func(o *SanitizeOptions) budget.Request {
		key, err := o.ReleaseKey()
		if err != nil {
			t.Fatal(err)
		}
		return budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Command: "test", Output: out, Release: key}
	}
	release := func() (*SanitizeResult, string, error) {
		var notes strings.Builder
		res, err := charged(t, ledger, in, out, &notes, request)
		return res, notes.String(), err
	}
	first, _, err := release()
	if err != nil {
		t.Fatal(err)
	}
	certified := map[string]float64{}
	for _, p := range first.Manifest.Persons {
		certified[p.UID] = p.EpsilonMax
	}
	if len(certified) != 3 {
		t.Fatalf("first release: %d people", len(certified))
	}
	// A kill after 001's group landed whole, while 003's was being
	// written (its file, not its certificate) and before 004's: every
	// charge pending at the target, no manifest, the marker there.
	f, err := budget.Open(ledger, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(in, out, 0)
	o.Seeded = false
	req := request(&o)
	key := req.Release
	if err := budget.NewAdmission(f, req).Charge("", map[string]float64{"001": 1, "003": 1, "004": 1}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{sanitize.ManifestName, "certificates/003" + sanitize.CertificateSuffix, "certificates/004" + sanitize.CertificateSuffix, "004"} {
		if err := os.RemoveAll(filepath.Join(out, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, ReleaseMarker), []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second, notes, err := release()
	if err != nil {
		t.Fatal(err)
	}
	st := second.Settlement
	if st == nil || len(st.Settled) != 1 || st.Settled["001"] != certified["001"] || !slices.Equal(st.Kept, []string{"003"}) || !slices.Equal(st.Undone, []string{"004"}) ||
		!slices.Equal(st.Resumed, []string{"001"}) {
		t.Fatalf("settlement %+v, want 001 settled to %v and resumed, 003 kept, 004 undone", st, certified["001"])
	}
	// 001's release is kept as it landed: listed as the first run listed
	// it, not drawn or charged again.
	if second.Manifest.Resumed != 1 || !slices.ContainsFunc(second.Manifest.Persons, func(p sanitize.Released) bool {
		return p.UID == "001" && slices.ContainsFunc(first.Manifest.Persons, func(q sanitize.Released) bool {
			return q.UID == "001" && slices.Equal(p.Files, q.Files) && p.Certificate == q.Certificate && p.Points == q.Points && p.EpsilonMax == q.EpsilonMax
		})
	}) {
		t.Errorf("resumed %d, persons %+v: want 001's group kept as the first run listed it %+v", second.Manifest.Resumed, second.Manifest.Persons, first.Manifest.Persons)
	}
	if !strings.Contains(notes, "1 settled to the certificates it wrote, 1 undone") || !strings.Contains(notes, "1 kept at the target epsilon") {
		t.Errorf("notes: %q", notes)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range second.Manifest.Persons {
		// The first release, the killed one's leftover, this one (001's
		// kept, not charged again).
		want := certified[p.UID] + map[string]float64{"001": certified["001"], "003": 1, "004": 0}[p.UID] + map[bool]float64{true: 0, false: p.EpsilonMax}[p.UID == "001"]
		if a := l.Account(p.UID); a == nil || math.Abs(a.Spent-want) > 1e-9 {
			t.Errorf("%s: account %+v, want spent %v", p.UID, a, want)
		}
	}
	if p := l.PendingReleases(""); len(p) != 0 {
		t.Errorf("pending after the next run: %v", p)
	}
}

// charged releases in into out, unseeded, charged in the ledger file at
// path by an Admission of the request req gives for the options, telling
// notes what the admission did.
func charged(t *testing.T, path, in, out string, notes io.Writer, req func(*SanitizeOptions) budget.Request) (*SanitizeResult, error) {
	t.Helper()
	f, err := budget.Open(path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := testOptions(in, out, 0)
	o.Seeded = false
	o.Admission, o.Notes = budget.NewAdmission(f, req(&o)), notes
	return Sanitize(context.Background(), o)
}
