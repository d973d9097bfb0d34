package corpus

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// TestGroupUnits: files sharing a person form one unit, largest first,
// unreadable files are handed back, and the order of the scans does not
// matter (the Beam pipeline hands them over in any order).
func TestGroupUnits(t *testing.T) {
	t.Parallel()
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
	wantBad := []FileScan{{Path: "/r/e.plt", Err: "broken"}}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 0, 3, 1}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			t.Parallel()
			var in []FileScan
			for _, i := range order {
				in = append(in, scans[i])
			}
			units, bad := GroupUnits(in)
			if !reflect.DeepEqual(units, want) || !reflect.DeepEqual(bad, wantBad) {
				t.Errorf("units %+v, unreadable %+v", units, bad)
			}
		})
	}
	if err := wantBad[0].ReadError(); err == nil || err.Error() != "broken" {
		t.Errorf("ReadError of an unreadable file: %v", err)
	}
	if err := scans[0].ReadError(); err != nil {
		t.Errorf("ReadError of a file read: %v", err)
	}
}

// TestCheckDirs: the output may not be the input or inside it.
func TestCheckDirs(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	for _, c := range []struct {
		name, out string
		ok        bool
	}{
		{"beside", in + "-out", true},
		{"same", in, false},
		{"inside", filepath.Join(in, "rel"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := CheckDirs(in, c.out)
			var pe *param.Error
			if c.ok != (err == nil) || (err != nil && (!errors.As(err, &pe) || pe.Name != "out")) {
				t.Errorf("CheckDirs(%s, %s) = %v", in, c.out, err)
			}
		})
	}
}

// TestCensusRefused: the persons of the scans, with their files and
// points, and the refusal of files of no person, named relative to the
// root.
func TestCensusRefused(t *testing.T) {
	t.Parallel()
	scans := []FileScan{
		{Path: "/r/a/x.plt", People: []UIDPoints{{"a", 10}}, Points: 10},
		{Path: "/r/a/y/z.plt", People: []UIDPoints{{"a", 5}}, Points: 5},
		{Path: "/r/p.csv", People: []UIDPoints{{"a", 1}, {"b", 2}}, Points: 3},
		{Path: "/r/broken.plt", Err: "broken"},
	}
	want := []trace.PersonCount{{UID: "a", Files: 3, Points: 16}, {UID: "b", Files: 1, Points: 2}}
	if got := Census(scans); !reflect.DeepEqual(got, want) {
		t.Errorf("Census = %+v, want %+v", got, want)
	}
	if err := Refused("/r", scans); err != nil {
		t.Errorf("Refused without files of no person: %v", err)
	}
	scans = append(scans, FileScan{Path: "/r/loose.plt", Err: "loose.plt: no person", NoPerson: true})
	err := Refused("/r", scans)
	if !errors.Is(err, trace.ErrNoPerson) || !strings.Contains(err.Error(), "1 files have no person") || !strings.Contains(err.Error(), "loose.plt") {
		t.Errorf("Refused = %v", err)
	}
}

// TestJoinPersons: under --corpus, one uid found in two child folders (a
// data uid merged into each folder's person, or GeoLife's Data/<uid> beside
// a folder <uid>) makes the folders one person, released as the least
// name, with the renaming in Merged and the units' Alias; folders that
// merely share a subfolder name (2008) stay apart.
func TestJoinPersons(t *testing.T) {
	t.Parallel()
	scans := []FileScan{
		// Folders A and B each hold a CSV whose uid column says 008.
		{Path: "/r/A/x.csv", People: []UIDPoints{{"A", 10}}, Points: 10, Merged: []trace.Merge{{File: "/r/A/x.csv", DataUID: "008", Person: "A"}}},
		{Path: "/r/B/y.csv", People: []UIDPoints{{"B", 5}}, Points: 5, Merged: []trace.Merge{{File: "/r/B/y.csv", DataUID: "008", Person: "B"}}},
		// GeoLife's Data/009 and a folder 009.
		{Path: "/r/Data/009/Trajectory/z.plt", People: []UIDPoints{{"Data", 7}}, Points: 7},
		{Path: "/r/009/w.plt", People: []UIDPoints{{"009", 3}}, Points: 3},
		// C and D share only a subfolder's name.
		{Path: "/r/C/2008/a.plt", People: []UIDPoints{{"C", 4}}, Points: 4},
		{Path: "/r/D/2008/b.plt", People: []UIDPoints{{"D", 2}}, Points: 2},
	}
	joined, alias := JoinPersons(scans)
	if want := map[string]string{"B": "A", "Data": "009"}; !reflect.DeepEqual(alias, want) {
		t.Errorf("alias %v, want %v", alias, want)
	}
	var census []string
	for _, p := range Census(joined) {
		census = append(census, fmt.Sprintf("%s:%d", p.UID, p.Points))
	}
	if want := []string{"009:10", "A:15", "C:4", "D:2"}; !slices.Equal(census, want) {
		t.Errorf("census %v, want %v", census, want)
	}
	if m := joined[1].Merged; len(m) != 2 || m[1] != (trace.Merge{File: "/r/B/y.csv", DataUID: "B", Person: "A", Joined: true}) {
		t.Errorf("B's file: merged %+v", m)
	}
	if len(scans[1].Merged) != 1 || scans[1].People[0].UID != "B" {
		t.Errorf("JoinPersons changed its input: %+v", scans[1])
	}
	units, _ := GroupUnits(scans)
	byUID := map[string]Unit{}
	for _, u := range units {
		byUID[strings.Join(u.UIDs, "+")] = u
	}
	if u := byUID["A"]; len(u.Files) != 2 || u.Alias["B"] != "A" || u.Points != 15 {
		t.Errorf("unit of A and B: %+v (units %+v)", u, units)
	}
	if u := byUID["009"]; len(u.Files) != 2 || u.Alias["Data"] != "009" {
		t.Errorf("unit of 009: %+v", u)
	}
	if len(units) != 4 {
		t.Errorf("%d units, want 4: %+v", len(units), units)
	}
}
