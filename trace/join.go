package trace

import (
	"path/filepath"
	"slices"

	"github.com/tracepriv/tracepriv/internal/disjoint"
)

// FilePersons is what JoinPersons needs of one file read under the
// person rule: the file, the persons the rule gave its traces, and the
// data uids the rule merged into them (its Report.Merged).
type FilePersons struct {
	Path    string
	Persons []string
	Merged  []Merge
}

// NewFilePersons is what JoinPersons needs of the file at path: the
// persons of its traces (as the person rule gave them), each once, and
// merged, the merges reading it made (its Report.Merged). A program that
// reads a corpus's files apart (on many machines) gathers these, which
// hold no location, to join the corpus's persons in one place.
func NewFilePersons(path string, traces []*Trace, merged []Merge) FilePersons {
	f := FilePersons{Path: path, Merged: merged}
	for _, t := range traces {
		if !slices.Contains(f.Persons, t.UID) {
			f.Persons = append(f.Persons, t.UID)
		}
	}
	return f
}

// JoinPersons is the last step of the person rule (PersonRule) for a
// corpus: persons found to be the same person are one. Where the rule is
// ambiguous it merges (a unit too large costs accuracy, never privacy),
// so two persons are one when the same uid is found in both: a data uid
// of one's files (a CSV uid column merged into the folder's person) that
// is the other's name or a data uid of the other's files, or a GeoLife
// user folder (.../<uid>/Trajectory/x.plt) of that name, as in GeoLife's
// Data/008 beside another folder 008. Each group is released as its
// person of least name. It returns that renaming (person to the person
// it is released as; nil when no two persons are one), and the merges it
// makes, one per file and renamed person (Merge.Joined). It does not
// depend on the order of files.
func JoinPersons(files []FilePersons) (map[string]string, []Merge) {
	ids := map[string]int{}
	id := func(uid string) int {
		if i, ok := ids[uid]; ok {
			return i
		}
		ids[uid] = len(ids)
		return ids[uid]
	}
	var pairs [][2]int
	persons := map[string]bool{}
	for _, f := range files {
		found := map[string][]string{} // person -> uids found in this file
		for _, m := range f.Merged {
			found[m.Person] = append(found[m.Person], m.DataUID)
		}
		if dir := filepath.Dir(f.Path); filepath.Base(dir) == GeoLifeTrajectoryDir && len(f.Persons) == 1 {
			if user := filepath.Base(filepath.Dir(dir)); user != "" && user != "." && user != string(filepath.Separator) {
				found[f.Persons[0]] = append(found[f.Persons[0]], user)
			}
		}
		for _, p := range f.Persons {
			persons[p] = true
			pi := id(p)
			for _, u := range found[p] {
				pairs = append(pairs, [2]int{pi, id(u)})
			}
		}
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	sets := disjoint.New(len(ids))
	for _, p := range pairs {
		sets.Union(p[0], p[1])
	}
	// The person of least name of each group names it.
	least := map[int]string{}
	for uid := range persons {
		r := sets.Find(ids[uid])
		if cur, ok := least[r]; !ok || uid < cur {
			least[r] = uid
		}
	}
	alias := map[string]string{}
	for uid := range persons {
		if to := least[sets.Find(ids[uid])]; to != uid {
			alias[uid] = to
		}
	}
	if len(alias) == 0 {
		return nil, nil
	}
	var merged []Merge
	for _, f := range files {
		for _, p := range f.Persons {
			if to, ok := alias[p]; ok {
				merged = append(merged, Merge{File: f.Path, DataUID: p, Person: to, Joined: true})
			}
		}
	}
	return alias, merged
}

// fileTraces are one file's traces as ReadPaths read them.
type fileTraces struct {
	path   string
	traces []*Trace
}

// joinRead applies JoinPersons to the files read (merged is their
// report's merges): it renames the traces' persons in place and returns
// the joins' merges.
func joinRead(read []fileTraces, merged []Merge) []Merge {
	byFile := map[string][]Merge{}
	for _, m := range merged {
		byFile[m.File] = append(byFile[m.File], m)
	}
	files := make([]FilePersons, len(read))
	for i, r := range read {
		files[i] = NewFilePersons(r.path, r.traces, byFile[r.path])
	}
	alias, joins := JoinPersons(files)
	for _, r := range read {
		for _, t := range r.traces {
			if to, ok := alias[t.UID]; ok {
				t.UID = to
			}
		}
	}
	return joins
}
