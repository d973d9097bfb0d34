package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// geolifeSubset copies, for -short runs, two files of each of the first
// `users` GeoLife users (000, held out of the bundled prior, first; then
// people of the prior's corpus) into a temporary corpus laid out as the
// excerpt is, and returns its root, user directories and files: each
// user's shortest file (the excerpt's edge cases, down to 7 fixes) and its
// shortest of at least minRows rows (long enough for fit's 30-minute
// windows). The commands see the same kinds of input as on the whole
// excerpt at a tenth of the cost.
func geolifeSubset(t *testing.T, users int) (root string, dirs, files []string) {
	t.Helper()
	const minRows = 700
	all, _ := filepath.Glob(filepath.Join(geolifeDir, "[0-9][0-9][0-9]"))
	if len(all) < users {
		t.Skipf("GeoLife data not found at %s", geolifeDir)
	}
	root = filepath.Join(t.TempDir(), "geolife")
	for _, u := range all[:users] {
		src, _ := filepath.Glob(filepath.Join(u, "*.plt"))
		body := map[string][]byte{}
		for _, f := range src {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			body[f] = b
		}
		rows := func(f string) int { return bytes.Count(body[f], []byte{'\n'}) }
		slices.SortFunc(src, func(a, b string) int { return rows(a) - rows(b) })
		pick := []string{src[0]}
		if i := slices.IndexFunc(src, func(f string) bool { return rows(f) >= minRows }); i > 0 {
			pick = append(pick, src[i])
		}
		dir := filepath.Join(root, filepath.Base(u))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range pick {
			dst := filepath.Join(dir, filepath.Base(f))
			if err := os.WriteFile(dst, body[f], 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, dst)
		}
		dirs = append(dirs, dir)
	}
	slices.Sort(files) // as filepath.Glob of root/*/*.plt lists them
	return root, dirs, files
}
