package sanitize

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/disjoint"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/trace"
)

// The building blocks of a corpus release, shared by Corpus (one machine)
// and the Apache Beam pipeline in the nested module pipeline/ (many). A
// release is three steps: ScanFile learns who is in each file; GroupUnits
// joins the files that share a person into units (a global step, but over
// the small per-file lists of uids); ReleaseUnit releases one unit and
// writes its outputs and certificate together. A Manifest collects the
// units' UnitRelease records and is written last (WriteManifest). Every
// step is a pure function of its inputs and the options, and a seeded
// source gives every person a stream derived from the seed and their uid,
// so a seeded release is the same bytes however the units are spread over
// goroutines or machines.

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
	// after the uid rule (see Manifest.UIDRule).
	People []UIDPoints `json:"people,omitempty"`
	Points int         `json:"points"`
	// Err says why the file could not be read ("" if it was).
	Err string `json:"error,omitempty"`
}

// ScanFile reads the file at path with ro and counts the points of each
// person in it. A file that cannot be read gives a FileScan with Err set.
func ScanFile(path string, ro trace.ReadOptions) FileScan {
	traces, _, err := trace.ReadFile(path, ro)
	if err != nil {
		return FileScan{Path: path, Err: err.Error()}
	}
	s := FileScan{Path: path}
	by := map[string]int{}
	for _, t := range attribute(path, traces) {
		by[t.UID] += t.Len()
		s.Points += t.Len()
	}
	for uid, n := range by {
		s.People = append(s.People, UIDPoints{UID: uid, Points: n})
	}
	slices.SortFunc(s.People, func(a, b UIDPoints) int { return strings.Compare(a.UID, b.UID) })
	return s
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
}

// Failure returns the manifest's record of the unit failing with err.
func (u Unit) Failure(root string, err error) Failure {
	return Failure{Files: rel(root, u.Files), UIDs: u.UIDs, Error: err.Error()}
}

// GroupUnits joins files that share a person, by union-find, and returns
// the units, largest first (the slowest units start early), and a Failure
// for every file that could not be read; paths in failures are relative
// to root. The result does not depend on the order of scans.
func GroupUnits(root string, scans []FileScan) ([]Unit, []Failure) {
	scans = slices.Clone(scans)
	slices.SortFunc(scans, func(a, b FileScan) int { return strings.Compare(a.Path, b.Path) })
	sets := disjoint.New(len(scans))
	var failed []Failure
	owner := map[string]int{}
	for i, s := range scans {
		if s.Err != "" {
			failed = append(failed, Failure{Files: rel(root, []string{s.Path}), Error: s.Err})
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
	units := make([]Unit, 0, len(order))
	for _, r := range order {
		u := byRoot[r]
		slices.Sort(u.UIDs)
		units = append(units, *u)
	}
	slices.SortStableFunc(units, func(a, b Unit) int { return cmp.Compare(b.Points, a.Points) })
	return units, failed
}

// UnitRelease records what releasing a unit wrote; paths are relative to
// the output directory (and to the input root for Inputs), slash-separated.
type UnitRelease struct {
	Inputs    []string       `json:"inputs"`
	Persons   []Released     `json:"persons"`
	Outputs   []string       `json:"outputs"`
	Skipped   int            `json:"skipped_rows"`
	SkippedBy map[string]int `json:"skipped_by_reason"`
}

// CheckCorpus checks the options of a corpus release: those of Release,
// without listed secrets (a corpus release protects every point).
func CheckCorpus(opt Options) error {
	if opt.Secrets != nil {
		return &ParamError{Name: "secrets", Value: len(opt.Secrets), Why: "listed secrets are per trace; a corpus release protects every point"}
	}
	return opt.check()
}

// CheckDirs checks that the output directory out is not the input root
// in nor inside it, both made absolute, which it returns.
func CheckDirs(in, out string) (absIn, absOut string, err error) {
	if absIn, err = filepath.Abs(in); err != nil {
		return "", "", err
	}
	if absOut, err = filepath.Abs(out); err != nil {
		return "", "", err
	}
	if absOut == absIn || strings.HasPrefix(absOut, absIn+string(filepath.Separator)) {
		return "", "", &ParamError{Name: "out", Value: out, Why: "is inside the input directory; write the release elsewhere"}
	}
	return absIn, absOut, nil
}

// ReleaseUnit reads a unit's files with ro, releases their people jointly
// (Release, with opt's Progress ignored), and writes, together or not at
// all, each file's sanitised traces at its path relative to root under out
// (in the file's format) and the unit's certificate under
// out/certificates. The directories are created as needed.
func ReleaseUnit(u Unit, opt Options, ro trace.ReadOptions, root, out string) (*UnitRelease, error) {
	if len(u.Files) == 0 || len(u.UIDs) == 0 {
		return nil, fmt.Errorf("sanitize: empty unit %v", u)
	}
	var traces []*trace.Trace
	var from []int // file of each trace
	var formats []trace.Format
	read := &trace.Report{}
	for fi, path := range u.Files {
		ts, rep, err := trace.ReadFile(path, ro)
		if err != nil {
			return nil, err
		}
		read.Add(rep)
		f, err := trace.FormatFromPath(path)
		if ro.Format != "" {
			f, err = ro.Format, nil
		}
		if err != nil {
			return nil, err
		}
		formats = append(formats, f)
		for _, t := range attribute(path, ts) {
			traces = append(traces, t)
			from = append(from, fi)
		}
	}
	ropt := opt
	ropt.Progress = nil
	outs, cert, err := Release(traces, ropt)
	if err != nil {
		return nil, err
	}
	cert.RecordInput(read)
	certRel := filepath.Join(CertificatesDir, certName(u.UIDs))
	e := &UnitRelease{Inputs: rel(root, u.Files), Skipped: cert.SkippedRows, SkippedBy: cert.SkippedByReason}
	var group []atomicfile.File
	filesOf := map[string][]string{}
	for fi := range u.Files {
		r := e.Inputs[fi]
		var mine []*trace.Trace
		for i, t := range outs {
			if from[i] == fi {
				mine = append(mine, t)
				if !slices.Contains(filesOf[t.UID], r) {
					filesOf[t.UID] = append(filesOf[t.UID], r)
				}
			}
		}
		path := filepath.Join(out, r)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		f := formats[fi]
		group = append(group, atomicfile.File{Path: path, Perm: 0o644, Fill: func(w io.Writer) error { return trace.Write(w, mine, f) }})
		e.Outputs = append(e.Outputs, r)
	}
	if err := os.MkdirAll(filepath.Join(out, CertificatesDir), 0o755); err != nil {
		return nil, err
	}
	group = append(group, atomicfile.File{Path: filepath.Join(out, certRel), Perm: 0o644, Fill: func(w io.Writer) error { return WriteCertificate(w, cert) }})
	e.Outputs = append(e.Outputs, filepath.ToSlash(certRel))
	if err := atomicfile.WriteGroup(group); err != nil {
		return nil, err
	}
	for _, p := range cert.Persons {
		e.Persons = append(e.Persons, Released{UID: p.UID, Points: p.Points, EpsilonMax: p.EpsilonMax, Files: filesOf[p.UID], Certificate: filepath.ToSlash(certRel)})
	}
	return e, nil
}

// NewManifest starts the manifest of a release with opt of files trace
// files under root; ignored are the other files found there.
func NewManifest(opt Options, root string, files int, ignored []string) *Manifest {
	return &Manifest{Version: ManifestVersion, EpsilonTarget: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius,
		PriorFamily: opt.Prior.Family(), Randomness: describeSource(opt), Files: files, Ignored: rel(root, ignored), UIDRule: uidRule,
		SkippedBy: map[string]int{}}
}

// Add records a released unit.
func (m *Manifest) Add(r *UnitRelease) {
	m.Persons = append(m.Persons, r.Persons...)
	m.SkippedRows += r.Skipped
	for k, v := range r.SkippedBy {
		m.SkippedBy[k] += v
	}
}

// Fail records a file or unit that could not be released.
func (m *Manifest) Fail(f Failure) { m.Failed = append(m.Failed, f) }

// Finish orders the manifest (persons by uid, failures by their files), so
// that it does not depend on the order units finished in, totals the
// points and the largest epsilon, and records the elapsed time.
func (m *Manifest) Finish(elapsed time.Duration) {
	slices.SortFunc(m.Persons, func(a, b Released) int { return strings.Compare(a.UID, b.UID) })
	slices.SortStableFunc(m.Failed, func(a, b Failure) int { return slices.Compare(a.Files, b.Files) })
	m.Points, m.EpsilonMax = 0, 0
	for _, p := range m.Persons {
		m.Points += p.Points
		m.EpsilonMax = max(m.EpsilonMax, p.EpsilonMax)
	}
	m.Seconds = elapsed.Seconds()
}

// WriteManifest writes m as out/manifest.json, atomically.
func WriteManifest(out string, m *Manifest) error {
	return atomicfile.Write(filepath.Join(out, ManifestName), 0o644, func(w io.Writer) error { return jsondoc.Write(w, m) })
}
