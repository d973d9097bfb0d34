package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server"
)

const testAdmin = "pipeline-ledger-admin-token-0123456789"

// serviceStore is a database of tracepriv serve: SQLite in a folder, or a
// fresh database on a real PostgreSQL cluster of its own (pgtest, stopped
// when the test ends; the full suite only).
type serviceStore struct {
	t      *testing.T
	ledger string // the --ledger value naming it
	driver string // database/sql driver and source, to compare its rows
	source string
	file   string // SQLite's database file ("" for PostgreSQL)
}

func newServiceStore(t *testing.T, postgres bool) *serviceStore {
	t.Helper()
	if !postgres {
		dir := t.TempDir()
		return &serviceStore{t: t, ledger: "sqlite:" + dir, driver: "sqlite", source: filepath.Join(dir, "tracepriv.db"), file: filepath.Join(dir, "tracepriv.db")}
	}
	if testing.Short() {
		t.Skip("PostgreSQL: full suite only (-short runs this test on SQLite)")
	}
	u := pgtest.Own(t)
	return &serviceStore{t: t, ledger: u, driver: "pgx", source: u}
}

// serve runs fn against the service on this store (in this process, over
// its HTTP handler), then closes it, as an operator's serve would.
func (s *serviceStore) serve(fn func(do func(method, path, tok string, body any) (int, map[string]any))) {
	s.t.Helper()
	opt := server.Options{AdminToken: testAdmin}
	if s.file != "" {
		opt.DataDir = filepath.Dir(s.file)
	} else {
		opt.DB = s.source
	}
	srv, err := server.New(context.Background(), opt)
	if err != nil {
		s.t.Fatal(err)
	}
	defer srv.Close()
	fn(func(method, path, tok string, body any) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(method, path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		var k [16]byte
		rand.Read(k[:])
		req.Header.Set("Idempotency-Key", hex.EncodeToString(k[:]))
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		var v map[string]any
		json.Unmarshal(w.Body.Bytes(), &v)
		return w.Code, v
	})
}

// rows is every person and charge the store holds; with SQLite also the
// database file's bytes (the WAL is folded into it when the last
// connection closes, as every run here closes its own).
func (s *serviceStore) rows() (string, []byte) {
	s.t.Helper()
	db, err := sql.Open(s.driver, s.source)
	if err != nil {
		s.t.Fatal(err)
	}
	r, err := pgtest.Rows(db, "SELECT * FROM people ORDER BY id", "SELECT * FROM charges ORDER BY person_id, seq")
	db.Close()
	if err != nil {
		s.t.Fatal(err)
	}
	var file []byte
	if s.file != "" {
		if file, err = os.ReadFile(s.file); err != nil {
			s.t.Fatal(err)
		}
	}
	return r, file
}

// account is the person's spent and budget in the service's account, and
// whether any of its charges is pending.
func (s *serviceStore) account(uid string) (spent, budget float64, pending bool) {
	s.t.Helper()
	l, err := server.OpenLedgerDB(s.ledger)
	if err != nil {
		s.t.Fatal(err)
	}
	defer l.Close()
	a, err := l.Account(uid)
	if err != nil || a == nil {
		s.t.Fatalf("account %s: %v %v", uid, a, err)
	}
	p, err := l.PendingReleases("")
	if err != nil {
		s.t.Fatal(err)
	}
	return a.Spent, *a.Budget, len(p) > 0
}

// tracepriv builds the root module's tracepriv command (the full suite
// only: a link of the whole command).
func tracepriv(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tracepriv")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tracepriv")
	cmd.Dir = filepath.Join("..", "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tracepriv: %v\n%s", err, out)
	}
	return bin
}

// TestSanitizeServiceLedger: tracepriv-pipeline sanitize --ledger naming
// tracepriv serve's database (SQLite; PostgreSQL in the full suite) charges
// the service's accounts, by budget.Admission over server.LedgerDB, as
// tracepriv sanitize does: one budget per person, spent by the service (a
// device's charge), tracepriv sanitize --ledger (full suite: the command
// built and run) and the pipeline together; a corpus with a person the
// service does not know refused before the job runs, naming the fix; a run
// past the budget refused before anything is drawn, with the store's rows
// (and SQLite's file bytes) unchanged. Before issue 31's item 2 the
// pipeline refused a database ledger ("keeps its ledger in a file only").
func TestSanitizeServiceLedger(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { testSanitizeServiceLedger(t, newServiceStore(t, pg)) })
	}
}

func testSanitizeServiceLedger(t *testing.T, st *serviceStore) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for _, p := range []string{"p0", "p1"} {
		os.MkdirAll(filepath.Join(in, p), 0o755)
		if err := os.WriteFile(filepath.Join(in, p, "t.plt"), sample.PLT, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	priorFile := filepath.Join("..", "..", "..", "internal", "sample", "prior.json")
	const budgetB, device = 3.0, 0.5
	st.serve(func(do func(string, string, string, any) (int, map[string]any)) {
		for _, id := range []string{"p0", "p1"} {
			c, v := do("POST", "/v1/people", testAdmin, map[string]any{"id": id, "epsilon_budget": 0.023, "account": map[string]any{"epsilon_budget": budgetB},
				"cip": map[string]any{"lambda": 2, "radius_m": 100}})
			if c != http.StatusCreated {
				t.Fatalf("create %s: %d %v", id, c, v)
			}
			if id == "p0" {
				c, v = do("POST", "/v1/people/p0/charges", v["token"].(string), map[string]any{"mechanism": "cip", "epsilon": device, "radius_m": 100,
					"certificate_sha256": strings.Repeat("ab", 32)})
				if c != http.StatusCreated {
					t.Fatalf("device charge: %d %v", c, v)
				}
			}
		}
	})
	pipe := func(input, out string, eps float64, extra ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"sanitize", "--input", input, "--corpus", "--output", out, "--prior", priorFile,
			"--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--lambda", "2", "--radius", "100", "--allow-prior-overlap", "--ledger", st.ledger}, extra...)
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stderr.String()
	}
	// What tracepriv sanitize --ledger charged p0 (full suite: the command
	// itself, on the same database).
	var cliEps float64
	if !testing.Short() {
		out := filepath.Join(dir, "cli.plt")
		cmd := exec.Command(tracepriv(t), "sanitize", "--in", filepath.Join(in, "p0", "t.plt"), "--out", out, "--prior", priorFile,
			"--epsilon", "1", "--lambda", "2", "--radius", "100", "--uid", "p0", "--allow-prior-overlap", "--ledger", st.ledger, "-q")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tracepriv sanitize --ledger %s: %v\n%s", st.ledger, err, b)
		}
		var cert struct {
			Ledger  string `json:"ledger"`
			Persons []struct {
				EpsilonMax float64 `json:"epsilon_max"`
			} `json:"persons"`
		}
		b, _ := os.ReadFile(out + ".cert.json")
		if err := json.Unmarshal(b, &cert); err != nil || len(cert.Persons) != 1 {
			t.Fatalf("tracepriv sanitize's certificate: %v %s", err, b)
		}
		cliEps = cert.Persons[0].EpsilonMax
	}
	// The pipeline charges the same accounts.
	out := filepath.Join(dir, "r1")
	if code, stderr := pipe(in, out, 1); code != 0 {
		t.Fatalf("pipeline on the service's ledger: exit %d\n%s", code, stderr)
	}
	var m struct {
		Ledger  string `json:"ledger"`
		Persons []struct {
			UID        string  `json:"uid"`
			EpsilonMax float64 `json:"epsilon_max"`
		} `json:"persons"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil || len(m.Persons) != 2 {
		t.Fatalf("manifest: %v %s", err, b)
	}
	wantName := "sqlite:tracepriv.db"
	if st.file == "" {
		u, _ := url.Parse(st.source)
		wantName = "postgres:" + strings.TrimPrefix(u.Path, "/")
	}
	if m.Ledger != wantName {
		t.Errorf("manifest ledger %q, want %q", m.Ledger, wantName)
	}
	for _, p := range m.Persons {
		want := p.EpsilonMax
		if p.UID == "p0" {
			want += device + cliEps
		}
		spent, _, pending := st.account(p.UID)
		if math.Abs(spent-want) > 1e-12 || pending {
			t.Errorf("%s: spent %v (pending %v), want %v settled: the device's %v, tracepriv sanitize's %v and the pipeline's certified %v",
				p.UID, spent, pending, want, device, cliEps, p.EpsilonMax)
		}
	}
	// A person the service does not know: refused whole before the job,
	// naming the fix, nothing written and no row changed.
	os.MkdirAll(filepath.Join(in, "p2"), 0o755)
	if err := os.WriteFile(filepath.Join(in, "p2", "t.plt"), sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	rows, file := st.rows()
	out2 := filepath.Join(dir, "r2")
	if code, stderr := pipe(in, out2, 0.1); code != 1 || !strings.Contains(stderr, `"p2"`) || !strings.Contains(stderr, "POST /v1/people") {
		t.Fatalf("a corpus with a person the service does not know: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out2, "manifest.json")); err == nil {
		t.Error("the refused corpus ran")
	}
	if r, f := st.rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused corpus changed the store:\nbefore %s\nafter  %s", rows, r)
	}
	os.RemoveAll(filepath.Join(in, "p2"))
	// Past p0's budget (just above what is left of it): refused before
	// anything is drawn, with the store unchanged.
	spent, b0, _ := st.account("p0")
	over := b0 - spent + 0.01
	code, stderr := pipe(in, filepath.Join(dir, "r3"), over)
	if code != 1 || !strings.Contains(stderr, "over budget") || !strings.Contains(stderr, "never raised") {
		t.Fatalf("a release at %v with %v of %v spent: exit %d\n%s", over, spent, b0, code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r3", "manifest.json")); err == nil {
		t.Error("the refused release ran")
	}
	if r, f := st.rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused release changed the store:\nbefore %s\nafter  %s", rows, r)
	}
	// --raise-budget: refused with a database ledger, before anything is
	// drawn; the service's budgets are never raised.
	code, stderr = pipe(in, filepath.Join(dir, "r4"), 0.1, "--budget", "10", "--raise-budget")
	if code != 1 || !strings.Contains(stderr, "never raised") {
		t.Fatalf("--raise-budget on the service's ledger: exit %d\n%s", code, stderr)
	}
	if r, f := st.rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused raise changed the store:\nbefore %s\nafter  %s", rows, r)
	}
}
