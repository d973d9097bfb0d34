// Package readme checks the library example of README.md: it must be the
// code of snippet_test.go, which compiles and runs.
package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/internal/sample"
)

// between returns the lines of s after the line containing begin and up to
// the line containing end.
func between(t *testing.T, s, begin, end string) []string {
	t.Helper()
	var out []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		switch {
		case !in && strings.Contains(l, begin):
			in = true
		case in && strings.Contains(l, end):
			return out
		case in:
			out = append(out, l)
		}
	}
	t.Fatalf("no %q ... %q block", begin, end)
	return nil
}

func TestREADMESnippet(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("snippet_test.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "## A short example (library)")
	if i < 0 {
		t.Fatal(`README.md has no "## A short example (library)" section`)
	}
	want := between(t, text[i:], "```go", "```")
	got := between(t, string(code), "// BEGIN README", "// END README")
	if len(got) != len(want) {
		t.Fatalf("README.md's example has %d lines, snippet_test.go %d: copy the README's code into snippet_test.go", len(want), len(got))
	}
	for k := range want {
		if strings.TrimPrefix(got[k], "\t") != want[k] {
			t.Errorf("line %d differs:\n README:  %q\n snippet: %q", k+1, want[k], got[k])
		}
	}

	// Run it where the files it names are.
	dir := t.TempDir()
	for name, b := range map[string][]byte{"20081024020959.plt": sample.PLT, "prior.json": sample.Prior} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	stdout := os.Stdout
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	os.Stdout = null // the snippet prints a certificate
	defer func() { os.Stdout = stdout }()
	snippet()
}
