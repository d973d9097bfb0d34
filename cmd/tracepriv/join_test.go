package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestCorpusJoinsOneUIDInTwoFolders: under --corpus, a uid found in two
// child folders (here a CSV with uid 008 in each of A and B) is one
// person, released and certified once with both folders' files (issue
// 31: they were two persons, each certified at epsilon, so person 008 was
// released twice).
func TestCorpusJoinsOneUIDInTwoFolders(t *testing.T) {
	t.Parallel()
	dir, _, prior := samplePaths(t)
	root := filepath.Join(dir, "corpus")
	for folder, src := range map[string]string{"A": "synth-2/cycle.plt", "B": "synth-3/walk.plt"} {
		b, err := fs.ReadFile(sample.Corpus, src)
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, folder+".plt")
		os.WriteFile(tmp, b, 0o644)
		ts, _, err := trace.ReadFile(tmp, trace.ReadOptions{UID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			tr.UID = "008"
		}
		os.MkdirAll(filepath.Join(root, folder), 0o755)
		if err := trace.WriteFile(filepath.Join(root, folder, "t.csv"), ts, trace.CSV); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	stdout, _, err := run(t, "sanitize", "--in", root, "--corpus", "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--no-ledger", "-q", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Persons []struct {
			UID   string   `json:"uid"`
			Files []string `json:"files"`
		} `json:"persons"`
	}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Persons) != 1 || m.Persons[0].UID != "A" || len(m.Persons[0].Files) != 2 {
		t.Fatalf("persons %+v, want one person A with both folders' files", m.Persons)
	}
	certs, _ := filepath.Glob(filepath.Join(out, "certificates", "*"))
	if len(certs) != 1 {
		t.Errorf("certificates %v, want one", certs)
	}
	// geoind sanitize gives them one budget too.
	stdout, _, err = run(t, "geoind", "sanitize", "--in", root, "--corpus", "--out", filepath.Join(dir, "g.csv"),
		"--origin", "39.9,116.4", "--every", "60s", "--no-ledger", "-q", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Plans []struct {
			Person string `json:"person"`
		} `json:"plans"`
	}
	if err := json.Unmarshal([]byte(stdout), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Plans) != 1 {
		t.Errorf("geoind plans %+v, want one person", g.Plans)
	}
}

// TestSanitizeFileListsFiles: sanitize --in FILE --json lists each
// person's files, as the directory case does (issue 31).
func TestSanitizeFileListsFiles(t *testing.T) {
	dir, plt, prior := samplePaths(t)
	stdout, _, err := run(t, "sanitize", "--in", plt, "--out", filepath.Join(dir, "o.plt"), "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--no-ledger", "-q", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Persons []struct {
			UID   string   `json:"uid"`
			Files []string `json:"files"`
		} `json:"persons"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Persons) != 1 || len(c.Persons[0].Files) != 1 || c.Persons[0].Files[0] != filepath.Base(plt) {
		t.Errorf("persons %+v, want one with files [%s]", c.Persons, filepath.Base(plt))
	}
	// The certificate file itself is unchanged (no files key).
	var raw struct {
		Persons []map[string]any `json:"persons"`
	}
	json.Unmarshal(mustRead(t, filepath.Join(dir, "o.plt.cert.json")), &raw)
	if len(raw.Persons) != 1 || raw.Persons[0]["files"] != nil {
		t.Errorf("certificate persons %v", raw.Persons)
	}
}
