package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/trace"
)

// Reading says how every pipeline reads trace files, as the single-machine
// commands' read flags do.
type Reading struct {
	// Strict makes a bad row or an unreadable file an error instead of
	// skipping it.
	Strict bool
	// UID names the one person of an input that is not a corpus
	// (trace.PersonRule; default: the input's name, GeoLife's <uid> for
	// Data/<uid>/Trajectory). It must be empty with AsCorpus.
	UID string
	// AsCorpus declares the input a corpus (tracepriv's --corpus): each
	// immediate child folder of InputRoot is one person, with everything
	// below it, and a file directly in it one person per uid of its uid
	// field (a file there without one refuses the job). Without it the
	// whole input is one person. The trajectory-database job (Release)
	// always reads a corpus.
	AsCorpus bool
	// InputRoot is the input the files were matched under, which the
	// person rule names persons from: the jobs set it to the pattern's
	// root (GlobRoot). Empty (ReadTraces over files of no declared input),
	// each file is read alone: its data's uids, else its GeoLife user or
	// folder (trace.UserDir).
	InputRoot string
	// TZ is the IANA time zone of PLT local times and zone-less CSV times
	// (default UTC).
	TZ string
	// Format overrides each file's extension.
	Format trace.Format
}

// options returns the trace.ReadOptions of r; on a worker, for the time
// zone is loaded there.
func (r Reading) options() (trace.ReadOptions, error) {
	ro := trace.ReadOptions{UID: r.UID, Strict: r.Strict, Format: r.Format, Root: r.InputRoot, Corpus: r.AsCorpus}
	if r.AsCorpus && r.UID != "" {
		return ro, fmt.Errorf("uid %q names the one person of an input that is not a corpus; a corpus names its persons by folder or uid field: give one of them", r.UID)
	}
	if r.TZ != "" {
		loc, err := time.LoadLocation(r.TZ)
		if err != nil {
			return ro, fmt.Errorf("time zone %q: %w", r.TZ, err)
		}
		ro.Location = loc
	}
	return ro, nil
}

func init() {
	register.DoFn4x1[context.Context, string, func(trace.Trace), func(trace.FilePersons), error](&readFn{})
	register.Emitter1[trace.Trace]()
}

// ReadTraces reads trace files, a PCollection<string> of their paths (as
// Match lists them), into a PCollection<trace.Trace>, spread over the
// workers. Each trace's person is the person rule's (trace.PersonRule)
// over r.InputRoot, a corpus if r.AsCorpus, as a corpus release names
// them (sanitize.Manifest.UIDRule): with r.AsCorpus, persons of the files
// read found to hold the same uid are one person (trace.JoinPersons, a
// global step over every file's persons before any trace is emitted), so
// that a person whose files lie in two folders reaches SanitizeTraces and
// FitPrior as one. Dirty rows are repaired or skipped by the
// one rule of package trace (docs/input.md) and counted ("skipped_rows");
// a file that cannot be read is skipped and counted ("unreadable_files"),
// or with r.Strict fails the pipeline. ReadTraces panics if r is invalid
// (an unknown time zone), as Beam's own transforms panic on a bad
// argument.
func ReadTraces(s beam.Scope, files beam.PCollection, r Reading) beam.PCollection {
	s = s.Scope("tracepriv.ReadTraces")
	if _, err := r.options(); err != nil {
		panic(fmt.Sprintf("pipeline.ReadTraces: %v", err))
	}
	traces, persons := beam.ParDo2(s, &readFn{R: r}, beam.Reshuffle(s, files))
	return beam.ParDo(s, &renameTraceFn{}, traces, beam.SideInput{Input: joinPersons(s, persons, r.AsCorpus)})
}

// readFn reads one trace file.
type readFn struct {
	R  Reading
	ro trace.ReadOptions

	unreadable, skippedRows beam.Counter
}

func (f *readFn) Setup() error {
	var err error
	if f.ro, err = f.R.options(); err != nil {
		return stageError("%v", err)
	}
	f.unreadable = beam.NewCounter(metricsNamespace, "unreadable_files")
	f.skippedRows = beam.NewCounter(metricsNamespace, "skipped_rows")
	return nil
}

func (f *readFn) ProcessElement(ctx context.Context, path string, emit func(trace.Trace), persons func(trace.FilePersons)) error {
	ts, merged, ok, err := readFile(ctx, path, f.ro, f.unreadable, f.skippedRows)
	if !ok {
		return err
	}
	ts = corpus.Attribute(path, ts)
	persons(trace.NewFilePersons(path, ts, merged))
	for _, t := range ts {
		emit(*t)
	}
	return nil
}

// readFile reads the trace file at path in a DoFn, as every pipeline
// reads its files. A file that cannot be read is counted in unreadable and
// logged to the runner, and ok is false; with ro.Strict it is also the
// step's error, as is a file the person rule gives no person
// (trace.ErrNoPerson) in any mode. The rows reading skipped or merged are counted in skipped.
// merged are the uids of the file's data the person rule released as
// another person (trace.Report.Merged), which the join of persons needs
// (joinPersons).
func readFile(ctx context.Context, path string, ro trace.ReadOptions, unreadable, skipped beam.Counter) (traces []*trace.Trace, merged []trace.Merge, ok bool, err error) {
	ts, rep, err := trace.ReadFile(path, ro)
	if err != nil {
		if ro.Strict || errors.Is(err, trace.ErrNoPerson) {
			// A file of no person is never skipped: its traces would
			// be nobody's, or guessed.
			return nil, nil, false, stageError("%s: %v", path, err)
		}
		unreadable.Inc(ctx, 1)
		log.Warnf(ctx, "skipped unreadable file %s: %v", path, err)
		return nil, nil, false, nil
	}
	skipped.Inc(ctx, int64(rep.SkippedRows()))
	return ts, rep.Merged, true, nil
}

// hasMeta reports whether a path element holds a filepath.Match wildcard.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// GlobRoot returns the root of a file pattern, made absolute: the longest
// leading run of its directories without a wildcard. Outputs mirror the
// matched files' paths relative to it. A pattern without wildcards is its
// own root if it names a directory, else its directory.
func GlobRoot(pattern string) (string, error) {
	abs, err := filepath.Abs(pattern)
	if err != nil {
		return "", err
	}
	if !hasMeta(abs) {
		if st, err := os.Stat(abs); err == nil && !st.IsDir() {
			return filepath.Dir(abs), nil
		}
		return abs, nil
	}
	parts := strings.Split(abs, string(filepath.Separator))
	i := 0
	for i < len(parts) && !hasMeta(parts[i]) {
		i++
	}
	root := strings.Join(parts[:i], string(filepath.Separator))
	if root == "" {
		root = string(filepath.Separator)
	}
	return root, nil
}

// Match expands a pattern into trace files, sorted, and the other files it
// matched. The pattern is a directory (every file under it, as the
// single-machine `sanitize --in DIR`), a file, or a glob: filepath.Match
// wildcards in any path element, and an element "**" matching any number
// of directories (zero or more), e.g. "data/geolife/**/*.plt". Matched
// files count as traces as trace.Files counts them: a trace extension, and
// for .json a GeoJSON Feature near the start; the others are returned as
// ignored. Matching nothing is an error.
func Match(pattern string) (files, ignored []string, err error) {
	root, err := GlobRoot(pattern)
	if err != nil {
		return nil, nil, err
	}
	abs, _ := filepath.Abs(pattern)
	if !hasMeta(abs) {
		// A directory or a file: exactly what the single-machine command reads.
		return trace.Files(abs)
	}
	if _, err := os.Stat(root); err != nil {
		return nil, nil, fmt.Errorf("%s: the pattern's directory %s: %w", pattern, root, err)
	}
	rest := strings.Split(strings.TrimPrefix(abs, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)), string(filepath.Separator))
	for _, p := range rest {
		if _, err := filepath.Match(p, ""); err != nil {
			return nil, nil, fmt.Errorf("%s: bad pattern element %q: %w", pattern, p, err)
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !matchElems(rest, strings.Split(rel, string(filepath.Separator))) {
			return nil
		}
		if isTrace(path) {
			files = append(files, path)
		} else {
			ignored = append(ignored, path)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no trace files (%s) match: %w", pattern, strings.Join(trace.Extensions, ", "), trace.ErrNoTraceFiles)
	}
	// Sorted as trace.Files sorts; ignored files stay in walk order, as
	// there, so that a pattern and its directory give the same manifest.
	slices.Sort(files)
	return files, ignored, nil
}

// matchElems matches path elements against pattern elements, "**"
// matching any number of elements.
func matchElems(pat, elems []string) bool {
	if len(pat) == 0 {
		return len(elems) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(elems); k++ {
			if matchElems(pat[1:], elems[k:]) {
				return true
			}
		}
		return false
	}
	if len(elems) == 0 {
		return false
	}
	ok, _ := filepath.Match(pat[0], elems[0])
	return ok && matchElems(pat[1:], elems[1:])
}

// isTrace applies trace.Files' rule for files found in a directory.
func isTrace(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if !slices.Contains(trace.Extensions, ext) {
		return false
	}
	if ext != ".json" {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true // reading it reports the error
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(`"Feature`))
}

// sortWalkOrder sorts paths as filepath.WalkDir visits them: element by
// element, each directory's entries by name.
func sortWalkOrder(paths []string) {
	slices.SortFunc(paths, func(a, b string) int {
		return slices.Compare(strings.Split(a, string(filepath.Separator)), strings.Split(b, string(filepath.Separator)))
	})
}
