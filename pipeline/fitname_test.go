package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// TestFitCorpusName: the prior Fit publishes never names its corpus by an
// absolute path of the machine, whatever the caller passes: by default
// the pattern from its root's folder, and a path given as
// FitParams.Corpus by its base name (outside the working directory).
// (Issue 31: it published the caller's pattern, an absolute path.)
func TestFitCorpusName(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{"/home/me/geolife/Data/*/Trajectory/*.plt", "Data/*/Trajectory/*.plt"},
		{"/home/me/geolife/Data/**/*.plt", "Data/**/*.plt"},
		{"/home/me/geolife/Data", "Data"},
		{"/*.plt", "*.plt"},
	} {
		if got := CorpusName(c.pattern); got != c.want {
			t.Errorf("CorpusName(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
	in := filepath.Join(t.TempDir(), "corpus")
	if err := os.MkdirAll(filepath.Join(in, "000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "000", sample.Name), sample.PLT, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ corpus, want string }{{"", "corpus/*/*.plt"}, {in, "corpus"}} {
		dir := t.TempDir()
		o := FitOptions{Input: filepath.Join(in, "*", "*.plt"), Output: filepath.Join(dir, "prior.json"), Report: filepath.Join(dir, "report.json"),
			FitParams: FitParams{Kernel: "rbf", Corpus: c.corpus}, Reading: Reading{AsCorpus: true}}
		res, err := Fit(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Prior.Fit.Corpus != c.want {
			t.Errorf("Corpus %q: the prior names its corpus %q, want %q", c.corpus, res.Prior.Fit.Corpus, c.want)
		}
		for _, f := range []string{o.Output, o.Report} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), in) {
				t.Errorf("Corpus %q: %s holds the machine's path %s", c.corpus, filepath.Base(f), in)
			}
		}
	}
}
