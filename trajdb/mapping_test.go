package trajdb

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
)

// mapAt is a test time, minutes after an arbitrary start.
func mapAt(minutes float64) time.Time {
	return time.Date(2008, 10, 23, 2, 0, 0, 0, time.UTC).Add(time.Duration(minutes * float64(time.Minute)))
}

// mapGrid is a 1 km grid over a small box; mapFix places a fix at the
// centre of a cell ("out" is a position outside the box).
func mapGrid(t *testing.T) *Grid {
	t.Helper()
	g, err := NewGrid(trace.BBox{MinLat: 39.9, MinLon: 116.3, MaxLat: 39.95, MaxLon: 116.36}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const mapOut = -1

func mapFixes(g *Grid, cells []int, minutes []float64) []trace.Point {
	pts := make([]trace.Point, len(cells))
	for i, c := range cells {
		p := geo.Point{Lat: 39.5, Lon: 116.3} // south of the box
		if c != mapOut {
			p = g.Centre(c)
		}
		pts[i] = trace.Point{Time: mapAt(minutes[i]), Lat: p.Lat, Lon: p.Lon, Alt: math.NaN()}
	}
	return pts
}

func mapSteps(n int) []float64 {
	m := make([]float64, n)
	for i := range m {
		m[i] = float64(i)
	}
	return m
}

func TestMappingRule(t *testing.T) {
	t.Parallel()
	g := mapGrid(t)
	cases := []struct {
		name    string
		cells   []int
		minutes []float64
		opt     MapOptions
		want    [][]int
		rep     MapReport // only the counts by reason are compared
	}{
		{"repeats collapse", []int{3, 3, 4, 4, 4, 3}, mapSteps(6), MapOptions{},
			[][]int{{3, 4, 3}}, MapReport{Repeats: 3}},
		{"outside ends the trajectory", []int{1, 2, mapOut, mapOut, 2, 5}, mapSteps(6), MapOptions{},
			[][]int{{1, 2}, {2, 5}}, MapReport{Outside: 2}},
		{"gap splits", []int{1, 2, 2, 3, 4}, []float64{0, 1, 2, 13, 14}, MapOptions{},
			[][]int{{1, 2}, {3, 4}}, MapReport{Repeats: 1, GapSplits: 1}},
		{"gap of exactly MaxGap does not split", []int{1, 2}, []float64{0, 10}, MapOptions{},
			[][]int{{1, 2}}, MapReport{}},
		{"a repeat after a gap starts the new trajectory", []int{1, 1}, []float64{0, 30}, MapOptions{},
			[][]int{{1}, {1}}, MapReport{GapSplits: 1}},
		{"configured gap", []int{1, 2, 3}, []float64{0, 3, 6}, MapOptions{MaxGap: 2 * time.Minute},
			[][]int{{1}, {2}, {3}}, MapReport{GapSplits: 2}},
		{"negative gap never splits", []int{1, 2}, []float64{0, 600}, MapOptions{MaxGap: -1},
			[][]int{{1, 2}}, MapReport{}},
		{"short dropped", []int{1, 1, mapOut, 2, 3, 4}, mapSteps(6), MapOptions{MinLen: 2},
			[][]int{{2, 3, 4}}, MapReport{Repeats: 1, Outside: 1, Short: 1, ShortSymbols: 1}},
		{"all outside", []int{mapOut, mapOut}, mapSteps(2), MapOptions{},
			nil, MapReport{Outside: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace.Trace{UID: "u", Points: mapFixes(g, tc.cells, tc.minutes)}
			db, rep, err := FromTraces(g, []*trace.Trace{tr}, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]int
			if len(db.Users) > 0 {
				got = db.Users[0].Seqs
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sequences %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(rep.ByReason(), tc.rep.ByReason()) {
				t.Errorf("by reason %v, want %v", rep.ByReason(), tc.rep.ByReason())
			}
			if rep.Fixes != rep.Symbols+rep.ShortSymbols+rep.Repeats+rep.Outside {
				t.Errorf("fixes do not add up: %+v", rep)
			}
			if rep.Trajectories != len(tc.want) || db.Size != g.Size() {
				t.Errorf("report %+v, db size %d", rep, db.Size)
			}
			if err := db.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestFromTracesPersons(t *testing.T) {
	t.Parallel()
	g := mapGrid(t)
	trs := []*trace.Trace{
		{UID: "bob", Points: mapFixes(g, []int{1, 2}, mapSteps(2))},
		{UID: "ann", Points: mapFixes(g, []int{3}, mapSteps(1))},
		{UID: "bob", Points: mapFixes(g, []int{4, 5}, mapSteps(2))},
		{UID: "cid", Points: mapFixes(g, []int{mapOut}, mapSteps(1))},
	}
	db, rep, err := FromTraces(g, trs, MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []User{{ID: "bob", Seqs: [][]int{{1, 2}, {4, 5}}}, {ID: "ann", Seqs: [][]int{{3}}}}
	if !reflect.DeepEqual(db.Users, want) {
		t.Errorf("users %+v, want %+v (cid has no trajectory left)", db.Users, want)
	}
	if rep.Persons != 2 || rep.Traces != 4 {
		t.Errorf("report %+v", rep)
	}
	if _, _, err := FromTraces(g, []*trace.Trace{{Name: "x", Points: trs[0].Points}}, MapOptions{}); err == nil || !strings.Contains(err.Error(), "no person id") {
		t.Errorf("trace without uid: %v", err)
	}
	if _, _, err := FromTraces(g, trs, MapOptions{MinLen: -1}); err == nil {
		t.Error("negative MinLen accepted")
	}
}

// Released sequences written as traces (CSV and GeoJSON) read back to the
// same sequences; a trace without a uid belongs to its directory's person.
func TestToTracesRoundTrip(t *testing.T) {
	t.Parallel()
	g := mapGrid(t)
	seqs := [][]int{{0, 1, 2}, {5}, {7, 3, 7, 3}}
	trs, err := ToTraces(g, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if trs[2].UID != "seq3" || !trs[2].Points[3].Time.Equal(syntheticEpoch.Add(3*syntheticStep)) {
		t.Errorf("trace 3: uid %q, last time %v", trs[2].UID, trs[2].Points[3].Time)
	}
	dir := t.TempDir()
	for _, f := range []string{"out.csv", "out.geojson"} {
		path := filepath.Join(dir, f)
		if err := trace.WriteFile(path, trs, ""); err != nil {
			t.Fatal(err)
		}
		db, rep, err := FromFiles(g, []string{path}, trace.ReadOptions{}, MapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Sequences(); !reflect.DeepEqual(got, seqs) {
			t.Errorf("%s: read back %v, want %v", f, got, seqs)
		}
		if rep.Read == nil || rep.Read.Files != 1 || rep.Persons != 3 {
			t.Errorf("%s: report %+v", f, rep)
		}
	}
	// GeoJSON without uids, in per-person directories.
	for i, tr := range trs {
		tr.UID = ""
		d := filepath.Join(dir, "people", []string{"ann", "bob", "ann"}[i])
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := trace.WriteFile(filepath.Join(d, tr.Name+".geojson"), []*trace.Trace{tr}, ""); err != nil {
			t.Fatal(err)
		}
	}
	db, _, err := FromFiles(g, []string{filepath.Join(dir, "people")}, trace.ReadOptions{}, MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []User{{ID: "ann", Seqs: [][]int{{0, 1, 2}, {7, 3, 7, 3}}}, {ID: "bob", Seqs: [][]int{{5}}}}
	if !reflect.DeepEqual(db.Users, want) {
		t.Errorf("persons from directories: %+v, want %+v", db.Users, want)
	}
	if _, err := ToTraces(g, [][]int{{g.Size()}}); err == nil {
		t.Error("ToTraces accepted a symbol outside the universe")
	}
}
