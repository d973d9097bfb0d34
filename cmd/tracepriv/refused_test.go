package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listTree lists every path under dir (relative), for comparing the file
// system before and after a run.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			r, _ := filepath.Rel(dir, p)
			out = append(out, r)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestRefusedRunLeavesNothing: a run that fails or is refused leaves the
// file system as it found it (issue 32: release left an empty --out, a
// corpus sanitize whose every person failed left manifest.json, an empty
// certificates/ and printed "certified epsilon at most 0"), and never
// deletes a --out folder the user had.
func TestRefusedRunLeavesNothing(t *testing.T) {
	dir, plt, prior := samplePaths(t)
	corpus := filepath.Join(dir, "corpus")
	for _, p := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(corpus, p), 0o755)
		os.WriteFile(filepath.Join(corpus, p, "t.plt"), mustRead(t, plt), 0o644)
	}
	unreadable := filepath.Join(dir, "unreadable.seq")
	os.WriteFile(unreadable, []byte("1 2 x\n"), 0o644)
	mine := filepath.Join(dir, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "keep.txt"), []byte("the user's"), 0o644)

	// Every person fails: an extreme radius no noise can serve.
	failAll := func(out string) []string {
		return []string{"sanitize", "--in", corpus, "--corpus", "--out", out, "--prior", prior,
			"--epsilon", "1", "--lambda", "2", "--radius", "1e308", "--no-ledger"}
	}
	release := func(out string) []string {
		return []string{"release", "--in", unreadable, "--out", out, "--mechanism", "ngram", "--epsilon", "1", "--alphabet", "3"}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"release, new --out", release(filepath.Join(dir, "new", "rel"))},
		{"release, the user's --out", release(mine)},
		{"corpus sanitize, new --out", failAll(filepath.Join(dir, "new", "san"))},
		{"corpus sanitize, the user's --out", failAll(mine)},
	} {
		before := listTree(t, dir)
		stdout, _, err := run(t, append(tc.args, "-q")...)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if after := listTree(t, dir); !slices.Equal(after, before) {
			t.Errorf("%s: the run changed the file system:\nbefore %v\nafter  %v", tc.name, before, after)
		}
		if strings.Contains(stdout, "certified") {
			t.Errorf("%s: a failed run printed a certified epsilon: %q", tc.name, stdout)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mine, "keep.txt")); err != nil || string(b) != "the user's" {
		t.Errorf("the user's file: %q, %v", b, err)
	}
}
