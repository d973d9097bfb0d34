package infile_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/infile"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOpenByContent reads gzip by its magic bytes whatever the name, and
// plain files unchanged, including files shorter than the magic.
func TestOpenByContent(t *testing.T) {
	dir := t.TempDir()
	const text = "1 2 3\n4 5\n"
	cases := map[string][]byte{
		"plain.seq":       []byte(text),
		"named.seq.gz":    gz(t, text),
		"renamed.seq":     gz(t, text), // compressed, named as text
		"plain-but-gz.gz": []byte(text),
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := infile.ReadFile(p)
		if err != nil || string(got) != text {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, text)
		}
	}
	for _, short := range []string{"", "x", "\x1f"} {
		p := filepath.Join(dir, "short")
		if err := os.WriteFile(p, []byte(short), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := infile.ReadFile(p); err != nil || string(got) != short {
			t.Errorf("%q: got %q, %v", short, got, err)
		}
	}
}

// TestTruncatedGzipNamesFile: a cut gzip file is an error naming it, not
// silently shorter data.
func TestTruncatedGzipNamesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cut.gz")
	b := gz(t, strings.Repeat("1 2 3\n", 1000))
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := infile.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = io.ReadAll(f)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("err = %v, want one naming %s as truncated", err, p)
	}
}

func TestExcerpt(t *testing.T) {
	bin := gz(t, strings.Repeat("binary ", 500))
	e := infile.Excerpt(bin)
	if len(e) > 4*infile.ExcerptLen+40 {
		t.Errorf("excerpt of %d bytes is %d long: %s", len(bin), len(e), e)
	}
	if strings.ContainsRune(e, 0) || strings.Contains(e, "\x8b") {
		t.Errorf("excerpt holds raw binary: %q", e)
	}
	if got := infile.Excerpt([]byte("abc")); got != `"abc"` {
		t.Errorf("short excerpt = %s", got)
	}
}

func TestPublicName(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"data/000":                        "data/000",
		"./data/000/":                     "data/000",
		filepath.Join(wd, "data", "009"):  "data/009",
		"/elsewhere/alice/geolife/010":    "010",
		"../shared/data/geolife/Data/000": "000",
		wd:                                filepath.Base(wd),
		".":                               filepath.Base(wd),
	} {
		got := infile.PublicName(in)
		if got != filepath.FromSlash(want) {
			t.Errorf("PublicName(%q) = %q, want %q", in, got, want)
		}
		if filepath.IsAbs(got) {
			t.Errorf("PublicName(%q) = %q is absolute", in, got)
		}
	}
}
