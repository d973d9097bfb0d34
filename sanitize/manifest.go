package sanitize

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// ManifestVersion is the version of manifest.json (1).
const ManifestVersion = 1

// Names a corpus release writes in the output directory.
const (
	// ManifestName is the manifest, "manifest.json", written last.
	ManifestName = "manifest.json"
	// CertificatesDir, "certificates", holds one certificate per group of
	// people released jointly.
	CertificatesDir = corpus.CertificatesDir
)

// Manifest indexes a corpus release. It is written last, as manifest.json.
// Corpus makes it; a runner of its own (the Beam pipeline) makes the same
// with NewManifest, Add, Finish and WriteManifest.
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

// Released is one person of a corpus release, as the manifest lists them.
type Released struct {
	UID        string  `json:"uid"`
	Points     int     `json:"points"`
	EpsilonMax float64 `json:"epsilon_max"`
	// Files are the output files holding the person's traces and
	// Certificate the certificate covering them, relative to the output
	// directory.
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

// NewFailure is the manifest's record of files under root, holding the
// people uids (none for a file that could not be read), failing with msg:
// the files relative to root and root's path taken out of msg, so that no
// absolute path of the machine is published.
func NewFailure(root string, files, uids []string, msg string) Failure {
	return Failure{Files: corpus.Rel(root, files), UIDs: uids, Error: corpus.PublicText(root, msg)}
}

// NothingReleasedError is Corpus's error when no person was released
// (every file or group failed, or there was none): then no manifest is
// written and what the run created under Out is taken away again, so a
// refused run leaves the file system as it found it (LedgerErr, if set,
// says a charge could not be undone; the run's files are then kept for
// the next run to settle). It unwraps to the failures' errors.
type NothingReleasedError struct {
	Failed []Failure
	// Errs are the errors of the files and groups that failed (Failed
	// holds their text), for errors.Is and errors.As.
	Errs      []error
	LedgerErr error
}

func (e *NothingReleasedError) Error() string {
	var b strings.Builder
	if len(e.Failed) == 0 {
		b.WriteString("nothing was released: the corpus holds no person")
	} else {
		fmt.Fprintf(&b, "nothing was released: all %d files or groups of people failed, so no manifest was written", len(e.Failed))
		for i, f := range e.Failed {
			if i == 3 {
				fmt.Fprintf(&b, "; and %d more", len(e.Failed)-3)
				break
			}
			fmt.Fprintf(&b, "; %s: %s", strings.Join(f.Files, ", "), f.Error)
		}
	}
	if e.LedgerErr != nil {
		fmt.Fprintf(&b, "; the ledger could not be updated (the run's files are kept so that the next run settles it): %v", e.LedgerErr)
	}
	return b.String()
}

// Unwrap gives the failures' errors (and the ledger's), so that a caller
// can tell, say, a parameter error (param.ErrInvalid) every group hit.
func (e *NothingReleasedError) Unwrap() []error {
	errs := slices.Clone(e.Errs)
	if e.LedgerErr != nil {
		errs = append(errs, e.LedgerErr)
	}
	return errs
}

// corpusRule is the person rule of a corpus, stated in its manifest.
const corpusRule = "a corpus (trace.PersonRule): each immediate child folder of the directory read is one person, with everything below it at any depth, " +
	"whatever uids its data carries; a file directly in the directory is one person per value of its uid field (a file without one is refused); " +
	"folders below a person never make a person; all traces of one person, in any number of files, are released and certified jointly"

// onePersonRule is the person rule of a directory that is one person.
const onePersonRule = "one person (trace.PersonRule; not declared a corpus): every file below the directory read, at any depth, is the person %q, " +
	"whatever uids its data carries; all their traces are released and certified jointly"

// personRule states the person rule files read with ro follow.
func personRule(ro trace.ReadOptions) string {
	if ro.Corpus {
		return corpusRule
	}
	name := ro.UID
	if name == "" {
		name = trace.InputName(ro.Root)
	}
	return fmt.Sprintf(onePersonRule, name)
}

// corpusRandomness names a corpus release's source for the manifest: a
// seeded release derives each person's stream from the seed and their uid.
func corpusRandomness(src noise.Source) string {
	if src == nil {
		src = noise.Secure()
	}
	d := noise.Describe(src)
	if strings.HasPrefix(d, "seeded") {
		return d + " (derived per person: seeded:N/uid)"
	}
	return d
}

// NewManifest starts the manifest of a corpus release with opt of files
// trace files found under root, read with ro (its person rule), ignored
// being the other files found there.
func NewManifest(opt Options, ro trace.ReadOptions, root string, files int, ignored []string) *Manifest {
	return &Manifest{Version: ManifestVersion, EpsilonTarget: opt.Epsilon, Lambda: opt.Lambda, RadiusM: opt.Radius,
		PriorFamily: opt.Prior.Families(), Randomness: corpusRandomness(opt.Source), Files: files, Ignored: corpus.Rel(root, ignored),
		UIDRule: personRule(ro), Ledger: opt.Ledger, SkippedBy: map[string]int{}}
}

// Add records the people of a group released, and the input rows reading
// their files skipped, by reason (Certificate.SkippedRows and
// SkippedByReason).
func (m *Manifest) Add(people []Released, skippedRows int, skippedBy map[string]int) {
	m.Persons = append(m.Persons, people...)
	m.SkippedRows += skippedRows
	for k, v := range skippedBy {
		m.SkippedBy[k] += v
	}
}

// Finish orders the manifest (persons by uid, failures by their files), so
// that it does not depend on the order groups finished in, totals the
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

// WriteManifest writes m as dir/ManifestName, atomically.
func WriteManifest(dir string, m *Manifest) error {
	return atomicfile.Write(filepath.Join(dir, ManifestName), 0o644, func(w io.Writer) error { return jsondoc.Write(w, m) })
}

// ManifestPersons lists the people c certifies as a corpus release's
// manifest lists them: certified by the certificate at certificateFile,
// their traces in files (by uid), both relative to the output directory.
func (c *Certificate) ManifestPersons(certificateFile string, files map[string][]string) []Released {
	out := make([]Released, len(c.Persons))
	for i, p := range c.Persons {
		out[i] = Released{UID: p.UID, Points: p.Points, EpsilonMax: p.EpsilonMax, Files: files[p.UID], Certificate: certificateFile}
	}
	return out
}
