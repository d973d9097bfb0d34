package sanitize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// CorpusOptions configures Corpus.
type CorpusOptions struct {
	// Release are the options of the release of each group of people
	// (Release), which every person shares. Listed secrets are not
	// available for a corpus. A seeded Source gives every person a stream
	// derived from the seed and their uid (noise.Derive).
	// Release.Workers, the goroutines of one person's sampling, defaults
	// to one here, for groups of people are released in parallel
	// (GroupWorkers); Release.Progress is not called (GroupProgress is).
	Release Options
	// In is the corpus directory (searched recursively for trace files)
	// and Out the output directory, mirrored: each input file's sanitised
	// traces go to the same relative path under Out, in the same format.
	In, Out string
	// Read says how files are read (lenient by default, as advised for
	// real data). Corpus sets Read.Root to In and Read.Corpus to
	// !OnePerson: who the persons are is the person rule's
	// (trace.PersonRule), not the caller's.
	Read trace.ReadOptions
	// OnePerson declares In one person's directory rather than a corpus:
	// every file below it, at any depth, is the one person Read.UID (else
	// trace.InputName(In)), released jointly under one certificate.
	// Otherwise (calling Corpus declares a corpus) each immediate child
	// folder of In, or each uid of a file directly in In, is one person,
	// and a file directly in In without a uid field refuses the run
	// (trace.ErrNoPerson).
	OnePerson bool
	// Persons, if set, is told who the persons are, with their files and
	// points, before anything is drawn or written; an error it returns
	// ends the run with nothing written.
	Persons func([]trace.PersonCount) error
	// GroupWorkers is the number of groups of people released in
	// parallel; zero means GOMAXPROCS.
	GroupWorkers int
	// GroupProgress, if set, is called after each group of people with
	// the groups and points done so far and the totals.
	GroupProgress func(done, total, points, totalPoints int)
	// Admission charges each group of people in a budget ledger before it
	// is drawn and settles or undoes the charge after (budget.Admission;
	// nil charges nothing). Release.Ledger names it in the certificates
	// and the manifest.
	Admission *budget.Admission
}

// Check reports the first option that cannot give a valid release (a
// *param.Error naming it, as Release would), without releasing anything.
// Release, Corpus and the other entry points check their options
// themselves; Check lets a caller refuse before committing to anything,
// such as a budget charge or a cluster job.
func (o Options) Check() error { return o.check() }

// Check reports the first option that cannot give a corpus release, as
// Corpus would: those of Release, listed secrets (a corpus release
// protects every point), an output directory that is the input
// directory or inside it, and a uid naming the persons of a corpus.
func (o CorpusOptions) Check() error {
	if o.Release.Secrets != nil {
		return &param.Error{Name: "secrets", Value: len(o.Release.Secrets), Why: "listed secrets are per trace; a corpus release protects every point"}
	}
	if err := o.Release.check(); err != nil {
		return err
	}
	if _, _, err := corpus.CheckDirs(o.In, o.Out); err != nil {
		return err
	}
	if !o.OnePerson && o.Read.UID != "" {
		return &param.Error{Name: "uid", Value: o.Read.UID, Why: "names the one person of an input that is not a corpus; a corpus names its persons by folder or uid field (set OnePerson, or drop the uid)"}
	}
	return nil
}

// checkForeignRelease refuses an output directory that holds a release
// this runner did not journal: a manifest without a journal (a finished
// tracepriv-pipeline release) or the pipeline's marker (part of one that
// was killed). Writing there would overwrite the certificates by which that
// release's pending ledger charges are settled, and mix two releases.
func checkForeignRelease(out string) error {
	if isRegularFile(filepath.Join(out, corpus.PipelineMarkerName)) {
		return &param.Error{Name: "out", Value: out, Why: "holds part of a tracepriv-pipeline release that did not finish (" + corpus.PipelineMarkerName +
			"); run that pipeline release again with its own options to finish it and settle its ledger charges, or write this release to a new directory"}
	}
	if isRegularFile(filepath.Join(out, ManifestName)) && !isRegularFile(filepath.Join(out, corpus.JournalName)) {
		return &param.Error{Name: "out", Value: out, Why: "holds a release already (" + ManifestName + ", written by tracepriv-pipeline or another tool: no " +
			corpus.JournalName + " to resume from); write this release to a new directory"}
	}
	return nil
}

// Corpus releases every person of a directory of traces: each person's
// traces, over all files, are designed for, certified and perturbed jointly
// (Release), people are processed in parallel, and the output files and
// certificate of each group of people sharing a file are written together.
// A journal in Out records finished groups, so that a run interrupted (or
// killed) resumes where it stopped when started again with the same
// options; a different set of options refuses to resume rather than mix
// two releases. A group that fails (a file that cannot be read in strict
// mode, a person the dense path cannot take) is recorded in the manifest's
// Failed list and the rest goes on; if no group is released, Corpus
// writes nothing and returns a *NothingReleasedError.
func Corpus(opt CorpusOptions) (*Manifest, error) {
	start := time.Now()
	if err := opt.Check(); err != nil {
		return nil, err
	}
	in, out, err := corpus.CheckDirs(opt.In, opt.Out)
	if err != nil {
		return nil, err
	}
	if err := checkForeignRelease(out); err != nil {
		return nil, err
	}
	opt.Read = opt.personRead()
	key, err := optionsKey(opt)
	if err != nil {
		return nil, err
	}
	ropt := opt.Release
	ropt.Progress = nil
	if ropt.Workers == 0 {
		ropt.Workers = corpus.PersonWorkers
	}
	if ropt.Source == nil {
		ropt.Source = noise.Secure()
	}
	var failed []Failure
	var errs []error // the errors of the files and groups that failed
	res, err := corpus.Run(corpus.Config[*Certificate, corpusGroup]{
		In: opt.In, Out: opt.Out, Read: opt.Read, Workers: opt.GroupWorkers, Progress: opt.GroupProgress, Key: key, Persons: opt.Persons,
		Ledger: opt.Admission, EpsilonTarget: ropt.Epsilon, Sanitizer: corpusSanitizer(ropt), Record: newCorpusGroup,
		Failed: func(files, uids []string, err error) {
			failed = append(failed, NewFailure(in, files, uids, err.Error()))
			errs = append(errs, err)
		},
		Epsilons: CertificateEpsilons,
	})
	if err != nil {
		return nil, err
	}
	ro := opt.Read
	ro.Root = in // as the runner read the files
	m := NewManifest(ropt, ro, in, res.Files, res.Ignored)
	for _, g := range res.Released {
		m.Add(g.Persons, g.SkippedRows, g.SkippedBy)
	}
	m.Failed, m.Resumed = failed, res.Resumed
	m.Finish(time.Since(start))
	if len(m.Persons) == 0 {
		// No manifest of nobody, no certified epsilon of 0; the runner
		// took away what this run created.
		return nil, &NothingReleasedError{Failed: m.Failed, Errs: errs, LedgerErr: res.LedgerErr}
	}
	if err := WriteManifest(out, m); err != nil {
		return nil, err
	}
	if res.LedgerErr != nil {
		return m, fmt.Errorf("the release was written, but the ledger could not be updated (its charges stay at their upper bound, pending; the next run of this release settles them): %w", res.LedgerErr)
	}
	return m, nil
}

// corpusSanitizer binds the corpus runner to Release with opt.
func corpusSanitizer(opt Options) corpus.Sanitizer[*Certificate] {
	return corpus.Sanitizer[*Certificate]{
		Release: func(ts []*trace.Trace, read *trace.Report) ([]*trace.Trace, *Certificate, error) {
			out, c, err := Release(ts, opt)
			if err != nil {
				return nil, nil, err
			}
			c.RecordInput(read)
			return out, c, nil
		},
		WriteCertificate: WriteCertificate, CertificateSuffix: CertificateSuffix,
	}
}

// corpusGroup is Corpus's record of a group of people released, which the
// runner journals (one JSON object a line, with the options key), so that
// an interrupted run resumes with it: the group's input files (relative to
// In), its people as the manifest lists them, the files it wrote (relative
// to Out) and the input rows reading skipped.
type corpusGroup struct {
	Inputs      []string       `json:"inputs"`
	Persons     []Released     `json:"persons"`
	Outputs     []string       `json:"outputs"`
	SkippedRows int            `json:"skipped_rows"`
	SkippedBy   map[string]int `json:"skipped_by_reason"`
}

func newCorpusGroup(r *corpus.UnitRelease[*Certificate]) corpusGroup {
	return corpusGroup{Inputs: r.Inputs, Persons: r.Certificate.ManifestPersons(r.CertificateFile, r.Files), Outputs: r.Outputs,
		SkippedRows: r.Certificate.SkippedRows, SkippedBy: r.Certificate.SkippedByReason}
}

func (g corpusGroup) Paths() (inputs, outputs []string) { return g.Inputs, g.Outputs }

func (g corpusGroup) Certified() map[string]float64 {
	eps := map[string]float64{}
	for _, p := range g.Persons {
		eps[p.UID] = p.EpsilonMax
	}
	return eps
}

// personRead returns the read options of a corpus release: the person
// rule over In, a corpus unless OnePerson.
func (o CorpusOptions) personRead() trace.ReadOptions {
	ro := o.Read
	ro.Root, ro.Corpus = o.In, !o.OnePerson
	return ro
}

// CorpusPersons lists who the persons of a corpus release with opt are,
// with their files and points, as Corpus would release them, and the uids
// of the data the person rule merged into another person, without
// releasing or writing anything: a caller can show them, or check a
// budget, before committing to the release. Files the person rule gives
// no person refuse it, as they refuse Corpus (trace.ErrNoPerson).
func CorpusPersons(opt CorpusOptions) ([]trace.PersonCount, []trace.Merge, error) {
	if err := opt.Check(); err != nil {
		return nil, nil, err
	}
	ro := opt.personRead()
	files, _, err := trace.Files(opt.In)
	if err != nil {
		return nil, nil, err
	}
	scans := corpus.ScanFiles(files, ro, opt.GroupWorkers)
	if err := corpus.Refused(opt.In, scans); err != nil {
		return nil, nil, err
	}
	scans, _ = corpus.JoinPersons(scans) // persons found in two folders are one
	var merged []trace.Merge
	for _, s := range scans {
		merged = append(merged, s.Merged...)
	}
	return corpus.Census(scans), merged, nil
}

// optionsKey identifies the options that shape a release; resuming with
// others would mix two releases.
func optionsKey(opt CorpusOptions) (string, error) {
	b, err := json.Marshal(struct {
		Prior                   any
		Epsilon, Lambda, Radius float64
		Delta                   float64
		Design                  cip.Method
		// Method is Path's name before it had a type, so that journals
		// of earlier versions still resume.
		Method Path
		Source string
		Read   trace.ReadOptions
	}{opt.Release.Prior, opt.Release.Epsilon, opt.Release.Lambda, opt.Release.Radius, opt.Release.Delta, opt.Release.Design, opt.Release.Path,
		noise.Describe(opt.Release.Source), opt.Read})
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}
