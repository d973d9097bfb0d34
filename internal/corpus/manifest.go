package corpus

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// ManifestVersion is the version of manifest.json.
const ManifestVersion = 1

// Names a corpus release writes in its output directory.
const (
	// ManifestName is the manifest, written last.
	ManifestName = "manifest.json"
	// JournalName records the finished units of a run on one machine, so
	// that an interrupted run resumes (the pipeline keeps none).
	JournalName = ".tracepriv-journal.jsonl"
	// CertificatesDir holds one certificate per unit.
	CertificatesDir = "certificates"
)

// PersonWorkers is the goroutines the sampling of one person of a corpus
// release uses (sanitize.Options.Workers): units are released in parallel,
// so each person gets one. The noise does not depend on it.
const PersonWorkers = 1

// UIDRule is the person rule of a corpus, stated in its manifest (Rule).
const UIDRule = "a corpus (trace.PersonRule): each immediate child folder of the directory read is one person, with everything below it at any depth, " +
	"whatever uids its data carries; a file directly in the directory is one person per value of its uid field (a file without one is refused); " +
	"folders below a person never make a person; all traces of one person, in any number of files, are released and certified jointly"

// onePersonRule is the person rule of a directory that is one person.
const onePersonRule = "one person (trace.PersonRule; not declared a corpus): every file below the directory read, at any depth, is the person %q, " +
	"whatever uids its data carries; all their traces are released and certified jointly"

// Rule states the person rule files read with ro follow, for a manifest.
func Rule(ro trace.ReadOptions) string {
	if ro.Corpus {
		return UIDRule
	}
	name := ro.UID
	if name == "" {
		name = trace.InputName(ro.Root)
	}
	return fmt.Sprintf(onePersonRule, name)
}

// Failure is a file or unit that could not be released; the rest of the
// corpus was.
type Failure struct {
	Files []string `json:"files"`
	UIDs  []string `json:"uids,omitempty"`
	Error string   `json:"error"`
}

// NothingReleasedError is Run's error when no person was released: every
// file or unit failed (Failed says why), or there was none. Nothing was
// written or charged (LedgerErr, if set, says a charge could not be
// undone; the run's files are then kept for the next run to settle).
type NothingReleasedError struct {
	Failed []Failure
	// Errs are the errors of the units that failed (Failed holds their
	// text), for errors.Is and errors.As.
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
// can tell, say, a parameter error (param.ErrInvalid) every unit hit.
func (e *NothingReleasedError) Unwrap() []error {
	errs := slices.Clone(e.Errs)
	if e.LedgerErr != nil {
		errs = append(errs, e.LedgerErr)
	}
	return errs
}

// Header is what a manifest states of the release's options.
type Header struct {
	EpsilonTarget, Lambda, RadiusM float64
	// PriorFamily is the whole prior family, as prior.Prior.Families returns
	// it (the certificates' prior_family).
	PriorFamily any
	// Source is the release's randomness (nil: crypto/rand).
	Source noise.Source
	// Ledger is the certificates' ledger field.
	Ledger string
}

// Manifest indexes a corpus release; sanitize.Manifest documents its
// fields.
type Manifest struct {
	Version       int            `json:"version"`
	EpsilonTarget float64        `json:"epsilon_target"`
	Lambda        float64        `json:"lambda"`
	RadiusM       float64        `json:"radius_m"`
	PriorFamily   any            `json:"prior_family"`
	Randomness    string         `json:"randomness"`
	Files         int            `json:"files"`
	Ignored       []string       `json:"ignored_files,omitempty"`
	Points        int            `json:"points"`
	SkippedRows   int            `json:"skipped_rows"`
	SkippedBy     map[string]int `json:"skipped_by_reason"`
	EpsilonMax    float64        `json:"epsilon_max"`
	Persons       []Person       `json:"persons"`
	Failed        []Failure      `json:"failed,omitempty"`
	Resumed       int            `json:"resumed_units"`
	Seconds       float64        `json:"seconds"`
	UIDRule       string         `json:"uid_rule"`
	Ledger        string         `json:"ledger,omitempty"`
}

// Randomness names a corpus release's source for the manifest: a seeded
// release derives each person's stream from the seed and their uid.
func Randomness(src noise.Source) string {
	if src == nil {
		src = noise.Secure()
	}
	d := noise.Describe(src)
	if strings.HasPrefix(d, "seeded") {
		return d + " (derived per person: seeded:N/uid)"
	}
	return d
}

// NewManifest starts the manifest of a release of files trace files under
// root; ignored are the other files found there.
func NewManifest(h Header, root string, files int, ignored []string) *Manifest {
	return &Manifest{Version: ManifestVersion, EpsilonTarget: h.EpsilonTarget, Lambda: h.Lambda, RadiusM: h.RadiusM,
		PriorFamily: h.PriorFamily, Randomness: Randomness(h.Source), Files: files, Ignored: Rel(root, ignored), UIDRule: UIDRule, Ledger: h.Ledger,
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
	slices.SortFunc(m.Persons, func(a, b Person) int { return strings.Compare(a.UID, b.UID) })
	slices.SortStableFunc(m.Failed, func(a, b Failure) int { return slices.Compare(a.Files, b.Files) })
	m.Points, m.EpsilonMax = 0, 0
	for _, p := range m.Persons {
		m.Points += p.Points
		m.EpsilonMax = max(m.EpsilonMax, p.EpsilonMax)
	}
	m.Seconds = elapsed.Seconds()
}

// WriteManifest writes m as out/ManifestName, atomically.
func WriteManifest(out string, m *Manifest) error {
	return atomicfile.Write(filepath.Join(out, ManifestName), 0o644, func(w io.Writer) error { return jsondoc.Write(w, m) })
}
