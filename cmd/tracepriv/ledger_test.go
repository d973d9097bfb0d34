package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/sample"
)

// ledgerSanitize runs sanitize on the sample trace as person alice,
// charging ledger, and returns the error.
func ledgerSanitize(t *testing.T, in, prior, out, ledger, budgetB string, extra ...string) error {
	t.Helper()
	args := append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100",
		"--uid", "alice", "--ledger", ledger, "--budget", budgetB, "-q"}, extra...)
	_, _, err := run(t, args...)
	return err
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLedgerSanitizeComposes: two releases of one person add up in the
// ledger; the third, over --budget, is refused with nothing written and
// the ledger unchanged; a larger --budget needs --raise-budget.
func TestLedgerSanitizeComposes(t *testing.T) {
	dir, in, prior := samplePaths(t)
	ledger := filepath.Join(dir, "ledger.json")
	for i, out := range []string{"a.plt", "b.plt"} {
		if err := ledgerSanitize(t, in, prior, filepath.Join(dir, out), ledger, "2.5"); err != nil {
			t.Fatalf("release %d: %v", i+1, err)
		}
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	a := l.Account("alice")
	if a == nil || a.Spent < 1.99 || a.Spent > 2 || a.Budget == nil || *a.Budget != 2.5 || len(l.Charges) != 2 {
		t.Fatalf("after two releases: account %+v, %d charges; want about 2 of 2.5 spent", a, len(l.Charges))
	}
	for _, c := range l.Charges {
		if strings.ContainsRune(c.Output, os.PathSeparator) || c.Command != "tracepriv sanitize" {
			t.Errorf("charge %+v: want the command and the output's base name", c)
		}
	}
	before := mustRead(t, ledger)
	out3 := filepath.Join(dir, "c.plt")
	err = ledgerSanitize(t, in, prior, out3, ledger, "2.5")
	if err == nil || !strings.Contains(err.Error(), "over budget") || !strings.Contains(err.Error(), ledger) {
		t.Fatalf("third release: %v, want refused naming the ledger", err)
	}
	for _, p := range []string{out3, out3 + ".cert.json"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written by a refused release", p)
		}
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("a refused release changed the ledger")
	}
	// A larger budget is a decision.
	if err := ledgerSanitize(t, in, prior, out3, ledger, "5"); err == nil || !strings.Contains(err.Error(), "--raise-budget") {
		t.Fatalf("larger --budget without --raise-budget: %v", err)
	}
	if err := ledgerSanitize(t, in, prior, out3, ledger, "5", "--raise-budget"); err != nil {
		t.Fatalf("--raise-budget: %v", err)
	}
	// The budget, once set (raised to 5; 3 spent), holds in runs without
	// --budget: two more fit, the third is refused.
	for i, out := range []string{"d1.plt", "d2.plt", "d3.plt"} {
		before = mustRead(t, ledger)
		_, _, err := run(t, "sanitize", "--in", in, "--out", filepath.Join(dir, out), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100",
			"--uid", "alice", "--ledger", ledger, "-q")
		switch {
		case i < 2 && err != nil:
			t.Fatalf("run %d without --budget within the recorded one: %v", i+1, err)
		case i == 2 && (err == nil || !strings.Contains(err.Error(), "over budget")):
			t.Fatalf("a run without --budget past the recorded budget: %v", err)
		case i == 2 && !bytes.Equal(before, mustRead(t, ledger)):
			t.Error("a refused release changed the ledger")
		}
	}
	// --no-ledger contradicts --ledger and --budget.
	if _, _, err := run(t, "sanitize", "--in", in, "--out", filepath.Join(dir, "d.plt"), "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--ledger", ledger, "--no-ledger"); err == nil || !strings.Contains(err.Error(), "--no-ledger") {
		t.Errorf("--ledger with --no-ledger: %v", err)
	}
}

// TestLedgerConcurrentSanitize: four releases of one person race for a
// budget that pays for two; exactly two are written.
func TestLedgerConcurrentSanitize(t *testing.T) {
	dir, in, prior := samplePaths(t)
	ledger := filepath.Join(dir, "ledger.json")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ledgerSanitize(t, in, prior, filepath.Join(dir, "out"+string(rune('0'+i))+".plt"), ledger, "2")
		}()
	}
	wg.Wait()
	ok, written := 0, 0
	for i, err := range errs {
		if err == nil {
			ok++
		} else if !strings.Contains(err.Error(), "over budget") {
			t.Errorf("release %d: %v", i, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "out"+string(rune('0'+i))+".plt")); err == nil {
			written++
		}
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 2 || written != 2 || len(l.Charges) != 2 || l.Account("alice").Spent > 2 {
		t.Fatalf("%d releases succeeded, %d written, %d charges, spent %v: want 2, 2, 2, <= 2", ok, written, len(l.Charges), l.Account("alice").Spent)
	}
}

// TestLedgerDamaged: a corrupted ledger is refused with an error naming
// it, and nothing is released.
func TestLedgerDamaged(t *testing.T) {
	dir, in, prior := samplePaths(t)
	ledger := filepath.Join(dir, "ledger.json")
	if err := ledgerSanitize(t, in, prior, filepath.Join(dir, "a.plt"), ledger, "3"); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, ledger)
	os.WriteFile(ledger, b[:len(b)-40], 0o644)
	out := filepath.Join(dir, "b.plt")
	err := ledgerSanitize(t, in, prior, out, ledger, "3")
	if err == nil || !strings.Contains(err.Error(), ledger) || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("damaged ledger: %v, want an error naming %s and the fix", err, ledger)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("released with a damaged ledger")
	}
}

// TestLedgerGeoindNewStateDoesNotReset: a person's geoind sessions are
// charged once each, in the default ledger when no --ledger is given; more
// queries on a session are not charged again, a session at a new --state
// path is, and the one past the budget (set once, in the first run) is
// refused with no state written.
func TestLedgerGeoindNewStateDoesNotReset(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	ledger, keys := filepath.Join(dir, "config", "tracepriv", "ledger.json"), filepath.Join(dir, "keys")
	q := func(state, tm string, extra ...string) error {
		args := append([]string{"geoind", "query", "--state", filepath.Join(dir, state), "--key-dir", keys, "--lat", "39.98", "--lon", "116.32",
			"--time", tm, "-q", "--uid", "bob"}, extra...)
		_, err := geoindRun(t, args...)
		return err
	}
	cfg := []string{"--origin", "39.9,116.4", "--epsilon", "0.023"}
	// One session at 0.023 per metre on the 1 m grid, at order 2 within
	// 100 m: e = 0.023 (100 + sqrt 2) = 2.3325 (above 2/lambda, so e).
	session := 0.023 * (100 + math.Sqrt2)
	spent := func() float64 {
		l, err := budget.Read(ledger)
		if err != nil {
			t.Fatal(err)
		}
		return l.Account("bob").Spent
	}
	if err := q("s1.json", "2008-10-24T02:09:59Z", append(cfg, "--budget", "5")...); err != nil {
		t.Fatal(err)
	}
	if err := q("s1.json", "2008-10-24T02:10:59Z"); err != nil {
		t.Fatal(err)
	}
	if s := spent(); math.Abs(s-session) > 1e-12 {
		t.Fatalf("one session, two queries: spent %v, want %v", s, session)
	}
	if err := q("s2.json", "2008-10-24T02:11:59Z", cfg...); err != nil {
		t.Fatalf("second session: %v", err)
	}
	if s := spent(); math.Abs(s-2*session) > 1e-12 {
		t.Fatalf("two sessions: spent %v, want %v", s, 2*session)
	}
	before := mustRead(t, ledger)
	err := q("s3.json", "2008-10-24T02:12:59Z", cfg...)
	if err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third session, at a new --state without --ledger or --budget: %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s3.json")); err == nil {
		t.Error("a refused session wrote its state")
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("a refused session changed the ledger")
	}
	// The first session goes on without a new charge.
	if err := q("s1.json", "2008-10-24T02:13:59Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := geoindRun(t, "geoind", "query", "--state", filepath.Join(dir, "s4.json"), "--key-dir", keys, "--lat", "39.98", "--lon", "116.32",
		"--origin", "39.9,116.4"); err == nil || !strings.Contains(err.Error(), "--uid") {
		t.Errorf("a private query without --uid: %v", err)
	}
	// A seeded session is not private and not charged.
	if err := q("s5.json", "2008-10-24T02:14:59Z", append(cfg, "--seed", "3")...); err != nil {
		t.Fatalf("seeded session: %v", err)
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("a seeded session was charged")
	}
}

// TestLedgerGeoindSanitize: geoind sanitize charges each person its
// session budget in the one currency; a release past --budget is refused
// before writing, and a seeded one is not charged. --allow-partial: the
// fixed rate, unseeded, can run out before the last point (one run in
// five), which charges the session all the same.
func TestLedgerGeoindSanitize(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "000", "in.plt")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(dir, "ledger.json")
	gs := func(out string, extra ...string) error {
		_, err := geoindRun(t, append([]string{"geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, out), "--origin", "39.9042,116.4074",
			"--rate", "0.0035", "--allow-partial", "-q", "--ledger", ledger, "--budget", "5"}, extra...)...)
		return err
	}
	for _, out := range []string{"a.csv", "b.csv"} {
		if err := gs(out); err != nil {
			t.Fatal(err)
		}
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	// ln(10)/100 per metre on the 1 m grid within 100 m: e = 2.3351.
	session := math.Ln10 / 100 * (100 + math.Sqrt2)
	if a := l.Account("000"); a == nil || math.Abs(a.Spent-2*session) > 1e-12 || l.Charges[0].NativeEpsilon != math.Ln10/100 {
		t.Fatalf("person 000 (from its directory): %+v, want 2 × %v spent", a, session)
	}
	if cert := readJSON(t, filepath.Join(dir, "a.csv.cert.json")); cert["ledger"] != "ledger.json" {
		t.Errorf("certificate ledger %v, want ledger.json", cert["ledger"])
	}
	before := mustRead(t, ledger)
	if err := gs("c.csv"); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.csv")); err == nil {
		t.Error("refused release written")
	}
	if err := gs("d.csv", "--seed", "2"); err != nil {
		t.Fatalf("seeded release: %v", err)
	}
	if !bytes.Equal(before, mustRead(t, ledger)) {
		t.Error("a refused or seeded release changed the ledger")
	}
	if cert := readJSON(t, filepath.Join(dir, "d.csv.cert.json")); cert["ledger"] != budget.Seeded {
		t.Errorf("seeded certificate ledger %v", cert["ledger"])
	}
}

// TestLedgerCorpusNestedPerson: in a corpus, a person's subfolders are
// that person (trace.PersonRule): files under 000/Trajectory and
// 000/Trajectory/sub are released and charged as one person, charged the
// target before the run and settled to the certified epsilon after it.
func TestLedgerCorpusNestedPerson(t *testing.T) {
	dir, _, prior := samplePaths(t)
	lines := strings.SplitAfter(string(sample.PLT), "\n")
	head, rows := strings.Join(lines[:6], ""), lines[6:]
	half := len(rows) / 2
	for path, body := range map[string]string{
		"Data/000/Trajectory/a.plt":     head + strings.Join(rows[:half], ""),
		"Data/000/Trajectory/sub/b.plt": head + strings.Join(rows[half:], ""),
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ledger := filepath.Join(dir, "ledger.json")
	corpus := func(out string) (map[string]any, error) {
		stdout, _, err := run(t, "sanitize", "--in", filepath.Join(dir, "Data"), "--out", filepath.Join(dir, out), "--prior", prior,
			"--corpus", "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q", "--ledger", ledger, "--budget", "2", "--json")
		if err != nil {
			return nil, err
		}
		return acctJSON(t, stdout), nil
	}
	m, err := corpus("r1")
	if err != nil {
		t.Fatal(err)
	}
	persons := m["persons"].([]any)
	if len(persons) != 1 || persons[0].(map[string]any)["uid"] != "000" {
		t.Fatalf("persons %v, want the one person 000", persons)
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	cert := persons[0].(map[string]any)["epsilon_max"].(float64)
	if len(l.Accounts) != 1 || l.Account("000").Spent != cert || len(l.Pending(l.Charges[0].Release)) != 0 {
		t.Fatalf("ledger %+v: want person 000 charged the certified %v, settled", l.Accounts[0], cert)
	}
	if _, err := corpus("r2"); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, err := corpus("r3"); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r3")); err == nil {
		t.Error("a refused corpus release created its output directory")
	}
}
