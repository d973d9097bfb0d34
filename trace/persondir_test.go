package trace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUserDir checks the folder rule without a root on GeoLife's layout,
// nested folders and flat ones.
func TestUserDir(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"Data/000/Trajectory/x.plt", "000"},
		{"Data/000/Trajectory/sub/y.plt", "000"},
		{"Data/000/Trajectory/sub/deeper/z.plt", "000"},
		{"data/003/x.plt", "003"},
		{"other/004/x.csv", "004"},
		{"x.plt", ""},
		{"/x.plt", ""},
	} {
		if got := UserDir(c.path); got != c.want {
			t.Errorf("UserDir(%q) = %q, want %q", c.path, got, c.want)
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
