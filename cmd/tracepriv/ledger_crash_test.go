package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/sample"
)

// TestLedgerOneBudgetAcrossMechanisms: a person's CIP release and geoind
// sessions fill one account, so the budget set by the CIP run bounds the
// geoind sessions too (issue 31: one --budget bounds both).
func TestLedgerOneBudgetAcrossMechanisms(t *testing.T) {
	dir, in, prior := samplePaths(t)
	ledger := filepath.Join(dir, "ledger.json")
	if err := ledgerSanitize(t, in, prior, filepath.Join(dir, "a.plt"), ledger, "3"); err != nil {
		t.Fatal(err)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	s := l.Account("alice").Spent
	// A geoind session charged c = 0.75 (3 - s) >= 1.5 fits once, not twice:
	// above 2/lambda = 1 the charge is e = eps (100 + sqrt 2).
	c := 0.75 * (3 - s)
	eps := c / (100 + math.Sqrt2)
	keys := filepath.Join(dir, "keys")
	q := func(state string) error {
		_, err := geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, state), "--key-dir", keys, "--lat", "39.98", "--lon", "116.32",
			"--time", "2008-10-24T02:09:59Z", "-q", "--uid", "alice", "--ledger", ledger, "--origin", "39.9,116.4", "--epsilon", strconvF(eps))
		return err
	}
	if err := q("s1.json"); err != nil {
		t.Fatalf("first geoind session within the one budget: %v", err)
	}
	l, _ = budget.Read(ledger)
	if a := l.Account("alice"); len(l.Accounts) != 1 || math.Abs(a.Spent-(s+c)) > 1e-9 || l.Spent("alice", budget.GeoInd) == 0 {
		t.Fatalf("after cip and geoind: %+v, want one account, spent %v", l.Accounts, s+c)
	}
	before := mustRead(t, ledger)
	if err := q("s2.json"); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("second geoind session past the budget set by sanitize: %v, want refused", err)
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("the refused session changed the ledger")
	}
}

func strconvF(v float64) string { b, _ := json.Marshal(v); return string(b) }

// TestLedgerDefaultOffSeeded: without --ledger a private release is
// charged in the user configuration directory's ledger and the
// certificate names it; --no-ledger and --seed charge nothing and the
// certificate says so.
func TestLedgerDefaultOffSeeded(t *testing.T) {
	dir, in, prior := samplePaths(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	def := filepath.Join(dir, "config", "tracepriv", "ledger.json")
	rel := func(out string, extra ...string) map[string]any {
		t.Helper()
		args := append([]string{"sanitize", "--in", in, "--out", filepath.Join(dir, out), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--uid", "carol", "-q"}, extra...)
		if _, _, err := run(t, args...); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		return readJSON(t, filepath.Join(dir, out+".cert.json"))
	}
	if c := rel("a.plt"); c["ledger"] != "ledger.json" {
		t.Errorf("default ledger: certificate says %v", c["ledger"])
	}
	l, err := budget.Read(def)
	if err != nil || l.Account("carol") == nil || l.Account("carol").Budget != nil {
		t.Fatalf("default ledger %s: %v %+v, want carol charged, no budget", def, err, l)
	}
	before := mustRead(t, def)
	if c := rel("b.plt", "--no-ledger"); c["ledger"] != budget.Off {
		t.Errorf("--no-ledger: certificate says %v", c["ledger"])
	}
	if c := rel("c.plt", "--seed", "1"); c["ledger"] != budget.Seeded {
		t.Errorf("--seed: certificate says %v", c["ledger"])
	}
	if !bytes.Equal(before, mustRead(t, def)) {
		t.Error("an unrecorded or seeded release changed the default ledger")
	}
}

// corpusDir writes n people p0..p(n-1), each the sample trace, under
// dir/in, and returns it.
func corpusDir(t *testing.T, dir string, n int) string {
	t.Helper()
	in := filepath.Join(dir, "in")
	for i := range n {
		p := filepath.Join(in, "p"+string(rune('0'+i)), "t.plt")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, sample.PLT, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// TestLedgerCorpusRefusedOutChargesNothing: a corpus release refused
// because --out holds another release (issue 31: it charged 1 of 3 each
// time, and three tries exhausted the budget) leaves the ledger
// byte-identical, however often it is tried.
func TestLedgerCorpusRefusedOutChargesNothing(t *testing.T) {
	dir, _, prior := samplePaths(t)
	in := corpusDir(t, dir, 2)
	ledger, out := filepath.Join(dir, "ledger.json"), filepath.Join(dir, "out")
	corpus := func(eps string) error {
		_, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", eps, "--lambda", "2", "--radius", "100", "-q",
			"--corpus", "--ledger", ledger, "--budget", "3", "--allow-prior-overlap")
		return err
	}
	if err := corpus("1"); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, ledger)
	for i := range 3 {
		err := corpus("0.5")
		if err == nil || !strings.Contains(err.Error(), "other options") {
			t.Fatalf("try %d into an --out of another release: %v, want refused", i+1, err)
		}
		if strings.Contains(err.Error(), "charged in") || strings.Contains(err.Error(), "without charging them again") {
			t.Errorf("the refusal says people stay charged: %v", err)
		}
		if !bytes.Equal(before, mustRead(t, ledger)) {
			t.Fatalf("try %d: a refused corpus release changed the ledger", i+1)
		}
	}
}

// TestLedgerCorpusUnitFailsUncharged: a group of people whose files
// cannot be written (a file stands where their output folder goes) is
// not charged; the others are charged their certified epsilon; a corpus
// whose --out cannot be created at all charges nothing.
func TestLedgerCorpusUnitFailsUncharged(t *testing.T) {
	dir, _, prior := samplePaths(t)
	in := corpusDir(t, dir, 3)
	ledger, out := filepath.Join(dir, "ledger.json"), filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	if err := os.WriteFile(filepath.Join(out, "p1"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
		"--corpus", "--ledger", ledger, "--allow-prior-overlap")
	if err == nil || !strings.Contains(err.Error(), "could not be released") {
		t.Fatalf("corpus with an unwritable group: %v", err)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	m := readJSON(t, filepath.Join(out, "manifest.json"))
	certified := map[string]float64{}
	for _, p := range m["persons"].([]any) {
		certified[p.(map[string]any)["uid"].(string)] = p.(map[string]any)["epsilon_max"].(float64)
	}
	if l.Account("p1") != nil || len(certified) != 2 || len(l.Charges) != 2 {
		t.Fatalf("ledger %+v, released %v: want p0 and p2 charged, p1 not", l, certified)
	}
	for _, c := range l.Charges {
		if c.Pending || c.Epsilon != certified[c.UID] {
			t.Errorf("charge %+v: want settled to the certified %v", c, certified[c.UID])
		}
	}
	// An --out that cannot be created: nothing charged.
	before := mustRead(t, ledger)
	blocked := filepath.Join(dir, "blocked")
	os.WriteFile(blocked, nil, 0o644)
	_, _, err = run(t, "sanitize", "--in", in, "--out", filepath.Join(blocked, "out"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
		"--corpus", "--ledger", ledger, "--allow-prior-overlap")
	if err == nil {
		t.Fatal("a release into an impossible --out succeeded")
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("a corpus release that wrote nothing changed the ledger")
	}
}

// TestLedgerCorpusSIGKILL: a corpus release killed (SIGKILL) after its
// first group of people landed has charged the landed ones their certified
// epsilon and at most the one group being drawn (pending, at the target);
// the next run settles or undoes that pending charge and charges every
// person exactly what their release certified. Five GeoLife users, two
// files each (geolifeSubset: the smallest and one of 700 rows or more, so
// that a group takes long enough to be killed in): the ledger's rules do
// not depend on how many files a person has, and every file of the users
// cost the resumed run three times as much.
func TestLedgerCorpusSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary on GeoLife users")
	}
	users, _ := geolife(t)
	dir, _, prior := samplePaths(t)
	in, dirs, _ := geolifeSubset(t, min(5, len(users)))
	n := len(dirs)
	ledger, out := filepath.Join(dir, "ledger.json"), filepath.Join(dir, "out")
	args := []string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
		"--corpus", "--ledger", ledger, "--budget", "10", "--workers", "1", "--allow-prior-overlap"}
	// 50 ms more: into the next group's drawing, if any.
	landed := killAfterFirstUnit(t, out, 50*time.Millisecond, args)
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	// One worker: at most one group was in flight, drawn or landed but
	// not yet settled; it is pending at the target. Every other charge is
	// a journalled person's, settled to its certified epsilon; nobody else
	// is charged.
	pending, charged := map[string]bool{}, map[string]bool{}
	for _, c := range l.Charges {
		charged[c.UID] = true
		switch {
		case c.Pending:
			pending[c.UID] = true
			if c.NativeEpsilon != 1 {
				t.Errorf("pending charge %+v: want the target 1", c)
			}
		case landed[c.UID] == 0 || c.Epsilon != landed[c.UID]:
			t.Errorf("settled charge %+v: want only landed people, at their certified %v", c, landed[c.UID])
		}
	}
	for uid := range landed {
		if !charged[uid] {
			t.Errorf("person %s landed but is not charged", uid)
		}
	}
	if len(pending) > 1 || len(l.Charges) != len(charged) {
		t.Fatalf("after the kill: %d charges, %d landed, %d pending: want one charge each, at most one pending\n%+v", len(l.Charges), len(landed), len(pending), l.Charges)
	}
	t.Logf("killed with %d people journalled, %d pending", len(landed), len(pending))
	var pendingUIDs []string
	for uid := range pending {
		pendingUIDs = append(pendingUIDs, uid)
	}
	killedLanded := landedFiles(out, pendingUIDs, landed)
	// The next run resumes, settles, and charges the rest.
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, stderr)
	}
	l, err = budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	m := readJSON(t, filepath.Join(out, "manifest.json"))
	persons := m["persons"].([]any)
	if len(persons) != n {
		t.Fatalf("resumed manifest lists %d people, want %d", len(persons), n)
	}
	for _, p := range persons {
		uid, eps := p.(map[string]any)["uid"].(string), p.(map[string]any)["epsilon_max"].(float64)
		var got []budget.Charge
		for _, c := range l.Charges {
			if c.UID == uid {
				got = append(got, c)
			}
		}
		want := 1
		if killedLanded[uid] {
			want = 2 // its killed release landed, and it was drawn again
		}
		if len(got) != want || got[len(got)-1].Pending || got[len(got)-1].Epsilon != eps {
			t.Errorf("person %s: charges %+v, want %d settled, the last at the certified %v", uid, got, want, eps)
		}
	}
}

// TestLedgerGeoindNothingWrittenUncharged: a geoind sanitize whose budget
// runs out before the last point, without --allow-partial, writes nothing
// and so charges nothing: the ledger is byte-identical.
func TestLedgerGeoindNothingWrittenUncharged(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "000", "in.plt")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(dir, "ledger.json")
	// Someone else's charge, so that the file exists before.
	if _, err := geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, "s.json"), "--key-dir", filepath.Join(dir, "keys"), "--lat", "39.98", "--lon", "116.32",
		"--origin", "39.9,116.4", "-q", "--uid", "other", "--ledger", ledger); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, ledger)
	out := filepath.Join(dir, "p.csv")
	_, err := geoindRun(t, "geoind", "sanitize", "--in", in, "--out", out, "--origin", "39.9042,116.4074", "--rate", "0.5", "-q", "--ledger", ledger)
	if err == nil || !strings.Contains(err.Error(), "allow-partial") {
		t.Fatalf("a release whose budget ran out without --allow-partial: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatalf("written: %v", err)
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Errorf("a release that wrote nothing changed the ledger (%v)", err)
	}
}

// TestLedgerFileLeftoverSettled: a single-file release killed between its
// charge and its files leaves a pending charge at the target; the next
// release to the same output removes it when nothing landed there, and
// settles it to the certificate's epsilon when the files are there.
func TestLedgerFileLeftoverSettled(t *testing.T) {
	dir, in, prior := samplePaths(t)
	ledger := filepath.Join(dir, "ledger.json")
	out := filepath.Join(dir, "a.plt")
	abs, _ := filepath.Abs(out)
	// What a killed run leaves: a pending charge keyed by its output.
	leave := func() {
		f, err := budget.Open(ledger, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Charge(budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Command: "killed", Pending: true,
			Release: budget.ReleaseKey("sanitize file", abs) + " killed", Epsilon: map[string]float64{"alice": 1}}); err != nil {
			t.Fatal(err)
		}
	}
	leave()
	if err := ledgerSanitize(t, in, prior, out, ledger, "5"); err != nil {
		t.Fatal(err)
	}
	l, _ := budget.Read(ledger)
	cert := readJSON(t, out+".cert.json")["persons"].([]any)[0].(map[string]any)["epsilon_max"].(float64)
	if len(l.Charges) != 1 || l.Charges[0].Pending || l.Charges[0].Epsilon != cert {
		t.Fatalf("nothing of the killed release landed: charges %+v, want only this release's, settled to %v", l.Charges, cert)
	}
	// Killed after its files landed (they are a.plt and its certificate):
	// the next release to a.plt (--force) settles it to that certificate.
	leave()
	if err := ledgerSanitize(t, in, prior, out, ledger, "5", "--force"); err != nil {
		t.Fatal(err)
	}
	l, _ = budget.Read(ledger)
	if len(l.Charges) != 3 || l.Charges[1].Pending || l.Charges[1].Epsilon != cert || l.Charges[2].Pending {
		t.Fatalf("the killed release's files were there: charges %+v, want it settled to %v and this one charged", l.Charges, cert)
	}
}
