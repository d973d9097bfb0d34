package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestManifestListsWholeFamily: a corpus manifest's prior_family is the
// whole family the prior file states and each certificate is issued
// against (issue 32: it listed one of the sample prior's three kernels).
// The expected family is read from the prior file itself.
func TestManifestListsWholeFamily(t *testing.T) {
	dir, plt, prior := samplePaths(t)
	corpus := filepath.Join(dir, "corpus", "p1")
	os.MkdirAll(corpus, 0o755)
	os.WriteFile(filepath.Join(corpus, "t.plt"), mustRead(t, plt), 0o644)
	out := filepath.Join(dir, "out")
	if _, _, err := run(t, "sanitize", "--in", filepath.Dir(corpus), "--corpus", "--out", out, "--prior", prior,
		"--epsilon", "1", "--lambda", "2", "--radius", "100", "--no-ledger", "-q"); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Family struct {
			Kernels []map[string]any `json:"kernels"`
		} `json:"family"`
	}
	if err := json.Unmarshal(mustRead(t, prior), &p); err != nil || len(p.Family.Kernels) != 3 {
		t.Fatalf("the sample prior's family: %d kernels, %v", len(p.Family.Kernels), err)
	}
	type famDoc struct {
		PriorFamily struct {
			Kernels []map[string]any `json:"kernels"`
		} `json:"prior_family"`
	}
	var m, c famDoc
	json.Unmarshal(mustRead(t, filepath.Join(out, "manifest.json")), &m)
	json.Unmarshal(mustRead(t, filepath.Join(out, "certificates", "p1.cert.json")), &c)
	if !reflect.DeepEqual(m.PriorFamily.Kernels, p.Family.Kernels) {
		t.Errorf("manifest prior_family kernels %v, want the prior's %v", m.PriorFamily.Kernels, p.Family.Kernels)
	}
	if !reflect.DeepEqual(m.PriorFamily.Kernels, c.PriorFamily.Kernels) {
		t.Errorf("manifest prior_family kernels %v, the certificate's %v", m.PriorFamily.Kernels, c.PriorFamily.Kernels)
	}
}
