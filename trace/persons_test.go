package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readPersons reads in with ReadPaths under rule and returns the points of
// each person and the report.
func readPersons(t *testing.T, in string, rule PersonRule) (map[string]int, *Report, error) {
	t.Helper()
	got := map[string]int{}
	_, rep, err := ReadPaths([]string{in}, ReadOptions{Strict: true, Corpus: rule.Corpus, UID: rule.UID}, func(_ string, ts []*Trace) {
		for _, tr := range ts {
			got[tr.UID] += tr.Len()
		}
	})
	return got, rep, err
}

// TestPersonRule checks the one person rule: an input is one person unless
// declared a corpus, whatever its folders or its data's uids; a corpus is
// one person per child folder or per uid; a corpus file without a uid is
// refused.
func TestPersonRule(t *testing.T) {
	dir := t.TempDir()
	plt := []byte(pltHead + pltRows) // 3 points
	csv := []byte("uid,time,lat,lon\nalice,1,39.9,116.3\nalice,2,39.9,116.31\nbob,3,39.9,116.32\n")
	for _, f := range []string{
		// One person's folder, nested three deep (year/month/device).
		"q/008/2008/10/phone/a.plt", "q/008/2008/11/watch/b.plt", "q/008/2009/01/phone/c.plt", "q/008/sub/d.plt", "q/008/e.plt",
		// GeoLife's layout.
		"geo/Data/000/Trajectory/a.plt", "geo/Data/000/Trajectory/2008/b.plt", "geo/Data/001/Trajectory/c.plt",
		// A corpus root with a loose file.
		"loose/u1/a.plt", "loose/b.plt",
	} {
		writeFile(t, dir, f, plt)
	}
	writeFile(t, dir, "flat/people.csv", csv)
	writeFile(t, dir, "mixed/people.csv", csv)
	writeFile(t, dir, "mixed/carol/2008/x.plt", plt)
	writeFile(t, dir, "mixed/alice/y.plt", plt)
	p := func(s string) string { return filepath.Join(dir, filepath.FromSlash(s)) }
	for _, c := range []struct {
		in     string
		rule   PersonRule
		want   map[string]int
		merged int // uids of the data merged into another person
	}{
		{"q/008", PersonRule{}, map[string]int{"008": 15}, 0},
		{"q/008/2008", PersonRule{}, map[string]int{"2008": 6}, 0},
		{"q/008", PersonRule{UID: "dana"}, map[string]int{"dana": 15}, 0},
		// Declared a corpus, q is one person per child folder: 008 still.
		{"q", PersonRule{Corpus: true}, map[string]int{"008": 15}, 0},
		{"geo/Data", PersonRule{Corpus: true}, map[string]int{"000": 6, "001": 3}, 0},
		{"geo/Data/000", PersonRule{}, map[string]int{"000": 6}, 0},
		{"geo/Data/000/Trajectory", PersonRule{}, map[string]int{"000": 6}, 0},
		{"geo/Data", PersonRule{}, map[string]int{"Data": 9}, 0},
		// A flat CSV with a uid column: one person unless a corpus.
		{"flat/people.csv", PersonRule{}, map[string]int{"flat": 3}, 2},
		{"flat/people.csv", PersonRule{UID: "x"}, map[string]int{"x": 3}, 2},
		{"flat/people.csv", PersonRule{Corpus: true}, map[string]int{"alice": 2, "bob": 1}, 0},
		{"flat", PersonRule{}, map[string]int{"flat": 3}, 2},
		// In a corpus root a file of uids names its persons; a person's
		// folder is theirs whatever its data says.
		{"mixed", PersonRule{Corpus: true}, map[string]int{"alice": 5, "bob": 1, "carol": 3}, 0},
		{"mixed", PersonRule{}, map[string]int{"mixed": 9}, 2},
	} {
		got, rep, err := readPersons(t, p(c.in), c.rule)
		if err != nil {
			t.Errorf("%s %+v: %v", c.in, c.rule, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %+v: persons %v, want %v", c.in, c.rule, got, c.want)
		}
		for uid, n := range c.want {
			if got[uid] != n {
				t.Errorf("%s %+v: person %q has %d points, want %d (all: %v)", c.in, c.rule, uid, got[uid], n, got)
			}
		}
		if len(rep.Merged) != c.merged || len(rep.Summary().Merged) != c.merged {
			t.Errorf("%s %+v: merged %+v, want %d", c.in, c.rule, rep.Merged, c.merged)
		}
	}

	// Refusals name the file and the fix.
	for _, c := range []struct {
		in   string
		rule PersonRule
		want []string
	}{
		{"loose", PersonRule{Corpus: true}, []string{"b.plt", "directly in the corpus directory", "drop --corpus"}},
		{"q/008/e.plt", PersonRule{Corpus: true}, []string{"e.plt", "declared a corpus", "uid column"}},
		{"geo/Data/000", PersonRule{Corpus: true}, []string{"Trajectory", "GeoLife", "drop --corpus"}},
	} {
		_, _, err := readPersons(t, p(c.in), c.rule)
		if !errors.Is(err, ErrNoPerson) {
			t.Errorf("%s %+v: %v, want ErrNoPerson", c.in, c.rule, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %+v: %q does not say %q", c.in, c.rule, err, w)
			}
		}
	}
	if _, err := (PersonRule{Corpus: true, UID: "x"}).Of(p("q")); err == nil || !strings.Contains(err.Error(), "--uid") {
		t.Errorf("a corpus with a uid: %v", err)
	}
	// Without --strict, a refused file is skipped and listed, never
	// attributed to a guessed person.
	_, rep, err := ReadPaths([]string{p("loose")}, ReadOptions{Corpus: true}, nil)
	if err != nil || len(rep.SkippedFiles) != 1 || !errors.Is(rep.SkippedFiles[0].Err, ErrNoPerson) || rep.Traces != 1 {
		t.Errorf("lenient loose corpus: %v, %+v", err, rep)
	}
}

// TestChildFolders lists the folders a corpus would make persons of.
func TestChildFolders(t *testing.T) {
	got := ChildFolders("d", []string{"d/b/x.plt", "d/a/1/y.plt", "d/z.plt", "d/b/w.plt", "e/c/v.plt"})
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("ChildFolders = %v, want a,b", got)
	}
}

// TestInputName names one person's directory.
func TestInputName(t *testing.T) {
	for in, want := range map[string]string{
		"Data/000":            "000",
		"Data/000/Trajectory": "000",
		"Data/000/":           "000",
		"/srv/q/008":          "008",
		"/":                   "",
	} {
		if got := InputName(in); got != want {
			t.Errorf("InputName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPersonStream: a file read as a stream gets the same persons as read
// whole.
func TestPersonStream(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "flat/people.csv", []byte("uid,time,lat,lon\nalice,1,39.9,116.3\nalice,2,39.9,116.31\nbob,3,39.9,116.32\n"))
	noUID := writeFile(t, dir, "flat/x.plt", []byte(pltHead+pltRows))
	open := func(p string) func() (Reader, error) {
		return func() (Reader, error) {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { f.Close() })
			format, _ := FormatFromPath(p)
			return NewReader(f, format, ReadOptions{})
		}
	}
	for _, c := range []struct {
		path   string
		rule   PersonRule
		want   string
		merged int
	}{
		{path, PersonRule{}, "flat,flat", 2},
		{path, PersonRule{UID: "z"}, "z,z", 2},
		{path, PersonRule{Corpus: true}, "alice,bob", 0},
		{noUID, PersonRule{}, "flat", 0},
	} {
		ps, err := c.rule.Of(c.path)
		if err != nil {
			t.Fatal(err)
		}
		o, merged, err := ps.Stream(c.path, open(c.path))
		if err != nil {
			t.Fatalf("%s %+v: %v", c.path, c.rule, err)
		}
		r, err := o()
		if err != nil {
			t.Fatal(err)
		}
		ts, err := ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range ts {
			got = append(got, tr.UID)
		}
		if strings.Join(got, ",") != c.want || len(merged) != c.merged {
			t.Errorf("%s %+v: %v, merged %v; want %s, %d merged", c.path, c.rule, got, merged, c.want, c.merged)
		}
	}
	ps, _ := PersonRule{Corpus: true}.Of(noUID)
	if _, _, err := ps.Stream(noUID, open(noUID)); !errors.Is(err, ErrNoPerson) {
		t.Errorf("a PLT file declared a corpus: %v", err)
	}
}
