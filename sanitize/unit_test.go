package sanitize

import (
	"reflect"
	"slices"
	"testing"
)

// TestGroupUnits: files sharing a person form one unit, largest first,
// unreadable files are failures relative to the root, and the order of the
// scans does not matter (the Beam pipeline hands them over in any order).
func TestGroupUnits(t *testing.T) {
	scans := []FileScan{
		{Path: "/r/a.plt", People: []UIDPoints{{"u1", 10}}, Points: 10},
		{Path: "/r/b.csv", People: []UIDPoints{{"u1", 3}, {"u2", 5}}, Points: 8},
		{Path: "/r/c/d.plt", People: []UIDPoints{{"u3", 7}}, Points: 7},
		{Path: "/r/e.plt", Err: "broken"},
		{Path: "/r/f.csv", People: []UIDPoints{{"u2", 1}, {"u4", 30}}, Points: 31},
	}
	want := []Unit{
		{Files: []string{"/r/a.plt", "/r/b.csv", "/r/f.csv"}, UIDs: []string{"u1", "u2", "u4"}, Points: 49},
		{Files: []string{"/r/c/d.plt"}, UIDs: []string{"u3"}, Points: 7},
	}
	wantFail := []Failure{{Files: []string{"e.plt"}, Error: "broken"}}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 0, 3, 1}} {
		var in []FileScan
		for _, i := range order {
			in = append(in, scans[i])
		}
		units, failed := GroupUnits("/r", in)
		if !reflect.DeepEqual(units, want) || !reflect.DeepEqual(failed, wantFail) {
			t.Errorf("order %v: units %+v, failed %+v", order, units, failed)
		}
	}
	if u := want[1]; !slices.Equal(u.Failure("/r", errBoom{}).Files, []string{"c/d.plt"}) {
		t.Errorf("unit failure %+v", u.Failure("/r", errBoom{}))
	}
}

type errBoom struct{}

func (errBoom) Error() string { return "boom" }
