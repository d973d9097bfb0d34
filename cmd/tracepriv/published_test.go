package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// TestPublishedOutputsHoldNoAbsolutePath runs the commands that write
// files meant to be published (a prior, certificates, a corpus manifest, a
// trajectory release, a geoind state shared with its person), every path
// given absolute, and greps every file they wrote for the temporary
// directory's absolute path (issue 32: fit wrote "corpus": "/abs/009, ..."
// into the prior, geoind's state its own absolute path). Files marked
// private (the prior's corpus index) and the locks are exempt.
func TestPublishedOutputsHoldNoAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	in, pub := filepath.Join(dir, "in"), filepath.Join(dir, "pub")
	err := fs.WalkDir(sample.Corpus, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sample.Corpus, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(in, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(pub, 0o755)
	prior := filepath.Join(dir, "sample-prior.json")
	os.WriteFile(prior, sample.Prior, 0o644)
	one := filepath.Join(in, filepath.FromSlash(sample.Path))
	ledger := filepath.Join(pub, "ledger.json")
	cip := []string{"--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}
	for _, args := range [][]string{
		{"fit", "--in", filepath.Join(in, "synth-2"), "--in", filepath.Join(in, "synth-3"), "--kernel", "matern52", "--out", filepath.Join(pub, "prior.json")},
		append([]string{"sanitize", "--in", one, "--out", filepath.Join(pub, "one.plt"), "--ledger", ledger, "--budget", "10"}, cip...),
		append([]string{"sanitize", "--in", in, "--corpus", "--out", filepath.Join(pub, "corpus"), "--ledger", ledger, "--budget", "10"}, cip...),
		{"geoind", "sanitize", "--in", one, "--out", filepath.Join(pub, "geoind.plt"), "--origin", "39.9,116.4", "--every", "60s", "--ledger", ledger},
		{"geoind", "query", "--state", filepath.Join(pub, "state.json"), "--uid", "000", "--origin", "39.9042,116.4074",
			"--lat", "39.9841", "--lon", "116.3185", "--time", "2008-10-24T02:10:00Z", "--ledger", ledger},
		{"release", "--in", in, "--out", filepath.Join(pub, "release"), "--mechanism", "ngram", "--epsilon", "1",
			"--cell-m", "5000", "--bbox", "39.75,116.15,40.10,116.60", "--max-len", "3", "--max-seqs", "1"},
	} {
		if _, _, err := run(t, append(args, "-q", "--json")...); err != nil {
			t.Fatalf("%v: %v", args[:2], err)
		}
	}
	// A corpus release where one person fails still writes its manifest,
	// whose failure names the file relative to the corpus; under --json
	// stdout is the manifest alone (the error goes to stderr) and the
	// status 1.
	partial := filepath.Join(dir, "partial")
	os.MkdirAll(filepath.Join(partial, "bad"), 0o755)
	os.WriteFile(filepath.Join(partial, "bad", "t.csv"), []byte("lat,lon,time\n1,2,x\n"), 0o644)
	os.MkdirAll(filepath.Join(partial, "good"), 0o755)
	os.WriteFile(filepath.Join(partial, "good", "t.plt"), mustRead(t, one), 0o644)
	var stdout, stderr bytes.Buffer
	status := runMain(append([]string{"sanitize", "--in", partial, "--corpus", "--strict", "--out", filepath.Join(pub, "partial"), "--no-ledger", "-q", "--json"}, cip...), &stdout, &stderr)
	var m struct {
		Persons []any `json:"persons"`
		Failed  []any `json:"failed"`
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&m); status != 1 || err != nil || len(m.Persons) != 1 || len(m.Failed) != 1 || dec.More() {
		t.Errorf("partial corpus release: status %d, %v, manifest %+v, more JSON after it %v; stderr %q", status, err, m, dec.More(), stderr.String())
	}
	abs := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		abs = append(abs, real)
	}
	files := 0
	err = filepath.WalkDir(pub, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") || strings.Contains(filepath.Base(p), ".private.") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, a := range abs {
			if i := bytes.Index(b, []byte(a)); i >= 0 {
				t.Errorf("%s holds the absolute path %s: ...%s...", p, a, b[max(0, i-60):min(len(b), i+len(a)+20)])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Errorf("checked only %d files", files)
	}
}
