package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/ledgertest"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/server"
)

// account is the person's spent and budget in the service's account, and
// whether any of its charges is pending.
func account(t *testing.T, db *ledgertest.ServiceDB, uid string) (spent, budget float64, pending bool) {
	t.Helper()
	l, err := server.OpenLedgerDB(db.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := l.Account(uid)
	if err != nil || a == nil {
		t.Fatalf("account %s: %v %v", uid, a, err)
	}
	p, err := l.PendingReleases("")
	if err != nil {
		t.Fatal(err)
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
	ledgertest.Each(t, testSanitizeServiceLedger)
}

func testSanitizeServiceLedger(t *testing.T, st *ledgertest.ServiceDB) {
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
	for _, id := range []string{"p0", "p1"} {
		tok := st.Create(id, budgetB)
		if id == "p0" {
			c, v := st.Request(tok, "POST", "/v1/people/p0/charges", map[string]any{"mechanism": "cip", "epsilon": device, "radius_m": 100,
				"certificate_sha256": strings.Repeat("ab", 32)})
			if c != http.StatusCreated {
				t.Fatalf("device charge: %d %v", c, v)
			}
		}
	}
	pipe := func(input, out string, eps float64, extra ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"sanitize", "--input", input, "--corpus", "--output", out, "--prior", priorFile,
			"--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--lambda", "2", "--radius", "100", "--allow-prior-overlap", "--ledger", st.Ledger}, extra...)
		code := run(context.Background(), args, &stdout, &stderr)
		return code, stderr.String()
	}
	// What tracepriv sanitize --ledger charged p0 (full suite: the command
	// itself, on the same database).
	var cliEps float64
	if !testing.Short() {
		out := filepath.Join(dir, "cli.plt")
		cmd := exec.Command(tracepriv(t), "sanitize", "--in", filepath.Join(in, "p0", "t.plt"), "--out", out, "--prior", priorFile,
			"--epsilon", "1", "--lambda", "2", "--radius", "100", "--uid", "p0", "--allow-prior-overlap", "--ledger", st.Ledger, "-q")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tracepriv sanitize --ledger %s: %v\n%s", st.Ledger, err, b)
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
	wantName := st.Name
	if m.Ledger != wantName {
		t.Errorf("manifest ledger %q, want %q", m.Ledger, wantName)
	}
	for _, p := range m.Persons {
		want := p.EpsilonMax
		if p.UID == "p0" {
			want += device + cliEps
		}
		spent, _, pending := account(t, st, p.UID)
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
	rows, file := st.Rows()
	out2 := filepath.Join(dir, "r2")
	if code, stderr := pipe(in, out2, 0.1); code != 1 || !strings.Contains(stderr, `"p2"`) || !strings.Contains(stderr, "POST /v1/people") {
		t.Fatalf("a corpus with a person the service does not know: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out2, "manifest.json")); err == nil {
		t.Error("the refused corpus ran")
	}
	if r, f := st.Rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused corpus changed the store:\nbefore %s\nafter  %s", rows, r)
	}
	os.RemoveAll(filepath.Join(in, "p2"))
	// Past p0's budget (just above what is left of it): refused before
	// anything is drawn, with the store unchanged.
	spent, b0, _ := account(t, st, "p0")
	over := b0 - spent + 0.01
	code, stderr := pipe(in, filepath.Join(dir, "r3"), over)
	if code != 1 || !strings.Contains(stderr, "over budget") || !strings.Contains(stderr, "never raised") {
		t.Fatalf("a release at %v with %v of %v spent: exit %d\n%s", over, spent, b0, code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r3", "manifest.json")); err == nil {
		t.Error("the refused release ran")
	}
	if r, f := st.Rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused release changed the store:\nbefore %s\nafter  %s", rows, r)
	}
	// --raise-budget: refused with a database ledger, before anything is
	// drawn; the service's budgets are never raised.
	code, stderr = pipe(in, filepath.Join(dir, "r4"), 0.1, "--budget", "10", "--raise-budget")
	if code != 1 || !strings.Contains(stderr, "never raised") {
		t.Fatalf("--raise-budget on the service's ledger: exit %d\n%s", code, stderr)
	}
	if r, f := st.Rows(); r != rows || !bytes.Equal(f, file) {
		t.Fatalf("a refused raise changed the store:\nbefore %s\nafter  %s", rows, r)
	}
}
