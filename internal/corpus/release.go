package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/trace"
)

// Certificate is what the engine needs of a release's certificate: to
// record what reading the input skipped (sanitize.Certificate.RecordInput).
type Certificate interface {
	RecordInput(rep *trace.Report)
}

// Sanitizer is how the people of a unit are released: package sanitize's
// functions, bound by the caller (this package cannot import sanitize,
// which imports it). The certificate it writes must be a JSON object whose
// "persons" list each person's "uid", "points" and "epsilon_max", and
// whose "skipped_rows" and "skipped_by_reason" state what RecordInput
// recorded: the manifest copies them from the certificate as written.
type Sanitizer[C Certificate] struct {
	// Release releases the people of traces jointly and returns the
	// released traces, in input order, and their certificate:
	// sanitize.Release with the options bound.
	Release func(traces []*trace.Trace) ([]*trace.Trace, C, error)
	// WriteCertificate encodes a certificate: sanitize.WriteCertificate.
	WriteCertificate func(w io.Writer, c C) error
	// CertificateSuffix ends the file name of a unit's certificate:
	// sanitize.CertificateSuffix.
	CertificateSuffix string
}

// Person is one person of a corpus release, as the manifest lists them.
type Person struct {
	UID        string  `json:"uid"`
	Points     int     `json:"points"`
	EpsilonMax float64 `json:"epsilon_max"`
	// Files are the output files holding the person's traces and
	// Certificate the certificate covering them, relative to the output
	// directory.
	Files       []string `json:"files"`
	Certificate string   `json:"certificate"`
}

// UnitRelease records what releasing a unit wrote; paths are relative to
// the output directory (and to the input root for Inputs), slash-separated.
type UnitRelease struct {
	Inputs    []string       `json:"inputs"`
	Persons   []Person       `json:"persons"`
	Outputs   []string       `json:"outputs"`
	Skipped   int            `json:"skipped_rows"`
	SkippedBy map[string]int `json:"skipped_by_reason"`
}

// certified is the part of a certificate the manifest copies.
type certified struct {
	Persons []struct {
		UID        string  `json:"uid"`
		Points     int     `json:"points"`
		EpsilonMax float64 `json:"epsilon_max"`
	} `json:"persons"`
	SkippedRows     int            `json:"skipped_rows"`
	SkippedByReason map[string]int `json:"skipped_by_reason"`
}

// ReleaseUnit reads a unit's files with ro, releases their people jointly
// with s, and writes, together or not at all, each file's sanitised traces
// at its path relative to root under out (in the file's format) and the
// unit's certificate under out/CertificatesDir. The directories are
// created as needed.
func ReleaseUnit[C Certificate](u Unit, s Sanitizer[C], ro trace.ReadOptions, root, out string) (*UnitRelease, error) {
	if len(u.Files) == 0 || len(u.UIDs) == 0 {
		return nil, fmt.Errorf("empty unit %v", u)
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
		for _, t := range Attribute(path, ts) {
			if a, ok := u.Alias[t.UID]; ok {
				t.UID = a // one person found in several folders (JoinPersons)
			}
			traces = append(traces, t)
			from = append(from, fi)
		}
	}
	outs, cert, err := s.Release(traces)
	if err != nil {
		return nil, err
	}
	cert.RecordInput(read)
	var cb bytes.Buffer
	if err := s.WriteCertificate(&cb, cert); err != nil {
		return nil, err
	}
	var c certified
	if err := json.Unmarshal(cb.Bytes(), &c); err != nil {
		return nil, fmt.Errorf("the unit's certificate: %w", err)
	}
	certRel := filepath.Join(CertificatesDir, certName(u.UIDs, s.CertificateSuffix))
	e := &UnitRelease{Inputs: Rel(root, u.Files), Skipped: c.SkippedRows, SkippedBy: c.SkippedByReason}
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
	group = append(group, atomicfile.File{Path: filepath.Join(out, certRel), Perm: 0o644, Fill: func(w io.Writer) error {
		_, err := w.Write(cb.Bytes())
		return err
	}})
	e.Outputs = append(e.Outputs, filepath.ToSlash(certRel))
	if err := atomicfile.WriteGroup(group); err != nil {
		return nil, err
	}
	for _, p := range c.Persons {
		e.Persons = append(e.Persons, Person{UID: p.UID, Points: p.Points, EpsilonMax: p.EpsilonMax, Files: filesOf[p.UID], Certificate: filepath.ToSlash(certRel)})
	}
	return e, nil
}

// certName names a unit's certificate after its people, safely: the first
// uid, and for several people their number and a hash of all of them.
func certName(uids []string, suffix string) string {
	clean := func(s string) string {
		s = strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == 0 || r == ':' {
				return '_'
			}
			return r
		}, s)
		if s == "" || s == "." || s == ".." {
			s = "_" + s
		}
		return s
	}
	name := clean(uids[0])
	if len(uids) > 1 {
		h := sha256.Sum256([]byte(strings.Join(uids, "\x00")))
		name += fmt.Sprintf("+%d-%s", len(uids)-1, hex.EncodeToString(h[:4]))
	}
	return name + suffix
}
