package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPersonDir checks the one person rule on GeoLife's layout, nested
// folders, flat corpora and a root that is one person's directory.
func TestPersonDir(t *testing.T) {
	for _, c := range []struct{ root, path, want string }{
		{"", "Data/000/Trajectory/x.plt", "000"},
		{"", "Data/000/Trajectory/sub/y.plt", "000"},
		{"", "Data/000/Trajectory/sub/deeper/z.plt", "000"},
		{"", "data/003/x.plt", "003"},
		{"", "x.plt", ""},
		{"", "/x.plt", ""},
		{"Data", "Data/000/Trajectory/sub/y.plt", "000"},
		{"geolife", "geolife/Data/001/Trajectory/y.plt", "001"},
		{"Data/000", "Data/000/Trajectory/sub/y.plt", "000"},
		{"Data/000/Trajectory", "Data/000/Trajectory/sub/y.plt", "000"},
		{"corpus", "corpus/003/2008/x.csv", "003"},
		{"corpus/003", "corpus/003/x.csv", "003"},
		// A Trajectory folder above the root does not name the person.
		{"/srv/Trajectory/corpus", "/srv/Trajectory/corpus/u1/x.csv", "u1"},
		// A path outside the root falls back to the rule without a root.
		{"corpus", "other/004/x.csv", "004"},
	} {
		if got := PersonDir(c.root, c.path); got != c.want {
			t.Errorf("PersonDir(%q, %q) = %q, want %q", c.root, c.path, got, c.want)
		}
	}
}

// TestReadFileNestedPerson reads a GeoLife user with a nested folder, and a
// CSV corpus without a uid column, through ReadFiles with Root set: every
// file of one person's directory is that person.
func TestReadFileNestedPerson(t *testing.T) {
	dir := t.TempDir()
	plt := pltHead + pltRows
	csv := "time,lat,lon\n2008-10-24T02:09:59Z,39.98,116.31\n2008-10-24T02:10:04Z,39.98,116.32\n"
	for path, body := range map[string]string{
		"Data/000/Trajectory/a.plt":         plt,
		"Data/000/Trajectory/sub/b.plt":     plt,
		"Data/001/Trajectory/c.plt":         plt,
		"flat/005/2008/d.csv":               csv,
		"flat/005/e.csv":                    csv,
		"flat/006/f.csv":                    csv,
		"Data/000/Trajectory/sub/g/h.plt":   plt,
		"Data/001/Trajectory/2009/12/i.plt": plt,
	} {
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for root, want := range map[string]map[string]int{
		filepath.Join(dir, "Data"): {"000": 3, "001": 2},
		filepath.Join(dir, "flat"): {"005": 2, "006": 1},
	} {
		files, _, err := Files(root)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		_, err = ReadFiles(files, ReadOptions{Root: root, Corpus: true}, func(path string, ts []*Trace) {
			for _, tr := range ts {
				got[tr.UID]++
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: persons %v, want %v", root, got, want)
		}
		for uid, n := range want {
			if got[uid] != n {
				t.Errorf("%s: person %q has %d traces, want %d (all: %v)", root, uid, got[uid], n, got)
			}
		}
	}
}
