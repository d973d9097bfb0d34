package prior

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitCorpusPublic: whatever Options.Corpus a caller passes (the
// pipeline passed its input pattern, an absolute path), the published
// prior names the corpus without an absolute path of the machine: inside
// the working directory relative to it, else by its base name.
func TestFitCorpusPublic(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	traces := gpTraces(t, 2, regular(0, 2, 400), 20, 25, 31)
	corpus := "/home/someone/secret/geolife, " + filepath.Join(wd, "testdata", "x") + ", data/rel, GeoLife 000-007"
	p, _, err := FitPaper(traces, PaperOptions{Kernel: "rbf", Corpus: corpus})
	if err != nil {
		t.Fatal(err)
	}
	if want := "geolife, " + filepath.Join("testdata", "x") + ", data/rel, GeoLife 000-007"; p.Fit.Corpus != want {
		t.Errorf("corpus %q, want %q", p.Fit.Corpus, want)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"/home/someone", wd} {
		if strings.Contains(b.String(), leak) {
			t.Errorf("the published prior holds %q:\n%s", leak, b.String())
		}
	}
	if p.Origin == nil || !strings.Contains(b.String(), "(geolife, ") {
		t.Errorf("the origin's note does not name the corpus:\n%s", b.String())
	}
}
