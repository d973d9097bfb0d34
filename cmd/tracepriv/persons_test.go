package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/trace"
)

// writeParts writes slices of the sample trace at the given paths under
// dir (format by extension; the CSV ones with the uids given, one slice
// each), and returns the points written per path.
func writeParts(t *testing.T, dir string, parts map[string][]string) map[string]int {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	n, paths := 0, []string{}
	for p, uids := range parts {
		n += max(1, len(uids))
		paths = append(paths, p)
	}
	slices.Sort(paths)
	step := tr.Len() / n
	points, k := map[string]int{}, 0
	for _, p := range paths {
		uids := parts[p]
		if len(uids) == 0 {
			uids = []string{""}
		}
		var ts []*trace.Trace
		for _, u := range uids {
			ts = append(ts, &trace.Trace{UID: u, Points: append([]trace.Point(nil), tr.Points[k*step:(k+1)*step]...)})
			k++
			points[p] += step
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		f, _ := trace.FormatFromPath(full)
		if err := trace.WriteFile(full, ts, f); err != nil {
			t.Fatal(err)
		}
	}
	return points
}

// personsOf returns the uid, files and points of each of a --json
// output's persons (a manifest's files are a list, a certificate's
// persons have none).
func personsOf(t *testing.T, v map[string]any) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	ps, _ := v["persons"].([]any)
	for _, p := range ps {
		m := p.(map[string]any)
		files := 1
		if fs, ok := m["files"].([]any); ok {
			files = len(fs)
		}
		out[m["uid"].(string)] = [2]int{files, int(m["points"].(float64))}
	}
	return out
}

func sanitizeArgs(prior string, in, out string, more ...string) []string {
	return append([]string{"sanitize", "--in", in, "--out", out, "--prior", prior, "--epsilon", "1", "--lambda", "2", "--radius", "100"}, more...)
}

// TestSanitizeOnePersonNested: a folder of one person with subfolders
// three deep (year/month/device) and a stray subfolder is one person,
// certified once and charged once: a second release within a budget of 1
// is refused. (Before the person rule, each first-level folder was a
// person charged in full.)
func TestSanitizeOnePersonNested(t *testing.T) {
	dir, _, prior := samplePaths(t)
	q := filepath.Join(dir, "Q", "008")
	pts := writeParts(t, q, map[string][]string{"2008/10/phone/a.plt": nil, "2008/11/watch/b.plt": nil, "2009/01/phone/c.plt": nil, "sub/d.plt": nil})
	total := 0
	for _, n := range pts {
		total += n
	}
	ledger := filepath.Join(dir, "l.json")
	stdout, stderr, err := run(t, append(sanitizeArgs(prior, q, filepath.Join(dir, "r1")), "--ledger", ledger, "--budget", "1", "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	v := acctJSON(t, stdout)
	if got := personsOf(t, v); len(got) != 1 || got["008"] != [2]int{4, total} {
		t.Fatalf("persons %v, want 008 with 4 files and %d points", got, total)
	}
	if !strings.Contains(stderr, `"008": 4 files, `+strconv.Itoa(total)+" points") {
		t.Errorf("the persons are not printed before the release:\n%s", stderr)
	}
	if certs, _ := os.ReadDir(filepath.Join(dir, "r1", "certificates")); len(certs) != 1 {
		t.Errorf("%d certificates, want 1", len(certs))
	}
	l, err := budget.Read(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Accounts) != 1 || l.Accounts[0].UID != "008" || l.Accounts[0].Spent > 1 {
		t.Fatalf("ledger accounts %+v, want the one person 008", l.Accounts)
	}
	// The same person again: over budget, refused.
	if _, _, err := run(t, append(sanitizeArgs(prior, q, filepath.Join(dir, "r2")), "--ledger", ledger, "--budget", "1", "-q")...); err == nil || !strings.Contains(err.Error(), "over budget") {
		t.Errorf("a second release of 008 within a budget of 1: %v", err)
	}
	// A subfolder given as the input is its own one person, named after it.
	v = runJSON(t, sanitizeArgs(prior, filepath.Join(q, "2008"), filepath.Join(dir, "r3"), "-q", "--seed", "1")...)
	if got := personsOf(t, v); len(got) != 1 || got["2008"][0] != 2 {
		t.Errorf("--in 008/2008: persons %v", got)
	}
	// --uid names the one person.
	v = runJSON(t, sanitizeArgs(prior, q, filepath.Join(dir, "r4"), "-q", "--seed", "1", "--uid", "dana")...)
	if got := personsOf(t, v); len(got) != 1 || got["dana"][0] != 4 {
		t.Errorf("--uid dana: persons %v", got)
	}
}

// TestSanitizeCorpusGeoLife: --corpus on GeoLife's layout gives one person
// per <uid>, whatever lies below; Data/<uid>/Trajectory without --corpus
// is that person; Data without --corpus is one person.
func TestSanitizeCorpusGeoLife(t *testing.T) {
	t.Parallel()
	dir, _, prior := samplePaths(t)
	data := filepath.Join(dir, "Data")
	writeParts(t, data, map[string][]string{"000/Trajectory/a.plt": nil, "000/Trajectory/2008/11/b.plt": nil, "001/Trajectory/c.plt": nil, "002/Trajectory/x/d.plt": nil})
	v := runJSON(t, sanitizeArgs(prior, data, filepath.Join(dir, "r1"), "--corpus", "-q", "--seed", "1")...)
	got := personsOf(t, v)
	if len(got) != 3 || got["000"][0] != 2 || got["001"][0] != 1 || got["002"][0] != 1 {
		t.Fatalf("--corpus persons %v, want 000 (2 files), 001, 002", got)
	}
	v = runJSON(t, sanitizeArgs(prior, filepath.Join(data, "000", "Trajectory"), filepath.Join(dir, "r2"), "-q", "--seed", "1")...)
	if got := personsOf(t, v); len(got) != 1 || got["000"][0] != 2 {
		t.Errorf("Data/000/Trajectory: persons %v, want 000", got)
	}
	v = runJSON(t, sanitizeArgs(prior, data, filepath.Join(dir, "r3"), "-q", "--seed", "1")...)
	if got := personsOf(t, v); len(got) != 1 || got["Data"][0] != 4 {
		t.Errorf("Data without --corpus: persons %v, want the one person Data", got)
	}
	// One person's Trajectory folder declared a corpus: refused, named.
	_, _, err := run(t, sanitizeArgs(prior, filepath.Join(data, "000"), filepath.Join(dir, "r4"), "--corpus", "-q", "--seed", "1")...)
	if err == nil || !strings.Contains(err.Error(), "drop --corpus") {
		t.Errorf("Data/000 --corpus: %v", err)
	}
}

// TestSanitizeCSVUIDs: a flat CSV with a uid column is one person without
// --corpus (merged, with a warning), and one person per uid with it; the
// same file in a directory likewise.
func TestSanitizeCSVUIDs(t *testing.T) {
	dir, _, prior := samplePaths(t)
	flat := filepath.Join(dir, "flat")
	pts := writeParts(t, flat, map[string][]string{"people.csv": {"alice", "bob"}})
	csv := filepath.Join(flat, "people.csv")
	half := pts["people.csv"] / 2
	for _, c := range []struct {
		in    string
		more  []string
		want  map[string][2]int
		merge bool
	}{
		{csv, nil, map[string][2]int{"flat": {1, 2 * half}}, true},
		{csv, []string{"--uid", "carol"}, map[string][2]int{"carol": {1, 2 * half}}, true},
		{csv, []string{"--corpus"}, map[string][2]int{"alice": {1, half}, "bob": {1, half}}, false},
		{flat, nil, map[string][2]int{"flat": {1, 2 * half}}, true},
		{flat, []string{"--corpus"}, map[string][2]int{"alice": {1, half}, "bob": {1, half}}, false},
	} {
		out := filepath.Join(t.TempDir(), "out")
		if filepath.Ext(c.in) == ".csv" {
			out += ".csv"
		}
		stdout, stderr, err := run(t, append(sanitizeArgs(prior, c.in, out, "--seed", "1", "--json"), c.more...)...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", c.in, c.more, err, stderr)
		}
		v := acctJSON(t, stdout)
		got := personsOf(t, v)
		if len(got) != len(c.want) {
			t.Errorf("%s %v: persons %v, want %v", c.in, c.more, got, c.want)
		}
		for uid, w := range c.want {
			if got[uid] != w {
				t.Errorf("%s %v: person %q %v, want %v (all %v)", c.in, c.more, uid, got[uid], w, got)
			}
		}
		if warned := strings.Contains(stderr, "--corpus"); warned != c.merge {
			t.Errorf("%s %v: merge warning %v, want %v:\n%s", c.in, c.more, warned, c.merge, stderr)
		}
	}
}

// TestSanitizeCorpusLooseFile: a file without a uid directly in a corpus
// refuses the run, naming the file and the fix, before anything is
// charged or written; the same directory without --corpus is one person.
func TestSanitizeCorpusLooseFile(t *testing.T) {
	dir, _, prior := samplePaths(t)
	c := filepath.Join(dir, "c")
	writeParts(t, c, map[string][]string{"u1/a.plt": nil, "loose.plt": nil})
	ledger := filepath.Join(dir, "l.json")
	out := filepath.Join(dir, "r1")
	_, _, err := run(t, append(sanitizeArgs(prior, c, out, "--corpus", "-q"), "--ledger", ledger, "--budget", "3")...)
	if err == nil || !strings.Contains(err.Error(), "loose.plt") || !strings.Contains(err.Error(), "folder named after its person") {
		t.Fatalf("a loose file in a corpus: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s", out)
	}
	if l, err := budget.Read(ledger); err == nil && len(l.Charges) != 0 {
		t.Errorf("the refused run charged %+v", l.Charges)
	}
	v := runJSON(t, sanitizeArgs(prior, c, filepath.Join(dir, "r2"), "-q", "--seed", "1")...)
	if got := personsOf(t, v); len(got) != 1 || got["c"][0] != 2 {
		t.Errorf("without --corpus: persons %v, want the one person c", got)
	}
}
