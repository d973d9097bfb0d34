package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// personLayout is an input tree and the persons the person rule gives
// it, with --corpus and without.
type personLayout struct {
	name      string
	parts     map[string][]string // writeParts: path -> data uids (nil: a PLT)
	corpus    []string
	onePerson string // the one person without --corpus
}

// personLayouts are the layouts issue 31 names: GeoLife's, a flat CSV
// with a uid column, a person's folders three deep, and one uid in two
// folders (008 in the CSVs of A and B; GeoLife's Data/010 beside a folder
// 010). Every person has a CSV of two data uids, so that each layout's
// persons show in every command's output (plot labels a file's traces by
// person only when it holds several).
var personLayouts = []personLayout{
	{"geolife", map[string][]string{"000/Trajectory/a.plt": nil, "000/Trajectory/2008/11/b.csv": {"a1", "a2"}, "001/Trajectory/c.csv": {"b1", "b2"}},
		[]string{"000", "001"}, "geolife"},
	{"flat", map[string][]string{"people.csv": {"alice", "bob"}}, []string{"alice", "bob"}, "flat"},
	{"nested", map[string][]string{"008/2008/10/phone/a.csv": {"s1", "s2"}, "008/2009/01/watch/b.plt": nil, "009/x/y/z/c.csv": {"t1", "t2"}},
		[]string{"008", "009"}, "nested"},
	{"joined", map[string][]string{"A/t.csv": {"008", "a"}, "B/t.csv": {"008", "b"}, "C/c.csv": {"c1", "c2"}, "Data/010/Trajectory/d.plt": nil, "010/e.csv": {"e1", "e2"}},
		[]string{"010", "A", "C"}, "joined"},
}

// personsCase runs check on every layout, with --corpus and without (an
// input is one person): check returns the persons the command saw.
func personsCase(t *testing.T, check func(t *testing.T, in string, corpus bool) []string) {
	for _, l := range personLayouts {
		in := filepath.Join(t.TempDir(), l.name)
		writeParts(t, in, l.parts)
		for _, corpus := range []bool{true, false} {
			want := []string{l.onePerson}
			if corpus {
				want = l.corpus
			}
			got := check(t, in, corpus)
			slices.Sort(got)
			got = slices.Compact(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s, --corpus %v: persons %v, want %v", l.name, corpus, got, want)
			}
		}
	}
}

func corpusFlag(corpus bool) []string {
	if corpus {
		return []string{"--corpus"}
	}
	return nil
}

// TestInspectPersons: inspect's uid column is each trace's person by the
// one person rule, one uid in two folders one person (issue 31: inspect
// showed A and B, Data and 010 as persons).
func TestInspectPersons(t *testing.T) {
	personsCase(t, func(t *testing.T, in string, corpus bool) []string {
		v := runJSON(t, append([]string{"inspect", in, "-q"}, corpusFlag(corpus)...)...)
		var uids []string
		for _, tr := range v["traces"].([]any) {
			uids = append(uids, tr.(map[string]any)["uid"].(string))
		}
		return uids
	})
}

// TestConvertPersons: convert writes each trace with its person.
func TestConvertPersons(t *testing.T) {
	personsCase(t, func(t *testing.T, in string, corpus bool) []string {
		out := filepath.Join(t.TempDir(), "out.csv")
		runJSON(t, append([]string{"convert", "--in", in, "--out", out, "-q"}, corpusFlag(corpus)...)...)
		ts, _, err := trace.ReadFile(out, trace.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var uids []string
		for _, tr := range ts {
			uids = append(uids, tr.UID)
		}
		return uids
	})
}

// TestPlotPersons: plot labels a file's traces by their person.
func TestPlotPersons(t *testing.T) {
	label := regexp.MustCompile(`\.csv \[([^\]]+)\]`)
	personsCase(t, func(t *testing.T, in string, corpus bool) []string {
		out := filepath.Join(t.TempDir(), "map.svg")
		runJSON(t, append([]string{"plot", in, "--out", out, "-q"}, corpusFlag(corpus)...)...)
		var uids []string
		for _, m := range label.FindAllStringSubmatch(string(mustRead(t, out)), -1) {
			uids = append(uids, m[1])
		}
		return uids
	})
}

// TestFitPersons: the persons a prior records (its private corpus index,
// which sanitize's overlap check and leave-one-person-out coverage use)
// are the rule's.
func TestFitPersons(t *testing.T) {
	t.Parallel()
	personsCase(t, func(t *testing.T, in string, corpus bool) []string {
		out := filepath.Join(t.TempDir(), "prior.json")
		stdout, stderr, err := run(t, append([]string{"fit", "--in", in, "--out", out, "--kernel", "rbf", "--min-duration", "1s", "--min-points", "3", "-q", "--json"}, corpusFlag(corpus)...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var res prior.FitSummary
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(prior.CorpusIndexPath(out))
		if err != nil {
			t.Fatal(err)
		}
		var idx struct {
			Persons []string `json:"persons"`
		}
		if err := json.Unmarshal(b, &idx); err != nil {
			t.Fatal(err)
		}
		if res.CorpusIndexPersons != len(idx.Persons) {
			t.Errorf("--json says %d persons, the index holds %d", res.CorpusIndexPersons, len(idx.Persons))
		}
		// The index keeps fingerprints: name them by the candidates.
		byPrint := map[string]string{}
		for _, l := range personLayouts {
			for _, u := range append(slices.Clone(l.corpus), l.onePerson, "B", "Data", "000", "001") {
				byPrint[trace.PersonFingerprint(u)] = u
			}
			for _, uids := range l.parts {
				for _, u := range uids {
					byPrint[trace.PersonFingerprint(u)] = u
				}
			}
		}
		var uids []string
		for _, p := range idx.Persons {
			u, ok := byPrint[p]
			if !ok {
				u = "unknown " + p
			}
			uids = append(uids, u)
		}
		return uids
	})
}
