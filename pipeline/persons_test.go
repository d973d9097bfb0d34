package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// TestSanitizePersons: the pipeline names persons by the one person rule
// of the CLI and sanitize.Corpus. A person's folder nested three deep is
// one person, as the whole input or as a child folder of a corpus; a
// file of no person directly in a corpus fails the job before anything
// is drawn.
func TestSanitizePersons(t *testing.T) {
	lines := strings.SplitAfter(string(sample.PLT), "\n")
	head, rows := strings.Join(lines[:6], ""), lines[6:]
	in := t.TempDir()
	third := len(rows) / 3
	for i, p := range []string{"Q/008/2008/10/phone/a.plt", "Q/008/2008/11/watch/b.plt", "Q/008/2009/01/phone/c.plt"} {
		path := filepath.Join(in, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(head+strings.Join(rows[i*third:(i+1)*third], "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		pattern string
		corpus  bool
	}{{"Q/008/**/*.plt", false}, {"Q/**/*.plt", true}} {
		o := testOptions(filepath.Join(in, filepath.FromSlash(c.pattern)), filepath.Join(t.TempDir(), "out"), 3)
		o.AsCorpus = c.corpus
		res, err := Sanitize(context.Background(), o)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if ps := res.Manifest.Persons; len(ps) != 1 || ps[0].UID != "008" || len(ps[0].Files) != 3 {
			t.Errorf("%s (corpus %v): persons %+v, want the one person 008 with 3 files", c.pattern, c.corpus, ps)
		}
	}
	// A loose file in the corpus root.
	if err := os.WriteFile(filepath.Join(in, "Q", "loose.plt"), []byte(head+strings.Join(rows[:third], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(filepath.Join(in, "Q", "**", "*.plt"), filepath.Join(t.TempDir(), "out"), 3)
	o.AsCorpus = true
	if _, err := Sanitize(context.Background(), o); err == nil || !strings.Contains(err.Error(), "loose.plt") || !strings.Contains(err.Error(), trace.ErrNoPerson.Error()) {
		t.Errorf("a loose file in a corpus: %v", err)
	}
}
