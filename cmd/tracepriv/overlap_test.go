package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	isample "github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sample"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
)

// bundledPriorWithIndex writes the bundled prior to a temporary directory
// with its private corpus index beside it, built from the GeoLife users it
// was fitted on (the project does not ship the index), and returns the
// prior's path.
func bundledPriorWithIndex(t *testing.T) string {
	t.Helper()
	x, err := sample.PriorCorpus(geolifeDir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prior.json")
	if err := os.WriteFile(path, isample.Prior, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(prior.CorpusIndexPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := x.Write(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// dropRows writes to dst the PLT file src without the data rows drop.
func dropRows(t *testing.T, src, dst string, drop ...int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	var out []string
	for i, l := range lines {
		skip := false
		for _, d := range drop {
			skip = skip || i == 6+d
		}
		if !skip {
			out = append(out, l)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A GeoLife file of a user the bundled prior was fitted on is refused as
// self-fitted with one fix dropped, moved to another person's folder, and
// converted to CSV by tracepriv convert; allowed, its certificate covers no
// class and its text claims none. A file of user 000, not fitted, is
// independent (negative control). Short files (82 and 188 rows): the
// overlap rule is read from the fixes, and every release costs its length.
func TestSelfFittedGeoLife(t *testing.T) {
	t.Parallel()
	geolife(t)
	priorPath := bundledPriorWithIndex(t)
	tmp := t.TempDir()
	src := filepath.Join(geolifeDir, "004", "20081024155859.plt")
	args := func(in, out string, more ...string) []string {
		return append([]string{"sanitize", "--in", in, "--out", out, "--prior", priorPath, "--epsilon", "1", "--lambda", "2", "--radius", "100", "--force", "--ledger", filepath.Join(tmp, "ledger.json")}, more...)
	}
	dropped := filepath.Join(tmp, "someone", "2009", "renamed.plt")
	dropRows(t, src, dropped, 3)
	csv := filepath.Join(tmp, "converted.csv")
	runJSON(t, "convert", "--in", src, "--out", csv, "--force")
	for _, in := range []string{dropped, csv, filepath.Join(tmp, "someone")} {
		out := filepath.Join(tmp, "out"+filepath.Ext(in))
		if filepath.Ext(in) == "" {
			out = filepath.Join(tmp, "outdir")
		}
		_, _, err := run(t, args(in, out)...)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if filepath.Ext(in) == "" { // a corpus lists each refused person in its manifest
			b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
			msg += string(b)
		}
		if err == nil || !strings.Contains(msg, "fitted on data of the input") || !strings.Contains(msg, "--allow-prior-overlap") {
			t.Errorf("sanitize %s: %v, want a refusal as self-fitted", in, err)
		}
	}
	v := runJSON(t, args(dropped, filepath.Join(tmp, "allowed.plt"), "--allow-prior-overlap")...)
	classes := v["secret_classes"].(map[string]any)
	for _, c := range []string{"points", "places", "route"} {
		if cc := classes[c].(map[string]any); cc["covered"].(bool) {
			t.Errorf("allowed overlap: %s covered", c)
		}
	}
	if v["prior_coverage"] != sanitize.PriorOverlapOverridden {
		t.Errorf("prior coverage %v", v["prior_coverage"])
	}
	stdout, _, err := run(t, args(dropped, filepath.Join(tmp, "allowed.plt"), "--allow-prior-overlap")...)
	if err != nil || !strings.Contains(stdout, "NO GUARANTEE") || strings.Contains(stdout, "certified epsilon") {
		t.Errorf("text of an allowed overlap (%v):\n%s", err, stdout)
	}
	// Negative control: user 000 is not in the corpus.
	held := filepath.Join(geolifeDir, "000", "20081029093038.plt")
	v = runJSON(t, args(held, filepath.Join(tmp, "held.plt"))...)
	if v["prior_coverage"] != sanitize.PriorIndependent || !v["secret_classes"].(map[string]any)["route"].(map[string]any)["covered"].(bool) {
		t.Errorf("user 000: coverage %v", v["prior_coverage"])
	}
	// Without the index beside the prior, the release says it could not
	// check.
	os.Remove(prior.CorpusIndexPath(priorPath))
	v = runJSON(t, args(dropped, filepath.Join(tmp, "unchecked.plt"))...)
	if v["prior_coverage"] != sanitize.PriorIndexMissing {
		t.Errorf("no index: coverage %v", v["prior_coverage"])
	}
}

// membershipTestable reports whether doc holds a value computable from the
// trace tr alone (without a secret): its whole-trace or person
// fingerprint, the key of one of its fixes (hex or decimal), or the keys
// of its fixes as an index encodes them. A published prior must hold none.
func membershipTestable(doc []byte, tr *trace.Trace) bool {
	s := string(doc)
	cands := []string{trace.Fingerprint(tr), trace.PersonFingerprint(tr.UID), trace.CorpusIndexOf(tr).FixKeys}
	for _, k := range trace.FixHashes(tr) {
		cands = append(cands, formatHex(k), formatDec(k))
	}
	for _, c := range cands {
		if c != "" && strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// TestFitPublishesNoMembership fits on a corpus and checks that the prior
// file lets no one test whether a trace was in it, while the private index
// written beside it (mode 0600) does. A prior of version 3 fails the same
// check (the control: it records the trace's fingerprint).
func TestFitPublishesNoMembership(t *testing.T) {
	dir := fitCorpus(t)
	out := filepath.Join(t.TempDir(), "prior.json")
	if _, _, err := run(t, "fit", "--in", dir, "--corpus", "--kernel", "matern52", "--out", out); err != nil {
		t.Fatal(err)
	}
	trs, err := sample.Traces()
	if err != nil {
		t.Fatal(err)
	}
	tr := trs[0]
	tr.UID = "000" // fitCorpus's folder
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if membershipTestable(doc, tr) || strings.Contains(string(doc), "fingerprints") {
		t.Errorf("the public prior lets a reader test membership:\n%s", doc)
	}
	ip := prior.CorpusIndexPath(out)
	st, err := os.Stat(ip)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("corpus index %s: %v, mode %v", ip, err, st)
	}
	x, err := trace.ReadCorpusIndexFile(ip)
	if err != nil || x.Shared(tr) != tr.Len() || !x.HasPerson("000") {
		t.Errorf("index: %v, %d of %d fixes shared", err, x.Shared(tr), tr.Len())
	}
	// Control: a version 3 prior's fingerprints are found by the check.
	old := []byte(`{"fit": {"fingerprints": ["` + trace.Fingerprint(tr) + `"]}}`)
	if !membershipTestable(old, tr) {
		t.Error("the membership check misses a version 3 prior's fingerprint")
	}
	// And sanitize refuses the fitted trace with this prior.
	if _, _, err := run(t, "sanitize", "--in", filepath.Join(dir, "000", isample.Name), "--out", filepath.Join(t.TempDir(), "s.plt"), "--prior", out,
		"--epsilon", "1", "--lambda", "2", "--radius", "100"); err == nil || !strings.Contains(err.Error(), "fitted on data of the input") {
		t.Errorf("sanitize of the fitted trace: %v", err)
	}
}

func formatHex(k uint64) string { return strconv.FormatUint(k, 16) }
func formatDec(k uint64) string { return strconv.FormatUint(k, 10) }
