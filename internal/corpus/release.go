package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/trace"
)

// Sanitizer is how the people of a unit are released: package sanitize's
// functions, bound by the caller (this package cannot import sanitize,
// which imports it). C is the certificate's type.
type Sanitizer[C any] struct {
	// Release releases the people of traces jointly and returns the
	// released traces, in input order, and their certificate, which states
	// what reading their files skipped (read): sanitize.Release with the
	// options bound, then Certificate.RecordInput.
	Release func(traces []*trace.Trace, read *trace.Report) ([]*trace.Trace, C, error)
	// WriteCertificate encodes a certificate: sanitize.WriteCertificate.
	WriteCertificate func(w io.Writer, c C) error
	// CertificateSuffix ends the file name of a unit's certificate:
	// sanitize.CertificateSuffix.
	CertificateSuffix string
}

// UnitRelease is what releasing a unit wrote; paths are relative to the
// output directory (to the input root for Inputs), slash-separated. The
// caller makes its record of the people released from it (the manifest's
// entries are package sanitize's).
type UnitRelease[C any] struct {
	Inputs []string
	// Outputs are the files written, the certificate last.
	Outputs []string
	// Files are the output files holding each person's traces, by uid,
	// and CertificateFile the certificate covering them.
	Files           map[string][]string
	CertificateFile string
	// Certificate is the certificate written.
	Certificate C
}

// ReleaseUnit reads a unit's files with ro, releases their people jointly
// with s, and writes, together or not at all, each file's sanitised traces
// at its path relative to root under out (in the file's format) and the
// unit's certificate under out/CertificatesDir. The directories are
// created as needed.
func ReleaseUnit[C any](u Unit, s Sanitizer[C], ro trace.ReadOptions, root, out string) (*UnitRelease[C], error) {
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
	outs, cert, err := s.Release(traces, read)
	if err != nil {
		return nil, err
	}
	var cb bytes.Buffer
	if err := s.WriteCertificate(&cb, cert); err != nil {
		return nil, err
	}
	certRel := filepath.Join(CertificatesDir, certName(u.UIDs, s.CertificateSuffix))
	e := &UnitRelease[C]{Inputs: Rel(root, u.Files), Files: map[string][]string{}, CertificateFile: filepath.ToSlash(certRel), Certificate: cert}
	var group []atomicfile.File
	for fi := range u.Files {
		r := e.Inputs[fi]
		var mine []*trace.Trace
		for i, t := range outs {
			if from[i] == fi {
				mine = append(mine, t)
				if !slices.Contains(e.Files[t.UID], r) {
					e.Files[t.UID] = append(e.Files[t.UID], r)
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
