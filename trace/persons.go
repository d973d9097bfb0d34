package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNoPerson is wrapped by the error of a file that the person rule
// cannot give to a person: a file directly in a corpus directory, or a
// file declared a corpus, whose traces carry no user id.
var ErrNoPerson = errors.New("no person")

// PersonRule is tracepriv's one rule for who the persons of an input are.
// Every command and package that groups traces by person (sanitize, geoind
// sanitize, fit, attack, convert, trajdb, the pipeline and the service)
// applies it, through ReadPaths or ReadOptions.Root, so that "who is a
// person" is the same everywhere. docs/input.md states it for users.
//
// An input (a file or a directory) is ONE person unless it is declared a
// corpus:
//
//   - Not a corpus (the zero value): every trace of every file under the
//     input, at any depth, is one person, whatever uids its data carries.
//     The person is UID if set; else, for a directory, InputName (GeoLife's
//     uid for Data/<uid> and Data/<uid>/Trajectory, otherwise the
//     directory's name); for a file, the one uid its data carries if it
//     carries exactly one, otherwise the file's GeoLife user or folder
//     (UserDir), otherwise its name (FileUID).
//   - Corpus: each immediate child folder of a directory is one person,
//     named after the folder, with everything below it at any depth,
//     whatever uids its data carries; a file directly in the directory,
//     like a file declared a corpus, is a file of many persons, one per
//     value of its uid field (a CSV uid column, a GeoJSON uid property),
//     and one whose traces carry no uid is refused (ErrNoPerson): nothing
//     names its person. GeoLife's Data folder is a corpus of this shape.
//
// Folders below a person never make a person, and where the rule is
// ambiguous (data uids inside a person's folder, several uids in one
// person's file) the traces are merged into one person: a person unit too
// large costs accuracy, never privacy; so persons of a corpus found to
// hold the same uid (in two folders, a uid column, GeoLife's
// <uid>/Trajectory) are one person (JoinPersons, which ReadPaths applies).
// Report.Merged lists each merge so that a command can say it.
type PersonRule struct {
	// Corpus declares the input a corpus (tracepriv's --corpus).
	Corpus bool
	// UID names the one person of an input that is not a corpus
	// (tracepriv's --uid); "" takes the name the rule derives. It must be
	// empty for a corpus.
	UID string
}

// Persons is a PersonRule bound to one input: it gives each trace read
// from a file under the input its person. Make one with PersonRule.Of; it
// is safe for concurrent use.
type Persons struct {
	rule PersonRule
	in   string // the input as given
	abs  string // absolute
	dir  bool
	name string // the one person's name of a directory that is not a corpus
}

// Of binds the rule to the input in, a trace file or a directory.
func (r PersonRule) Of(in string) (*Persons, error) {
	if r.Corpus && r.UID != "" {
		return nil, fmt.Errorf("%s: a uid (--uid %q) names the one person of an input that is not a corpus; a corpus names its persons by folder or uid field: drop one of them", in, r.UID)
	}
	st, err := os.Stat(in)
	if err != nil {
		return nil, fileError(in, err)
	}
	abs, err := filepath.Abs(in)
	if err != nil {
		return nil, err
	}
	p := &Persons{rule: r, in: in, abs: abs, dir: st.IsDir()}
	if p.dir && !r.Corpus {
		p.name = r.UID
		if p.name == "" {
			p.name = InputName(in)
		}
	}
	return p, nil
}

// Rule returns the rule p applies.
func (p *Persons) Rule() PersonRule { return p.rule }

// InputName is the person a directory that is not a corpus is named
// after: GeoLife's uid when dir is Data/<uid>/Trajectory (the folder
// holding "Trajectory"), else the directory's own name (so Data/<uid>
// gives <uid>), made absolute first so that "." is named too. A root
// directory gives "".
func InputName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	base := filepath.Base(abs)
	if base == GeoLifeTrajectoryDir {
		base = filepath.Base(filepath.Dir(abs))
	}
	if base == "." || base == string(filepath.Separator) || base == "" || base == ".." {
		return ""
	}
	return base
}

// Assign gives every trace read from the file at path (a file of the
// input, as Files lists it, or the input itself) its person, in place, by
// the rule, and returns the merges it made (a data uid released as
// another person). traces must be all the traces of the file. A file the
// rule gives no person is an error wrapping ErrNoPerson that names it and
// says how to fix the input.
func (p *Persons) Assign(path string, traces []*Trace) ([]Merge, error) {
	person, err := p.person(path, traces)
	if err != nil {
		return nil, err
	}
	if person == "" {
		// A corpus file of many persons keeps its data's uids.
		return nil, nil
	}
	return OnePerson(person, path, traces), nil
}

// OnePerson gives every trace the person uid, in place, and returns the
// merges made (file names the input): the person rule for an input that
// is one person and not read from a path, such as an upload to the
// service, which is the person of its token.
func OnePerson(uid, file string, traces []*Trace) []Merge {
	var merged []Merge
	for _, t := range traces {
		if t.UID != "" && t.UID != uid && !slices.ContainsFunc(merged, func(m Merge) bool { return m.DataUID == t.UID }) {
			merged = append(merged, Merge{File: file, DataUID: t.UID, Person: uid})
		}
		t.UID = uid
	}
	return merged
}

// person is the one person of the file at path, or "" for a corpus file
// whose data names its persons.
func (p *Persons) person(path string, traces []*Trace) (string, error) {
	if !p.rule.Corpus {
		if p.dir {
			if p.name == "" {
				return "", fmt.Errorf("%s: %w: the directory has no name to name its person; give one with --uid", p.in, ErrNoPerson)
			}
			return p.name, nil
		}
		if p.rule.UID != "" {
			return p.rule.UID, nil
		}
		var uids []string
		for _, t := range traces {
			if !slices.Contains(uids, t.UID) {
				uids = append(uids, t.UID)
			}
		}
		if len(uids) == 1 && uids[0] != "" {
			return uids[0], nil
		}
		if u := UserDir(path); u != "" {
			return u, nil
		}
		return FileUID(path), nil
	}
	child := ""
	if p.dir {
		if ap, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(p.abs, ap); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				if parts := strings.Split(filepath.ToSlash(rel), "/"); len(parts) > 1 {
					child = parts[0]
				}
			}
		}
	}
	if child == GeoLifeTrajectoryDir {
		return "", fmt.Errorf("%s: %w: %s is GeoLife's folder of one person's files (%s), not a corpus: drop --corpus to release %s as one person, or give the Data folder that holds every <uid> folder",
			path, ErrNoPerson, filepath.Join(p.in, child), InputName(p.in), p.in)
	}
	if child != "" {
		return child, nil
	}
	for _, t := range traces {
		if t.UID == "" {
			where := "is directly in the corpus directory " + p.in
			if !p.dir {
				where = "is declared a corpus (--corpus)"
			}
			return "", fmt.Errorf("%s: %w: the file %s and its traces carry no uid field, so nothing names their person: put it in a folder named after its person (each folder of %s is one person), add a uid column, or drop --corpus to release the input as one person",
				path, ErrNoPerson, where, p.in)
		}
	}
	return "", nil
}

// Merge is a uid a file's data carries that the person rule released as
// part of another person (Report.Merged); with Joined, DataUID is a
// person of a corpus found to be the same person as Person (JoinPersons).
type Merge struct {
	File    string `json:"file"`
	DataUID string `json:"data_uid"`
	Person  string `json:"person"`
	Joined  bool   `json:"joined,omitempty"`
}

// PersonCount is one person of an input, as the person rule found them
// before anything is released: how many files and points are theirs.
type PersonCount struct {
	UID    string `json:"uid"`
	Files  int    `json:"files"`
	Points int    `json:"points"`
}

// Stream applies the rule to a file read as a stream, without holding it:
// open returns a new reader of the whole file at path each time it is
// called. Stream reads the file once to learn the uids its data carries
// (the rule's person of a file depends on them), and returns an opener
// whose readers give every trace its person, and the merges made. A file
// the rule gives no person is an error wrapping ErrNoPerson.
func (p *Persons) Stream(path string, open func() (Reader, error)) (func() (Reader, error), []Merge, error) {
	r, err := open()
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var uids []*Trace // one trace per distinct uid: what person reads
	for {
		t, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if !seen[t.UID] {
			seen[t.UID] = true
			uids = append(uids, &Trace{UID: t.UID})
		}
	}
	person, err := p.person(path, uids)
	if err != nil || person == "" {
		return open, nil, err
	}
	var merged []Merge
	for _, t := range uids {
		if t.UID != "" && t.UID != person {
			merged = append(merged, Merge{File: path, DataUID: t.UID, Person: person})
		}
	}
	return func() (Reader, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return &personReader{Reader: r, uid: person}, nil
	}, merged, nil
}

// personReader gives every trace of its reader one person.
type personReader struct {
	Reader
	uid string
}

func (r *personReader) Next() (*Trace, error) {
	t, err := r.Reader.Next()
	if t != nil {
		t.UID = r.uid
	}
	return t, err
}

// ChildFolders returns, sorted, the immediate child folders of the
// directory in that hold any of files (paths under in, as Files lists
// them): the persons the input would be as a corpus. A command reading in
// as one person can say so when there are several.
func ChildFolders(in string, files []string) []string {
	return childNames(in, files, func(parts []string) string {
		if len(parts) > 1 {
			return parts[0]
		}
		return ""
	})
}

// GeoLifeUsers lists, sorted, the users of files (paths under the
// directory dir) kept in GeoLife's layout directly below dir,
// dir/<user>/Trajectory/...: a folder that, read as one person, holds
// several GeoLife users (GeoLife's Data given as a corpus's child
// folder), which a command can point out.
func GeoLifeUsers(dir string, files []string) []string {
	return childNames(dir, files, func(parts []string) string {
		if len(parts) > 2 && parts[1] == GeoLifeTrajectoryDir {
			return parts[0]
		}
		return ""
	})
}

// childNames lists, sorted and once each, the names pick gives the
// relative paths (split at "/") of the files under in ("" picks none).
func childNames(in string, files []string, pick func(parts []string) string) []string {
	var out []string
	for _, f := range files {
		rel, err := filepath.Rel(in, f)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if name := pick(strings.Split(filepath.ToSlash(rel), "/")); name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
