package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/ledgertest"
	"github.com/tracepriv/tracepriv/internal/testrun"
	"github.com/tracepriv/tracepriv/server/api"
)

// killAfterFirstUnit runs tracepriv args, a corpus release into out, in a
// child process and kills it (SIGKILL) once its journal has a finished
// unit, and wait later, however long the unit takes on a busy machine (go
// test's -timeout is the guard, never a fixed wait: one killed a starved
// child before anything landed). It returns the certified epsilons of the
// journalled people, and skips the test if the run finished before the
// kill (a scheduling accident: no crash to check).
func killAfterFirstUnit(t *testing.T, out string, wait time.Duration, args []string) map[string]float64 {
	t.Helper()
	journal := filepath.Join(out, ".tracepriv-journal.jsonl")
	ready := func() bool {
		b, err := os.ReadFile(journal)
		return err == nil && bytes.Count(b, []byte("\n")) >= 1
	}
	stderr := testrun.KillWhen(t, childEnv, args, ready, 0, wait)
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
		t.Skipf("the run finished before it was killed; no crash to check; stderr:\n%s", stderr)
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
		t.Fatalf("no unit landed before the kill; stderr:\n%s", stderr)
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
	ledgertest.Each(t, func(t *testing.T, db *ledgertest.ServiceDB) {
		dir, _, prior := samplePaths(t)
		const n = 4
		in := corpusDir(t, dir, n)
		var ids []string
		for i := range n {
			ids = append(ids, "p"+string(rune('0'+i)))
		}
		for _, id := range ids {
			db.Create(id, 10)
		}
		out := filepath.Join(dir, "out")
		args := []string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100", "-q",
			"--corpus", "--ledger", db.Ledger, "--workers", "1", "--allow-prior-overlap"}
		landed := killAfterFirstUnit(t, out, 0, args)
		// One worker, one person a unit: at most one person pending, at the
		// target 1; the journalled ones settled to their certified epsilon;
		// nobody else charged, and every account's spent is its charges.
		var pending []string
		for _, id := range ids {
			cs, spent := db.Charges(id)
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
			case landed[id] == 0 || cs[0].Epsilon != landed[id] || cs[0].Settlement != "":
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
		if len(persons) != n || m["ledger"] != db.Name {
			t.Fatalf("resumed manifest: %d people, ledger %v; want %d", len(persons), m["ledger"], n)
		}
		for _, p := range persons {
			uid, eps := p.(map[string]any)["uid"].(string), p.(map[string]any)["epsilon_max"].(float64)
			cs, _ := db.Charges(uid)
			var live []api.Charge
			for _, c := range cs {
				if c.Settlement != "undone" {
					live = append(live, c)
				}
			}
			want := 1
			if killedLanded[uid] {
				want = 2 // its killed release landed, and it was drawn again
			}
			if len(live) != want || live[len(live)-1].Settlement != "" || live[len(live)-1].Epsilon != eps {
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
	ledgertest.Each(t, func(t *testing.T, db *ledgertest.ServiceDB) {
		dir, _, prior := samplePaths(t)
		in := corpusDir(t, dir, 2)
		db.Create("p0", 3)
		db.Create("p1", 3)
		out := filepath.Join(dir, "out")
		corpus := func(out, eps string) error {
			_, _, err := run(t, "sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", eps, "--lambda", "2", "--radius", "100", "-q",
				"--corpus", "--ledger", db.Ledger, "--allow-prior-overlap")
			return err
		}
		if err := corpus(out, "1"); err != nil {
			t.Fatal(err)
		}
		rows, file := db.Rows()
		if !strings.Contains(rows, "p0") || !strings.Contains(rows, "settled") {
			t.Fatalf("the first release's rows: %s", rows)
		}
		same := func(what string) {
			t.Helper()
			r, f := db.Rows()
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
