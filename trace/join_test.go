package trace

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestPersonRuleJoins: in a corpus, one uid found in two child folders (a
// CSV uid column saying 008 in A and in B; GeoLife's Data/009 beside a
// folder 009) makes them one person, released as the least name, however
// deep the files lie; folders that share only a subfolder's name (2008)
// stay apart. ReadPaths hands fn the joined persons and lists each join
// in Report.Merged, which WriteMerges says apart from the rule's merges.
// (Issue 31: fit, convert, inspect and plot saw A and B as two persons.)
func TestPersonRuleJoins(t *testing.T) {
	dir := t.TempDir()
	plt := []byte(pltHead + pltRows) // 3 points
	csv := []byte("uid,time,lat,lon\n008,1,39.9,116.3\n008,2,39.9,116.31\n")
	writeFile(t, dir, "j/A/x.csv", csv)
	writeFile(t, dir, "j/B/2008/10/phone/y.csv", csv)
	for _, f := range []string{"j/Data/009/Trajectory/z.plt", "j/009/w.plt", "j/C/2008/a.plt", "j/D/2008/b.plt"} {
		writeFile(t, dir, f, plt)
	}
	in := filepath.Join(dir, "j")
	got, rep, err := readPersons(t, in, PersonRule{Corpus: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"A": 4, "009": 6, "C": 3, "D": 3}
	if len(got) != len(want) {
		t.Errorf("persons %v, want %v", got, want)
	}
	for uid, n := range want {
		if got[uid] != n {
			t.Errorf("person %q: %d points, want %d (all %v)", uid, got[uid], n, got)
		}
	}
	var joins []string
	for _, m := range rep.Merged {
		if m.Joined {
			joins = append(joins, m.DataUID+">"+m.Person)
		}
	}
	if strings.Join(joins, " ") != "B>A Data>009" && strings.Join(joins, " ") != "Data>009 B>A" {
		t.Errorf("joins %v in %+v", joins, rep.Merged)
	}
	var text bytes.Buffer
	WriteMerges(&text, rep.Merged)
	for _, w := range []string{`"B" is released as "A"`, `"Data" is released as "009"`, "same uid", `uid "008"`} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("WriteMerges does not say %q:\n%s", w, text.String())
		}
	}
	// Without --corpus the input is one person: nothing to join.
	got, rep, err = readPersons(t, in, PersonRule{})
	if err != nil || len(got) != 1 || got["j"] != 16 {
		t.Errorf("one person: %v, %v", got, err)
	}
	for _, m := range rep.Merged {
		if m.Joined {
			t.Errorf("a join without --corpus: %+v", m)
		}
	}
	// A corpus of PLT files in GeoLife's layout cannot join and streams;
	// CSVs, or Data/009/Trajectory inside the person Data, may join.
	writeFile(t, dir, "geo/Data/000/Trajectory/a.plt", plt)
	writeFile(t, dir, "geo/Data/001/Trajectory/2008/b.plt", plt)
	for _, c := range []struct {
		in   string
		want bool
	}{{"geo/Data", false}, {"j", true}, {"j/Data", false}, {"j/C", false}} {
		if got := mayJoin([]string{filepath.Join(dir, filepath.FromSlash(c.in))}, ReadOptions{Corpus: true}); got != c.want {
			t.Errorf("mayJoin(%s) = %v, want %v", c.in, got, c.want)
		}
	}
	if !mayJoin([]string{filepath.Join(dir, "geo", "Data")}, ReadOptions{Corpus: true, Format: CSV}) {
		t.Error("mayJoin with --from csv: false")
	}
	// The order of files does not matter.
	files := []FilePersons{{Path: "/r/b/x.csv", Persons: []string{"b"}, Merged: []Merge{{File: "/r/b/x.csv", DataUID: "u", Person: "b"}}},
		{Path: "/r/a/y.csv", Persons: []string{"a"}, Merged: []Merge{{File: "/r/a/y.csv", DataUID: "u", Person: "a"}}}}
	a1, _ := JoinPersons(files)
	a2, _ := JoinPersons([]FilePersons{files[1], files[0]})
	if len(a1) != 1 || a1["b"] != "a" || len(a2) != 1 || a2["b"] != "a" {
		t.Errorf("alias %v and %v, want b -> a", a1, a2)
	}
}
