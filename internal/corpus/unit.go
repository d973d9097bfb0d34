package corpus

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracepriv/tracepriv/internal/disjoint"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// UIDPoints is one person's share of a file.
type UIDPoints struct {
	UID    string `json:"uid"`
	Points int    `json:"points"`
}

// FileScan is what the first pass of a corpus release learns of one trace
// file: who is in it, with how many points. It holds no location.
type FileScan struct {
	// Path is the file, as given to ScanFile.
	Path string `json:"path"`
	// People are the persons with traces in the file, by uid ascending,
	// after the uid rule (UIDRule).
	People []UIDPoints `json:"people,omitempty"`
	Points int         `json:"points"`
	// Err says why the file could not be read ("" if it was); ReadError
	// is it as an error.
	Err string `json:"error,omitempty"`
	// NoPerson says that the person rule gives the file no person
	// (trace.ErrNoPerson): a release refuses to run (Refused).
	NoPerson bool `json:"no_person,omitempty"`
	// Merged are the uids of the file's data released as part of another
	// person by the person rule (trace.Report.Merged).
	Merged []trace.Merge `json:"merged_uids,omitempty"`
}

// ReadError is the error of a file that could not be read (Err), nil if
// it was read.
func (s FileScan) ReadError() error {
	if s.Err == "" {
		return nil
	}
	return errors.New(s.Err)
}

// ScanFile reads the file at path with ro and counts the points of each
// person in it, by the person rule when ro.Root is set (trace.PersonRule).
// A file that cannot be read gives a FileScan with Err set.
func ScanFile(path string, ro trace.ReadOptions) FileScan {
	traces, rep, err := trace.ReadFile(path, ro)
	if err != nil {
		return FileScan{Path: path, Err: err.Error(), NoPerson: errors.Is(err, trace.ErrNoPerson)}
	}
	s := FileScan{Path: path, Merged: rep.Merged}
	by := map[string]int{}
	for _, t := range Attribute(path, traces) {
		by[t.UID] += t.Len()
		s.Points += t.Len()
	}
	for uid, n := range by {
		s.People = append(s.People, UIDPoints{UID: uid, Points: n})
	}
	slices.SortFunc(s.People, func(a, b UIDPoints) int { return strings.Compare(a.UID, b.UID) })
	return s
}

// Attribute gives traces read from path without a person (read without
// ReadOptions.Root, so without the person rule) the user of their file's
// folder (trace.UserDir), in place, and returns them.
func Attribute(path string, traces []*trace.Trace) []*trace.Trace {
	for _, t := range traces {
		if t.UID == "" {
			t.UID = trace.UserDir(path)
		}
	}
	return traces
}

// Census lists the persons of the files scanned, by uid, with how many
// files and points are theirs, before anything is released. Files that
// could not be read are not counted (GroupUnits fails them).
func Census(scans []FileScan) []trace.PersonCount {
	by := map[string]*trace.PersonCount{}
	for _, s := range scans {
		for _, p := range s.People {
			pc := by[p.UID]
			if pc == nil {
				pc = &trace.PersonCount{UID: p.UID}
				by[p.UID] = pc
			}
			pc.Files++
			pc.Points += p.Points
		}
	}
	out := make([]trace.PersonCount, 0, len(by))
	for _, pc := range by {
		out = append(out, *pc)
	}
	slices.SortFunc(out, func(a, b trace.PersonCount) int { return strings.Compare(a.UID, b.UID) })
	return out
}

// maxNamed is how many files a refusal names.
const maxNamed = 5

// Refused returns the error of a corpus release that cannot run because
// the person rule gives some files no person (FileScan.NoPerson): it
// names them, relative to root, and says how to fix the input. Nil if
// every file has a person.
func Refused(root string, scans []FileScan) error {
	var files []string
	first := ""
	for _, s := range scans {
		if s.NoPerson {
			if first == "" {
				first = s.Err
			}
			files = append(files, s.Path)
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.Sort(files)
	named := Rel(root, files)
	if len(named) > maxNamed {
		named = append(named[:maxNamed], fmt.Sprintf("and %d more", len(files)-maxNamed))
	}
	return fmt.Errorf("%w: %d files have no person, so nothing is released: %s\n(the first: %s)", trace.ErrNoPerson, len(files), strings.Join(named, ", "), first)
}

// Unit is a set of files and the people in them, closed under sharing: a
// person's files and every person in those files. A unit is released at
// once, so that each person's traces, over all their files, are designed
// for and certified jointly.
type Unit struct {
	// Files are the unit's files, as scanned, in ascending order.
	Files []string `json:"files"`
	// UIDs are its people, ascending.
	UIDs   []string `json:"uids"`
	Points int      `json:"points"`
	// Alias maps the person the rule gives a file's traces to the person
	// they are released as, where JoinPersons joined two (ReleaseUnit
	// renames them).
	Alias map[string]string `json:"alias,omitempty"`
}

// PublicText is msg, an error's text bound for the published manifest,
// with the corpus root's path taken out: a file under root is named
// relative to it, as the manifest names files (Rel), and root itself by
// its base name, so that no absolute path of the machine is published.
func PublicText(root, msg string) string {
	if root == "" || root == "." {
		return msg
	}
	root = filepath.Clean(root)
	msg = strings.ReplaceAll(msg, root+string(filepath.Separator), "")
	return strings.ReplaceAll(msg, root, filepath.Base(root))
}

// GroupUnits joins files that share a person, by union-find, and returns
// the units, largest first (the slowest units start early), and the scans
// of the files that could not be read (Err set), by path. The result does
// not depend on the order of scans.
//
// Persons found to be one (JoinPersons) are one person of one unit, whose
// Alias renames them.
func GroupUnits(scans []FileScan) (units []Unit, unreadable []FileScan) {
	scans, alias := JoinPersons(scans)
	slices.SortFunc(scans, func(a, b FileScan) int { return strings.Compare(a.Path, b.Path) })
	sets := disjoint.New(len(scans))
	owner := map[string]int{}
	for i, s := range scans {
		if s.Err != "" {
			unreadable = append(unreadable, s)
			continue
		}
		for _, p := range s.People {
			if j, ok := owner[p.UID]; ok {
				sets.Union(i, j)
			} else {
				owner[p.UID] = i
			}
		}
	}
	byRoot := map[int]*Unit{}
	var order []int
	for i, s := range scans {
		if s.Err != "" {
			continue
		}
		r := sets.Find(i)
		u := byRoot[r]
		if u == nil {
			u = &Unit{}
			byRoot[r] = u
			order = append(order, r)
		}
		u.Files = append(u.Files, s.Path)
		u.Points += s.Points
		for _, p := range s.People {
			if !slices.Contains(u.UIDs, p.UID) {
				u.UIDs = append(u.UIDs, p.UID)
			}
		}
	}
	units = make([]Unit, 0, len(order))
	for _, r := range order {
		u := byRoot[r]
		slices.Sort(u.UIDs)
		for from, to := range alias {
			if slices.Contains(u.UIDs, to) {
				if u.Alias == nil {
					u.Alias = map[string]string{}
				}
				u.Alias[from] = to
			}
		}
		units = append(units, *u)
	}
	slices.SortStableFunc(units, func(a, b Unit) int { return cmp.Compare(b.Points, a.Points) })
	return units, unreadable
}

// JoinPersons makes persons of a corpus that are found to be the same
// person one person, by the person rule's trace.JoinPersons. It returns
// copies of scans with the persons renamed (and each renaming listed in
// Merged) and the renaming.
func JoinPersons(scans []FileScan) ([]FileScan, map[string]string) {
	var files []trace.FilePersons
	for _, s := range scans {
		if s.Err != "" {
			continue
		}
		f := trace.FilePersons{Path: s.Path, Merged: s.Merged}
		for _, p := range s.People {
			f.Persons = append(f.Persons, p.UID)
		}
		files = append(files, f)
	}
	alias, joins := trace.JoinPersons(files)
	if len(alias) == 0 {
		return scans, nil
	}
	out := make([]FileScan, len(scans))
	for i, s := range scans {
		out[i] = s
		if s.Err != "" {
			continue
		}
		for _, m := range joins {
			if m.File == s.Path {
				out[i].Merged = append(slices.Clone(out[i].Merged), m)
			}
		}
		by := map[string]int{}
		for _, p := range s.People {
			to := p.UID
			if a, ok := alias[p.UID]; ok {
				to = a
			}
			by[to] += p.Points
		}
		out[i].People = nil
		for uid, n := range by {
			out[i].People = append(out[i].People, UIDPoints{UID: uid, Points: n})
		}
		slices.SortFunc(out[i].People, func(a, b UIDPoints) int { return strings.Compare(a.UID, b.UID) })
	}
	return out, alias
}

// CheckDirs checks that the output directory out is not the input root
// in nor inside it, both made absolute, which it returns. The error is a
// *param.Error naming "out".
func CheckDirs(in, out string) (absIn, absOut string, err error) {
	if absIn, err = filepath.Abs(in); err != nil {
		return "", "", err
	}
	if absOut, err = filepath.Abs(out); err != nil {
		return "", "", err
	}
	if absOut == absIn || strings.HasPrefix(absOut, absIn+string(filepath.Separator)) {
		return "", "", &param.Error{Name: "out", Value: out, Why: "is inside the input directory; write the release elsewhere"}
	}
	return absIn, absOut, nil
}

// Rel returns paths relative to root, slash-separated (a path that has no
// relative form is kept as it is).
func Rel(root string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		r, err := filepath.Rel(root, p)
		if err != nil {
			r = p
		}
		out[i] = filepath.ToSlash(r)
	}
	return out
}
