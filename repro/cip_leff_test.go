package repro

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestRecordedLEffBands checks the l_eff quartiles repro cip shades by
// default against the authors' fits, when they are beside the repository.
func TestRecordedLEffBands(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "meehan-leff")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the paper's l_eff fits are not at %s", dir)
	}
	got, err := LoadLEffBands(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range RecordedLEffBands() {
		g := got[k]
		if g == nil || g.Values != want.Values {
			t.Fatalf("%s: %+v, want %+v", k, g, want)
		}
		for _, q := range [][2]float64{{g.Q25, want.Q25}, {g.Median, want.Median}, {g.Q75, want.Q75}} {
			if math.Abs(q[0]-q[1]) > 1e-9 {
				t.Errorf("%s: computed %+v, recorded %+v", k, g, want)
			}
		}
	}
	if _, err := LoadLEffBands(filepath.Join(dir, "l_eff_x.csv")); err == nil {
		t.Error("a file accepted as --leff-data")
	}
}
