// Package readme checks that the docs say what the code does: the library
// example of README.md is the code of snippet_test.go, which compiles and
// runs (readme_test.go); CONTRIBUTING.md's import order holds, and every
// public package's comment opens with a paragraph and code (layout_test.go).
package readme

import (
	"os"
	"path/filepath"
	"regexp"
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

	// Run it where the files it names are: the bundled sample trace under
	// the name of the .plt file it reads, the bundled prior under the name
	// of the .json file.
	dir := t.TempDir()
	files := map[string][]byte{}
	for _, m := range regexp.MustCompile(`"([^"/]+\.(plt|json))"`).FindAllStringSubmatch(strings.Join(want, "\n"), -1) {
		if m[2] == "plt" {
			files[m[1]] = sample.PLT
		} else {
			files[m[1]] = sample.Prior
		}
	}
	for name, b := range files {
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

// TestREADMEPaths: every path of the repository that README.md and
// pipeline/README.md name (a file, a directory or a glob such as the
// pipeline's '../internal/sample/*/*.plt') exists on a fresh clone, so that
// the commands a new user copies find their inputs. A path counts from the
// repository root or from pipeline/, where the Beam commands run.
func TestREADMEPaths(t *testing.T) {
	re := regexp.MustCompile(`(?:\.\./)?(?:internal|docs|sdp|pipeline|cmd|sample)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*/]`)
	for _, doc := range []string{"README.md", "pipeline/README.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range re.FindAllString(string(b), -1) {
			if seen[p] {
				continue
			}
			seen[p] = true
			found := false
			for _, base := range []string{".", "pipeline"} {
				m, err := filepath.Glob(filepath.Join("..", "..", base, filepath.FromSlash(p)))
				found = found || (err == nil && len(m) > 0)
			}
			if !found {
				t.Errorf("%s names %s, which matches nothing in the repository", doc, p)
			}
		}
	}
}
