package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server"
)

// servedStore is a tracepriv serve on loopback over the SQLite database
// in data, stopped when the test ends.
type servedStore struct {
	t           *testing.T
	base, admin string
	data        string
}

func startServe(t *testing.T) *servedStore {
	t.Helper()
	s := &servedStore{t: t, admin: "ledger-service-admin-token-0123456789", data: t.TempDir()}
	t.Setenv("TRACEPRIV_ADMIN_TOKEN", s.admin)
	var stdout, stderr syncBuffer
	root := newRootCmd(&stdout, &stderr)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--data", s.data})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	for s.base == "" { // no deadline: go test's -timeout guards a serve that never listens
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			s.base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped before listening: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// do sends a request with bearer token tok and returns the status and
// the decoded answer.
func (s *servedStore) do(method, path, tok, body string) (int, map[string]any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	var k [16]byte
	rand.Read(k[:])
	req.Header.Set("Idempotency-Key", hex.EncodeToString(k[:]))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	var v map[string]any
	json.Unmarshal(b, &v)
	return r.StatusCode, v
}

// create creates person id with an account budget of b (order 2 within
// 100 m) and returns their token.
func (s *servedStore) create(id string, b float64) string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"id": id, "epsilon_budget": 0.023, "account": map[string]any{"epsilon_budget": b},
		"cip": map[string]any{"lambda": 2, "radius_m": 100}})
	st, v := s.do("POST", "/v1/people", s.admin, string(body))
	if st != http.StatusCreated {
		s.t.Fatalf("create %s: %d %v", id, st, v)
	}
	return v["token"].(string)
}

// chargeCIP charges a CIP release of eps drawn elsewhere, as a device
// does, and returns the status.
func (s *servedStore) chargeCIP(id, tok string, eps float64) int {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"mechanism": "cip", "epsilon": eps, "radius_m": 100, "certificate_sha256": strings.Repeat("ab", 32)})
	st, _ := s.do("POST", "/v1/people/"+id+"/charges", tok, string(body))
	return st
}

// ledgerJSON is the person's ledger as the service answers it, without
// the fields that change with the clock.
func (s *servedStore) ledgerJSON(id, tok string) map[string]any {
	s.t.Helper()
	st, v := s.do("GET", "/v1/people/"+id+"/ledger", tok, "")
	if st != http.StatusOK {
		s.t.Fatalf("ledger: %d %v", st, v)
	}
	return v
}

func spentOf(led map[string]any) float64 {
	return led["account"].(map[string]any)["spent"].(float64)
}

// TestLedgerServiceAndCLIOneBudget: one person, one budget, spent through
// the service (POST /v1/people/{id}/charges over loopback HTTP, against a
// running tracepriv serve on SQLite) and through tracepriv sanitize
// --ledger sqlite:DATA together. The release past the budget is refused
// before drawing on either path; a refused command leaves the service's
// ledger unchanged and writes nothing; a person the service does not
// know is refused; a charge that a
// run killed between its charge and its write left pending is settled by
// the next run (undone when nothing landed, settled to the certificate
// when it did). Before issue 31 the command kept its own ledger file, and
// the person had two budgets.
func TestLedgerServiceAndCLIOneBudget(t *testing.T) {
	s := startServe(t)
	tok := s.create("alice", 3)
	if st := s.chargeCIP("alice", tok, 0.5); st != http.StatusCreated {
		t.Fatalf("the service's charge: %d", st)
	}
	dir, in, prior := samplePaths(t)
	ledger := "sqlite:" + s.data
	sanitize := func(out string, extra ...string) error {
		args := append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100",
			"--uid", "alice", "--ledger", ledger, "-q"}, extra...)
		_, _, err := run(t, args...)
		return err
	}
	certified := func(out string) float64 {
		return readJSON(t, out+".cert.json")["persons"].([]any)[0].(map[string]any)["epsilon_max"].(float64)
	}
	out := filepath.Join(dir, "a.plt")
	if err := sanitize(out); err != nil {
		t.Fatal(err)
	}
	eps := certified(out)
	if cert := readJSON(t, out+".cert.json"); cert["ledger"] != "sqlite:tracepriv.db" {
		t.Errorf("certificate ledger %q, want sqlite:tracepriv.db", cert["ledger"])
	}
	if got := spentOf(s.ledgerJSON("alice", tok)); math.Abs(got-(0.5+eps)) > 1e-12 {
		t.Fatalf("the service's account after the command's release of %v: spent %v, want %v", eps, got, 0.5+eps)
	}
	// A person the service does not know: refused, naming the fix.
	_, _, err := run(t, "sanitize", "--in", in, "--out", filepath.Join(dir, "bob.plt"), "--prior", prior, "--epsilon", "0.1", "--lambda", "2", "--radius", "100",
		"--uid", "bob", "--ledger", ledger, "-q")
	if err == nil || !strings.Contains(err.Error(), "POST /v1/people") {
		t.Fatalf("an unknown person: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bob.plt")); err == nil {
		t.Error("an unknown person's release was written")
	}
	// A release into a missing folder: refused before anything is
	// charged.
	if err := sanitize(filepath.Join(dir, "gone", "c.plt"), "--epsilon", "0.4"); err == nil {
		t.Fatal("a release into a missing folder succeeded")
	}
	if got := spentOf(s.ledgerJSON("alice", tok)); math.Abs(got-(0.5+eps)) > 1e-12 {
		t.Fatalf("a refused release is charged: spent %v", got)
	}
	// What a run killed between its charge and its write leaves: a
	// pending charge keyed by its output, counted in the account. Nothing
	// landed: the next run to that output undoes it (and is charged).
	out3 := filepath.Join(dir, "c.plt")
	abs, _ := filepath.Abs(out3)
	leave := func() {
		l, err := server.OpenLedgerDB(ledger)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if err := l.Charge(budget.Request{Mechanism: budget.CIP, Lambda: 2, RadiusM: 100, Command: "killed", Pending: true,
			Release: budget.ReleaseKey("sanitize file", abs) + " killed", Epsilon: map[string]float64{"alice": 0.4}}); err != nil {
			t.Fatal(err)
		}
	}
	leave()
	if got := spentOf(s.ledgerJSON("alice", tok)); math.Abs(got-(0.9+eps)) > 1e-12 {
		t.Fatalf("the killed run's pending charge is not in the account: spent %v", got)
	}
	if err := sanitize(out3, "--epsilon", "0.4"); err != nil {
		t.Fatal(err)
	}
	eps3 := certified(out3)
	if got := spentOf(s.ledgerJSON("alice", tok)); math.Abs(got-(0.5+eps+eps3)) > 1e-12 {
		t.Fatalf("after the next run to the killed run's output: spent %v, want %v (the killed charge undone, this one settled)", got, 0.5+eps+eps3)
	}
	// Killed after its files landed: the next release to that output
	// (--force) settles the leftover to the certificate there, and is
	// charged itself.
	leave()
	if err := sanitize(out3, "--epsilon", "0.1", "--force"); err != nil {
		t.Fatal(err)
	}
	eps4 := certified(out3)
	led := s.ledgerJSON("alice", tok)
	var cli []float64
	for _, c := range led["charges"].([]any) {
		if c := c.(map[string]any); c["origin"] == "cli" {
			cli = append(cli, c["epsilon"].(float64))
		}
	}
	// The command's charges: a.plt, the undone leftover, c.plt, the
	// leftover settled to c.plt's certificate, c.plt again.
	want := []float64{eps, 0, eps3, eps3, eps4}
	spent := 0.5 + eps + 2*eps3 + eps4
	if !slicesEqual(cli, want) || math.Abs(spentOf(led)-spent) > 1e-12 {
		t.Fatalf("the command's charges %v (spent %v), want %v (spent %v)", cli, spentOf(led), want, spent)
	}
	// The rest of the budget is less than one release at epsilon 1:
	// refused on both paths, before anything is drawn, and the refused
	// command changes nothing.
	if spent+1 <= 3 {
		t.Fatalf("spent %v: the test needs less than 1 left of 3 (certified %v, %v, %v)", spent, eps, eps3, eps4)
	}
	before := s.ledgerJSON("alice", tok)
	out2 := filepath.Join(dir, "b.plt")
	if err := sanitize(out2); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("the command past the budget: %v", err)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("a refused release wrote its output")
	}
	if st := s.chargeCIP("alice", tok, 1); st != http.StatusTooManyRequests {
		t.Fatalf("the service past the budget: %d", st)
	}
	if after := s.ledgerJSON("alice", tok); !jsonEqual(before, after) {
		t.Fatalf("refused releases changed the service's ledger:\nbefore %v\nafter  %v", before, after)
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// jsonEqual compares two decoded JSON documents.
func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestLedgerServiceGeoindQuery: geoind query --ledger sqlite:DATA charges
// the service's account of the person once per session, in the account's
// currency (GeoIndCharge at its order and radius), whatever the --state;
// a session past the budget is refused with nothing written and the
// service's ledger unchanged, and no charge is left pending.
func TestLedgerServiceGeoindQuery(t *testing.T) {
	s := startServe(t)
	tok := s.create("bob", 5)
	dir := t.TempDir()
	ledger, keys := "sqlite:"+s.data, filepath.Join(dir, "keys")
	q := func(state, tm string, extra ...string) error {
		args := append([]string{"geoind", "query", "--state", filepath.Join(dir, state), "--key-dir", keys, "--lat", "39.98", "--lon", "116.32",
			"--time", tm, "-q", "--uid", "bob", "--ledger", ledger}, extra...)
		_, err := geoindRun(t, args...)
		return err
	}
	cfg := []string{"--origin", "39.9,116.4", "--epsilon", "0.023"}
	session := budget.GeoIndCharge(0.023, 1, 2, 100)
	if err := q("s1.json", "2008-10-24T02:09:59Z", cfg...); err != nil {
		t.Fatal(err)
	}
	if err := q("s1.json", "2008-10-24T02:10:59Z"); err != nil {
		t.Fatal(err)
	}
	if got := spentOf(s.ledgerJSON("bob", tok)); math.Abs(got-session) > 1e-12 {
		t.Fatalf("one session, two queries: spent %v, want %v", got, session)
	}
	if err := q("s2.json", "2008-10-24T02:11:59Z", cfg...); err != nil {
		t.Fatalf("second session: %v", err)
	}
	before := s.ledgerJSON("bob", tok)
	if got := spentOf(before); math.Abs(got-2*session) > 1e-12 {
		t.Fatalf("two sessions: spent %v, want %v", got, 2*session)
	}
	if err := q("s3.json", "2008-10-24T02:12:59Z", cfg...); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third session at a new --state: %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s3.json")); err == nil {
		t.Error("a refused session wrote its state")
	}
	if after := s.ledgerJSON("bob", tok); !jsonEqual(before, after) {
		t.Fatalf("a refused session changed the service's ledger:\nbefore %v\nafter  %v", before, after)
	}
	l, err := server.OpenLedgerDB(ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p, err := l.PendingReleases(""); err != nil || len(p) != 0 {
		t.Fatalf("pending after the sessions started: %v %v", p, err)
	}
}

// TestLedgerServiceCorpus: a corpus release with --ledger sqlite:DATA
// charges each person's service account: refused whole, before anything
// is drawn, while one person is unknown to the service; then each group
// charged before it is drawn and settled to its certified epsilon when its
// files land, and a group whose files cannot be written (a file stands
// where its folder goes) left with nothing charged or pending.
func TestLedgerServiceCorpus(t *testing.T) {
	s := startServe(t)
	dir, _, prior := samplePaths(t)
	in := corpusDir(t, dir, 3)
	out := filepath.Join(dir, "out")
	corpus := func() error {
		_, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
			"--corpus", "--ledger", "sqlite:"+filepath.Join(s.data, "tracepriv.db"), "--allow-prior-overlap")
		return err
	}
	tokens := map[string]string{}
	for _, id := range []string{"p0", "p1"} {
		tokens[id] = s.create(id, 4)
	}
	if err := corpus(); err == nil || !strings.Contains(err.Error(), `"p2"`) || !strings.Contains(err.Error(), "POST /v1/people") {
		t.Fatalf("a corpus with a person the service does not know: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
		t.Fatal("a refused corpus wrote its manifest")
	}
	for id, tok := range tokens {
		if led := s.ledgerJSON(id, tok); spentOf(led) != 0 || len(led["charges"].([]any)) != 0 {
			t.Fatalf("a refused corpus charged %s: %v", id, led)
		}
	}
	tokens["p2"] = s.create("p2", 4)
	os.MkdirAll(out, 0o755)
	if err := os.WriteFile(filepath.Join(out, "p1"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := corpus(); err == nil || !strings.Contains(err.Error(), "could not be released") {
		t.Fatalf("corpus with an unwritable group: %v", err)
	}
	certified := map[string]float64{}
	for _, p := range readJSON(t, filepath.Join(out, "manifest.json"))["persons"].([]any) {
		certified[p.(map[string]any)["uid"].(string)] = p.(map[string]any)["epsilon_max"].(float64)
	}
	if len(certified) != 2 || certified["p1"] != 0 {
		t.Fatalf("released %v: want p0 and p2", certified)
	}
	for id, tok := range tokens {
		led := s.ledgerJSON(id, tok)
		if got := spentOf(led); got != certified[id] {
			t.Errorf("%s: spent %v, want its certified %v", id, got, certified[id])
		}
		for _, c := range led["charges"].([]any) {
			if c := c.(map[string]any); c["settlement"] == "pending" {
				t.Errorf("%s: a charge left pending: %v", id, c)
			}
		}
	}
}

// TestLedgerServiceGeoindSanitize: geoind sanitize --ledger sqlite:DATA
// charges the service's account of the person each release's session, in
// the account's currency; the release past the budget is refused, nothing
// written and the service's ledger unchanged.
func TestLedgerServiceGeoindSanitize(t *testing.T) {
	s := startServe(t)
	tok := s.create("000", 5)
	dir := t.TempDir()
	in := filepath.Join(dir, "000", "in.plt")
	os.MkdirAll(filepath.Dir(in), 0o755)
	if err := os.WriteFile(in, sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	gs := func(out string) error {
		_, err := geoindRun(t, "geoind", "sanitize", "--in", in, "--out", filepath.Join(dir, out), "--origin", "39.9042,116.4074",
			"--rate", "0.0035", "-q", "--ledger", "sqlite:"+s.data)
		return err
	}
	for _, out := range []string{"a.csv", "b.csv"} {
		if err := gs(out); err != nil {
			t.Fatal(err)
		}
	}
	session := budget.GeoIndCharge(math.Ln10/100, 1, 2, 100)
	before := s.ledgerJSON("000", tok)
	if got := spentOf(before); math.Abs(got-2*session) > 1e-12 {
		t.Fatalf("two releases: spent %v, want 2 × %v", got, session)
	}
	if cert := readJSON(t, filepath.Join(dir, "a.csv.cert.json")); cert["ledger"] != "sqlite:tracepriv.db" {
		t.Errorf("certificate ledger %v", cert["ledger"])
	}
	if err := gs("c.csv"); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Fatalf("third release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.csv")); err == nil {
		t.Error("refused release written")
	}
	if after := s.ledgerJSON("000", tok); !jsonEqual(before, after) {
		t.Fatalf("a refused release changed the service's ledger:\nbefore %v\nafter  %v", before, after)
	}
}
