package sanitize

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFindCertificates finds a file's certificate beside it, and a
// corpus release's through its manifest, for the whole directory and for
// one person's file; without them the error wraps ErrNoCertificate.
func TestFindCertificates(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one.plt", "")
	write("one.plt.cert.json", "{}")
	if got, err := FindCertificates(filepath.Join(dir, "one.plt")); err != nil || !slices.Equal(got, []string{filepath.Join(dir, "one.plt.cert.json")}) {
		t.Errorf("beside a file: %v, %v", got, err)
	}
	write("rel/a/x.plt", "")
	write("rel/a/y.plt", "")
	write("rel/b/z.plt", "")
	write("rel/"+ManifestName, `{"persons": [
		{"uid": "a", "files": ["a/x.plt", "a/y.plt"], "certificate": "a.cert.json"},
		{"uid": "b", "files": ["b/z.plt"], "certificate": "b.cert.json"},
		{"uid": "c", "files": ["c/w.plt"]}]}`)
	rel := filepath.Join(dir, "rel")
	if got, err := FindCertificates(rel); err != nil || !slices.Equal(got, []string{filepath.Join(rel, "a.cert.json"), filepath.Join(rel, "b.cert.json")}) {
		t.Errorf("corpus release: %v, %v", got, err)
	}
	if got, err := FindCertificates(filepath.Join(rel, "b", "z.plt")); err != nil || !slices.Equal(got, []string{filepath.Join(rel, "b.cert.json")}) {
		t.Errorf("one file of it: %v, %v", got, err)
	}
	if got, err := FindCertificates(filepath.Join(rel, "a")); err != nil || !slices.Equal(got, []string{filepath.Join(rel, "a.cert.json")}) {
		t.Errorf("one person's folder: %v, %v", got, err)
	}
	write("bare/q.plt", "")
	write("rel/c/w.plt", "")
	for _, p := range []string{"bare", "bare/q.plt", "rel/c"} {
		if got, err := FindCertificates(filepath.Join(dir, p)); !errors.Is(err, ErrNoCertificate) {
			t.Errorf("%s: %v, %v; want ErrNoCertificate", p, got, err)
		}
	}
}
