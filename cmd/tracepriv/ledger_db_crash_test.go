package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/pgtest"
	"github.com/tracepriv/tracepriv/server"
)

const dbTestAdmin = "ledger-db-crash-admin-token-0123456789"

// dbLedger is a database of tracepriv serve used as a --ledger: SQLite in
// a folder, or a fresh database on a real PostgreSQL cluster of its own
// (pgtest, stopped when the test ends; the full suite only).
type dbLedger struct {
	t              *testing.T
	ledger         string // the --ledger value
	name           string // what certificates and manifests call it
	driver, source string // database/sql's, to read its rows
	file           string // SQLite's database file ("" for PostgreSQL)
}

// dbLedgers runs f on SQLite, and on PostgreSQL in the full suite.
func dbLedgers(t *testing.T, f func(t *testing.T, db *dbLedger)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "tracepriv.db")
		f(t, &dbLedger{t: t, ledger: "sqlite:" + dir, name: "sqlite:tracepriv.db", driver: "sqlite", source: file, file: file})
	})
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() {
			t.Skip("PostgreSQL: full suite only (-short runs this test on SQLite)")
		}
		u := pgtest.Own(t)
		p, _ := url.Parse(u)
		f(t, &dbLedger{t: t, ledger: u, name: "postgres:" + strings.TrimPrefix(p.Path, "/"), driver: "pgx", source: u})
	})
}

// service answers one request of the service on this database (in this
// process, through its handler), as the admin.
func (d *dbLedger) service(method, path string, body any) (int, map[string]any) {
	d.t.Helper()
	opt := server.Options{AdminToken: dbTestAdmin, DB: d.source}
	if d.file != "" {
		opt = server.Options{AdminToken: dbTestAdmin, DataDir: filepath.Dir(d.file)}
	}
	srv, err := server.New(context.Background(), opt)
	if err != nil {
		d.t.Fatal(err)
	}
	defer srv.Close()
	b, _ := json.Marshal(body)
	req := httptest.NewRequest(method, path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+dbTestAdmin)
	req.Header.Set("Content-Type", "application/json")
	var k [16]byte
	rand.Read(k[:])
	req.Header.Set("Idempotency-Key", hex.EncodeToString(k[:]))
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	var v map[string]any
	json.Unmarshal(w.Body.Bytes(), &v)
	return w.Code, v
}

// create creates people ids, each with an account budget of b at order 2
// within 100 m.
func (d *dbLedger) create(b float64, ids ...string) {
	d.t.Helper()
	for _, id := range ids {
		if c, v := d.service("POST", "/v1/people", map[string]any{"id": id, "epsilon_budget": 0.023, "account": map[string]any{"epsilon_budget": b},
			"cip": map[string]any{"lambda": 2, "radius_m": 100}}); c != http.StatusCreated {
			d.t.Fatalf("create %s: %d %v", id, c, v)
		}
	}
}

// dbCharge is a command's charge as the service's ledger shows it.
type dbCharge struct {
	Epsilon    float64
	Settlement string
}

// charges returns the person's charges by tracepriv commands (origin
// cli), as GET /v1/people/{id}/ledger answers them, and the account's
// spent.
func (d *dbLedger) charges(id string) ([]dbCharge, float64) {
	d.t.Helper()
	c, v := d.service("GET", "/v1/people/"+id+"/ledger", nil)
	if c != http.StatusOK {
		d.t.Fatalf("ledger of %s: %d %v", id, c, v)
	}
	var out []dbCharge
	for _, c := range v["charges"].([]any) {
		if c := c.(map[string]any); c["origin"] == "cli" {
			s, _ := c["settlement"].(string) // absent once settled
			if s == "" {
				s = "settled"
			}
			out = append(out, dbCharge{Epsilon: c["epsilon"].(float64), Settlement: s})
		}
	}
	return out, v["account"].(map[string]any)["spent"].(float64)
}

// rows is every person and charge row of the store, and SQLite's file
// bytes (every command closes its connections, which folds the WAL into
// the file).
func (d *dbLedger) rows() (string, []byte) {
	d.t.Helper()
	db, err := sql.Open(d.driver, d.source)
	if err != nil {
		d.t.Fatal(err)
	}
	r, err := pgtest.Rows(db, "SELECT * FROM people ORDER BY id", "SELECT * FROM charges ORDER BY person_id, seq")
	db.Close()
	if err != nil {
		d.t.Fatal(err)
	}
	var file []byte
	if d.file != "" {
		file = mustRead(d.t, d.file)
	}
	return r, file
}

// killAfterFirstUnit runs tracepriv args, a corpus release into out, in a
// child process and kills it (SIGKILL) once its journal has a finished
// unit, and wait later, however long the unit takes on a busy machine (go
// test's -timeout is the guard, never a fixed wait: one killed a starved
// child before anything landed). It returns the certified epsilons of the
// journalled people, and skips the test if the run finished before the
// kill (a scheduling accident: no crash to check).
func killAfterFirstUnit(t *testing.T, out string, wait time.Duration, args []string) map[string]float64 {
	t.Helper()
	child := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	child.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(out, ".tracepriv-journal.jsonl")
	exited := make(chan struct{})
	go func() { child.Wait(); close(exited) }()
poll:
	for {
		if b, err := os.ReadFile(journal); err == nil && bytes.Count(b, []byte("\n")) >= 1 {
			break
		}
		select {
		case <-exited:
			break poll
		case <-time.After(2 * time.Millisecond):
		}
	}
	time.Sleep(wait)
	child.Process.Kill() // SIGKILL
	<-exited
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
		t.Skipf("the run finished before it was killed; no crash to check; stderr:\n%s", stderr.String())
	}
	landed := map[string]float64{}
	f, err := os.Open(journal)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			Persons []struct {
				UID        string  `json:"uid"`
				EpsilonMax float64 `json:"epsilon_max"`
			} `json:"persons"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			for _, p := range e.Persons {
				landed[p.UID] = p.EpsilonMax
			}
		}
	}
	if len(landed) == 0 {
		t.Fatalf("no unit landed before the kill; stderr:\n%s", stderr.String())
	}
	return landed
}

// landedFiles returns the people of pending, not journalled as landed,
// whose killed release left files (or temporary files) under out: their
// charge must stay, and they are drawn (and charged) again.
func landedFiles(out string, pending []string, landed map[string]float64) map[string]bool {
	files := map[string]bool{}
	for _, uid := range pending {
		if landed[uid] != 0 {
			continue
		}
		for _, pat := range []string{filepath.Join(out, uid, "*"), filepath.Join(out, uid, ".*"), filepath.Join(out, "certificates", uid+"*"), filepath.Join(out, "certificates", "."+uid+"*")} {
			if m, _ := filepath.Glob(pat); len(m) > 0 {
				files[uid] = true
			}
		}
	}
	return files
}

// TestLedgerDBCorpusSIGKILL: TestLedgerCorpusSIGKILL on the service's
// database (--ledger sqlite:DIR; postgres://... in the full suite): a
// corpus release killed (SIGKILL) after its first group of people landed
// has charged the landed ones their certified epsilon, and at most the one
// group being drawn pending at the target; the next run settles or undoes
// that charge, and every person is charged exactly what their release
// certified (twice only if the killed group's files had landed, since it
// is drawn again). Nobody else is charged.
func TestLedgerDBCorpusSIGKILL(t *testing.T) {
	dbLedgers(t, func(t *testing.T, db *dbLedger) {
		dir, _, prior := samplePaths(t)
		const n = 4
		in := corpusDir(t, dir, n)
		var ids []string
		for i := range n {
			ids = append(ids, "p"+string(rune('0'+i)))
		}
		db.create(10, ids...)
		out := filepath.Join(dir, "out")
		args := []string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
			"--corpus", "--ledger", db.ledger, "--workers", "1", "--allow-prior-overlap"}
		landed := killAfterFirstUnit(t, out, 0, args)
		// One worker, one person a unit: at most one person pending, at the
		// target 1; the journalled ones settled to their certified epsilon;
		// nobody else charged, and every account's spent is its charges.
		var pending []string
		for _, id := range ids {
			cs, spent := db.charges(id)
			sum := 0.0
			for _, c := range cs {
				sum += c.Epsilon
			}
			if spent != sum {
				t.Errorf("%s: spent %v, the sum of its charges %v", id, spent, sum)
			}
			switch {
			case len(cs) == 0 && landed[id] == 0:
			case len(cs) != 1:
				t.Errorf("%s after the kill: charges %+v, want at most one", id, cs)
			case cs[0].Settlement == "pending":
				pending = append(pending, id)
				if cs[0].Epsilon != 1 {
					t.Errorf("%s: pending charge %+v, want the target 1", id, cs[0])
				}
			case landed[id] == 0 || cs[0].Epsilon != landed[id] || cs[0].Settlement != "settled":
				t.Errorf("%s: charge %+v, want only landed people, settled to their certified %v", id, cs[0], landed[id])
			}
			if landed[id] != 0 && len(cs) == 0 {
				t.Errorf("%s landed but is not charged", id)
			}
		}
		if len(pending) > 1 {
			t.Fatalf("pending after the kill: %v, want at most the one group being drawn", pending)
		}
		t.Logf("killed with %d people journalled, %d pending", len(landed), len(pending))
		killedLanded := landedFiles(out, pending, landed)
		// The next run resumes, settles, and charges the rest.
		if _, stderr, err := run(t, args...); err != nil {
			t.Fatalf("resumed run: %v\n%s", err, stderr)
		}
		m := readJSON(t, filepath.Join(out, "manifest.json"))
		persons := m["persons"].([]any)
		if len(persons) != n || m["ledger"] != db.name {
			t.Fatalf("resumed manifest: %d people, ledger %v; want %d", len(persons), m["ledger"], n)
		}
		for _, p := range persons {
			uid, eps := p.(map[string]any)["uid"].(string), p.(map[string]any)["epsilon_max"].(float64)
			cs, _ := db.charges(uid)
			var live []dbCharge
			for _, c := range cs {
				if c.Settlement != "undone" {
					live = append(live, c)
				}
			}
			want := 1
			if killedLanded[uid] {
				want = 2 // its killed release landed, and it was drawn again
			}
			if len(live) != want || live[len(live)-1].Settlement != "settled" || live[len(live)-1].Epsilon != eps {
				t.Errorf("person %s: charges %+v, want %d settled, the last at the certified %v", uid, cs, want, eps)
			}
			for _, c := range cs {
				if c.Settlement == "pending" || c.Settlement == "undone" && c.Epsilon != 0 {
					t.Errorf("person %s: charge %+v left after the next run", uid, c)
				}
			}
		}
	})
}

// TestLedgerDBRefusedUnchanged: a corpus release on the service's database
// refused before drawing (an --out holding another release, an --out that
// cannot be created) leaves every person and charge row of the store as it
// was, and with SQLite the database file byte-identical.
func TestLedgerDBRefusedUnchanged(t *testing.T) {
	dbLedgers(t, func(t *testing.T, db *dbLedger) {
		dir, _, prior := samplePaths(t)
		in := corpusDir(t, dir, 2)
		db.create(3, "p0", "p1")
		out := filepath.Join(dir, "out")
		corpus := func(out, eps string) error {
			_, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", eps, "--lambda", "2", "--radius", "100", "-q",
				"--corpus", "--ledger", db.ledger, "--allow-prior-overlap")
			return err
		}
		if err := corpus(out, "1"); err != nil {
			t.Fatal(err)
		}
		rows, file := db.rows()
		if !strings.Contains(rows, "p0") || !strings.Contains(rows, "settled") {
			t.Fatalf("the first release's rows: %s", rows)
		}
		same := func(what string) {
			t.Helper()
			r, f := db.rows()
			if r != rows {
				t.Fatalf("%s changed the store's rows:\nbefore %s\nafter  %s", what, rows, r)
			}
			if !bytes.Equal(f, file) {
				t.Fatalf("%s changed the SQLite file's bytes", what)
			}
		}
		for i := range 3 {
			if err := corpus(out, "0.5"); err == nil || !strings.Contains(err.Error(), "other options") {
				t.Fatalf("try %d into an --out of another release: %v, want refused", i+1, err)
			}
			same("a release refused for its --out")
		}
		blocked := filepath.Join(dir, "blocked")
		os.WriteFile(blocked, nil, 0o644)
		if err := corpus(filepath.Join(blocked, "out"), "1"); err == nil {
			t.Fatal("a release into an --out under a file succeeded")
		}
		same("a release whose --out cannot be created")
	})
}
