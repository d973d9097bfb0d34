package sanitize

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// ManifestVersion is the version of manifest.json (1).
const ManifestVersion = corpus.ManifestVersion

// Names Corpus writes in the output directory.
const (
	// ManifestName is the manifest, "manifest.json", written last.
	ManifestName = corpus.ManifestName
	// CertificatesDir, "certificates", holds one certificate per group of
	// people released jointly.
	CertificatesDir = corpus.CertificatesDir
)

// CorpusOptions configures Corpus.
type CorpusOptions struct {
	// Options are the release options every person shares. Listed
	// secrets are not available for a corpus. A seeded Source gives every
	// person a stream derived from the seed and their uid (noise.Derive).
	// Options.Workers, the goroutines of one person's sampling, defaults
	// to one here: groups of people are released in parallel.
	Options
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
	// Workers is the number of groups of people released in parallel;
	// zero means GOMAXPROCS.
	Workers int
	// Progress, if set, is called after each group of people with the
	// groups and points done so far and the totals.
	Progress func(done, total, points, totalPoints int)
	// Admission charges each group of people in a budget ledger before it
	// is drawn and settles or undoes the charge after (budget.Admission;
	// nil charges nothing). Options.Ledger names it in the certificates
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
	if o.Secrets != nil {
		return &param.Error{Name: "secrets", Value: len(o.Secrets), Why: "listed secrets are per trace; a corpus release protects every point"}
	}
	if err := o.Options.check(); err != nil {
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

// Manifest indexes a corpus release. It is written last, as manifest.json.
type Manifest struct {
	Version int `json:"version"`
	// EpsilonTarget, Lambda and RadiusM are the release's target; the
	// certified epsilon of each person is in Persons, the largest in
	// EpsilonMax.
	EpsilonTarget float64 `json:"epsilon_target"`
	Lambda        float64 `json:"lambda"`
	RadiusM       float64 `json:"radius_m"`
	// PriorFamily is the whole prior family every person is certified
	// against (prior.Prior.Families), as the certificates state it.
	PriorFamily any `json:"prior_family"`
	// Randomness is "crypto", or "seeded:N (derived per person:
	// seeded:N/uid)" for a seeded release, which is not private.
	Randomness string `json:"randomness"`
	// Files counts the trace files found; Ignored lists the other files,
	// relative to the input directory.
	Files   int      `json:"files"`
	Ignored []string `json:"ignored_files,omitempty"`
	// Points is the points released, over Persons.
	Points int `json:"points"`
	// SkippedRows counts input rows skipped or merged while reading, and
	// SkippedBy breaks them down by reason (docs/input.md).
	SkippedRows int            `json:"skipped_rows"`
	SkippedBy   map[string]int `json:"skipped_by_reason"`
	EpsilonMax  float64        `json:"epsilon_max"`
	// Persons are the people released, by uid; Failed the files and groups
	// of people that could not be (the rest of the corpus was).
	Persons []Released `json:"persons"`
	Failed  []Failure  `json:"failed,omitempty"`
	// Resumed counts the units a previous, interrupted run had finished.
	Resumed int     `json:"resumed_units"`
	Seconds float64 `json:"seconds"`
	// UIDRule states the person rule the release followed
	// (trace.PersonRule): a corpus, or one person's directory.
	UIDRule string `json:"uid_rule"`
	// Ledger is the certificates' ledger field (Certificate.Ledger).
	Ledger string `json:"ledger,omitempty"`
}

// Released is one person of a corpus release.
type Released struct {
	UID        string  `json:"uid"`
	Points     int     `json:"points"`
	EpsilonMax float64 `json:"epsilon_max"`
	// Files are the output files holding the person's traces and
	// Certificate the certificate covering them, relative to Out.
	Files       []string `json:"files"`
	Certificate string   `json:"certificate"`
}

// Failure is a file or group of people that could not be released; the
// rest of the corpus was.
type Failure struct {
	Files []string `json:"files"`
	UIDs  []string `json:"uids,omitempty"`
	Error string   `json:"error"`
}

// NothingReleasedError is Corpus's error when no person was released
// (every file or group failed, or there was none): then no manifest is
// written and what the run created under Out is taken away again, so a
// refused run leaves the file system as it found it. It unwraps to the
// failures' errors.
type NothingReleasedError = corpus.NothingReleasedError

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
	if err := opt.Check(); err != nil {
		return nil, err
	}
	opt.Read = opt.personRead()
	key, err := optionsKey(opt)
	if err != nil {
		return nil, err
	}
	ropt := opt.Options
	ropt.Progress = nil
	if ropt.Workers == 0 {
		ropt.Workers = corpus.PersonWorkers
	}
	if ropt.Source == nil {
		ropt.Source = noise.Secure()
	}
	cm, err := corpus.Run(corpus.Config[*Certificate]{
		In: opt.In, Out: opt.Out, Read: opt.Read, Workers: opt.Workers, Progress: opt.Progress, Key: key, Persons: opt.Persons, Ledger: opt.Admission,
		Header:    corpus.Header{EpsilonTarget: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius, PriorFamily: opt.Prior.Families(), Source: ropt.Source, Ledger: opt.Ledger},
		Sanitizer: corpus.Sanitizer[*Certificate]{Release: func(ts []*trace.Trace) ([]*trace.Trace, *Certificate, error) { return Release(ts, ropt) }, WriteCertificate: WriteCertificate, CertificateSuffix: CertificateSuffix},
	})
	if cm == nil {
		return nil, err
	}
	runErr := err // the release landed, its ledger update did not
	// The manifest as written, read back strictly into its public type.
	b, err := json.Marshal(cm)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := jsondoc.Decode(b, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return &m, runErr
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
	scans := corpus.ScanFiles(files, ro, opt.Workers)
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
	}{opt.Prior, opt.Epsilon, opt.Lambda, opt.Radius, opt.Delta, opt.Design, opt.Path, noise.Describe(opt.Source), opt.Read})
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}
