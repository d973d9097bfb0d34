// Package sample gives Go programs the data tracepriv ships with: the
// prior family its demo sanitises with, and a small synthetic corpus to
// try the library on without any data set.
//
//	prior, err := sample.Prior()     // a *prior.Prior family, as tracepriv fit writes
//	traces, err := sample.Traces()   // three made-up people; traces[0] is the demo's
//	outs, cert, err := sanitize.Release(traces, sanitize.Options{Prior: prior, Epsilon: 1, Lambda: 2, Radius: 100})
//
// The prior was fitted by "tracepriv fit" on GeoLife users 001-007: it
// holds kernel parameters and a public origin (the published centre of
// Beijing), and nothing computed from any one trace; the overlap check's
// private index is not shipped (PriorCorpus builds it from GeoLife); it is
// a research result of GeoLife, whose licence is for non-commercial
// research, so other uses should fit their own prior (tracepriv fit). The
// corpus is synthetic, drawn by a seeded generator from the prior's
// nominal member along made-up routes with stays at home, at a café and on
// a walk, fixes every 1 to 5 seconds; the project may redistribute it.
// docs/datasets.md gives the provenance and licence of every data set.
package sample

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	isample "github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

// Prior returns the bundled prior family (a fresh copy on each call).
func Prior() (*prior.Prior, error) {
	p, err := prior.Read(bytes.NewReader(isample.Prior))
	if err != nil {
		return nil, fmt.Errorf("sample: bundled prior: %w", err)
	}
	return p, nil
}

// Traces returns the synthetic corpus, a fresh copy on each call: every
// trace with its person as UID (synth-1, synth-2, synth-3) and its file
// ("PERSON/NAME.plt") as Name, in path order. The first is the demo's
// trace: synth-1's morning commute (a stay at home, a walk, a bus; a fix
// every 5 seconds).
func Traces() ([]*trace.Trace, error) {
	var out []*trace.Trace
	err := fs.WalkDir(isample.Corpus, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := isample.Corpus.ReadFile(path)
		if err != nil {
			return err
		}
		r, err := trace.NewReader(bytes.NewReader(b), trace.PLT, trace.ReadOptions{Name: path, UID: trace.UserDir(path), Strict: true})
		if err != nil {
			return err
		}
		t, err := r.Next() // a PLT file holds one trace
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		t.Name = path
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sample: bundled corpus: %w", err)
	}
	return out, nil
}

// PriorCorpus builds the bundled prior's private corpus index
// (trace.CorpusIndex, for sanitize.Options.PriorCorpus) from a copy of the
// GeoLife data set: geolife holds the user folders the prior was fitted on
// (001 to 007, as its fit.corpus names them), read as "tracepriv fit" read
// them. The project does not ship the index: its keys would let anyone
// recover GeoLife fixes by guessing, and GeoLife's licence forbids
// redistributing them; whoever holds GeoLife can build it (from a copy
// that differs from the one fitted, it checks against that copy).
func PriorCorpus(geolife string) (*trace.CorpusIndex, error) {
	p, err := Prior()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, u := range strings.Split(p.Fit.Corpus, ", ") {
		paths = append(paths, filepath.Join(geolife, u))
	}
	var traces []*trace.Trace
	if _, _, err := trace.ReadPaths(paths, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) { traces = append(traces, ts...) }); err != nil {
		return nil, fmt.Errorf("sample: the bundled prior's corpus: %w", err)
	}
	if len(traces) == 0 {
		return nil, fmt.Errorf("sample: no trace of the GeoLife users %s under %s", p.Fit.Corpus, geolife)
	}
	x := trace.CorpusIndexOf(traces...)
	if x.Prior, err = p.Digest(); err != nil {
		return nil, err
	}
	return x, nil
}
