package sanitize

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/trace"
)

// ManifestVersion is the version of manifest.json.
const ManifestVersion = 1

// Names Corpus writes in the output directory.
const (
	ManifestName    = "manifest.json"
	JournalName     = ".tracepriv-journal.jsonl"
	CertificatesDir = "certificates"
)

// CorpusOptions configures Corpus.
type CorpusOptions struct {
	// Options are the release options every person shares. Listed
	// secrets are not available for a corpus. A seeded Source gives every
	// person a stream derived from the seed and their uid (noise.Derive).
	Options
	// In is the corpus directory (searched recursively for trace files)
	// and Out the output directory, mirrored: each input file's sanitised
	// traces go to the same relative path under Out, in the same format.
	In, Out string
	// Read says how files are read; Lenient is advised for real data.
	Read trace.ReadOptions
	// Workers is the number of release units processed in parallel; zero
	// means GOMAXPROCS.
	Workers int
	// Progress, if set, is called after each unit with the units and
	// points done so far and the totals.
	Progress func(done, total, points, totalPoints int)
}

// Manifest indexes a corpus release. It is written last, as manifest.json.
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
	Persons       []Released     `json:"persons"`
	Failed        []Failure      `json:"failed,omitempty"`
	// Resumed counts the units a previous, interrupted run had finished.
	Resumed int     `json:"resumed_units"`
	Seconds float64 `json:"seconds"`
	// UIDRule says how traces without a user id were attributed.
	UIDRule string `json:"uid_rule"`
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

// Failure is a file or unit that could not be released; the rest of the
// corpus was.
type Failure struct {
	Files []string `json:"files"`
	UIDs  []string `json:"uids,omitempty"`
	Error string   `json:"error"`
}

// uidRule is the rule for traces without a user id, stated in the manifest.
const uidRule = "a trace without a user id in its data belongs to the person of its file's folder (trace.PersonDir): in GeoLife's layout the folder holding " +
	"the nearest Trajectory folder (<user>/Trajectory/**), otherwise the first folder below the directory read (its subfolders included), through symbolic links as through folders; " +
	"all traces of one person, in any number of files, are released and certified jointly"

// journalEntry records a finished unit, so that an interrupted run resumes
// without redoing it.
type journalEntry struct {
	Options string `json:"options"`
	UnitRelease
}

// Corpus releases every person of a directory of traces: each person's
// traces, over all files, are designed for, certified and perturbed jointly
// (Release), people are processed in parallel, and every unit's output files
// and certificate are written together. A journal in Out records finished
// units, so that a run interrupted (or killed) resumes where it stopped
// when started again with the same options; a different set of options
// refuses to resume rather than mix two releases. A unit that fails (a file
// that cannot be read in strict mode, a person too far from the origin) is
// recorded in the manifest's Failed list and the rest goes on.
func Corpus(opt CorpusOptions) (*Manifest, error) {
	start := time.Now()
	if err := CheckCorpus(opt.Options); err != nil {
		return nil, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	in, out, err := CheckDirs(opt.In, opt.Out)
	if err != nil {
		return nil, err
	}
	files, ignored, err := trace.Files(in)
	if err != nil {
		return nil, err
	}
	m := NewManifest(opt.Options, in, len(files), ignored)
	if err := os.MkdirAll(filepath.Join(out, CertificatesDir), 0o755); err != nil {
		return nil, err
	}
	key, err := optionsKey(opt)
	if err != nil {
		return nil, err
	}
	done, err := readJournal(filepath.Join(out, JournalName), key)
	if err != nil {
		return nil, err
	}

	// Pass 1: who is in which file.
	scans := make([]FileScan, len(files))
	parallel(len(files), opt.Workers, func(i int) { scans[i] = ScanFile(files[i], opt.Read) })
	units, failed := GroupUnits(in, scans)
	for _, f := range failed {
		m.Fail(f)
	}
	total, totalPts := len(units), 0
	for _, u := range units {
		totalPts += u.Points
	}

	// Pass 2: release the units.
	var mu sync.Mutex
	journal, err := os.OpenFile(filepath.Join(out, JournalName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer journal.Close()
	finished, pts := 0, 0
	record := func(e *UnitRelease, f *Failure, points int) {
		mu.Lock()
		defer mu.Unlock()
		if e != nil {
			m.Add(e)
		}
		if f != nil {
			m.Fail(*f)
		}
		finished++
		pts += points
		if opt.Progress != nil {
			opt.Progress(finished, total, pts, totalPts)
		}
	}
	ropt := opt.Options
	ropt.Progress = nil
	var journalErr error
	parallel(len(units), opt.Workers, func(k int) {
		u := units[k]
		inputs := rel(in, u.Files)
		if e, ok := done[strings.Join(inputs, "\x00")]; ok && outputsExist(out, e) {
			mu.Lock()
			m.Resumed++
			mu.Unlock()
			record(&e.UnitRelease, nil, u.Points)
			return
		}
		e, err := ReleaseUnit(u, ropt, opt.Read, in, out)
		if err != nil {
			f := u.Failure(in, err)
			record(nil, &f, u.Points)
			return
		}
		b, _ := json.Marshal(journalEntry{Options: key, UnitRelease: *e})
		mu.Lock()
		if _, err := journal.Write(append(b, '\n')); err == nil {
			err = journal.Sync()
		} else if journalErr == nil {
			journalErr = err
		}
		mu.Unlock()
		record(e, nil, u.Points)
	})
	if journalErr != nil {
		return nil, fmt.Errorf("sanitize: journal: %w", journalErr)
	}
	m.Finish(time.Since(start))
	return m, WriteManifest(out, m)
}

// describeSource names the randomness for the manifest.
func describeSource(o Options) string {
	if d := noise.Describe(o.Source); strings.HasPrefix(d, "seeded") {
		return d + " (derived per person: seeded:N/uid)"
	}
	return noise.Describe(o.Source)
}

// attribute applies the uid rule to traces read from path.
func attribute(path string, traces []*trace.Trace) []*trace.Trace {
	for _, t := range traces {
		if t.UID == "" {
			t.UID = trace.UserDir(path)
		}
	}
	return traces
}

// certName names a unit's certificate after its people, safely.
func certName(uids []string) string {
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
	return name + CertificateSuffix
}

// optionsKey identifies the options that shape a release; resuming with
// others would mix two releases.
func optionsKey(opt CorpusOptions) (string, error) {
	b, err := json.Marshal(struct {
		Prior                   any
		Epsilon, Lambda, Radius float64
		Delta                   float64
		Design, Method          string
		Source                  string
		Read                    trace.ReadOptions
	}{opt.Prior, opt.Epsilon, opt.Lambda, opt.Radius, opt.Delta, opt.Design, opt.Method, noise.Describe(opt.Source), opt.Read})
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// readJournal loads the finished units of an earlier run with the same
// options, keyed by their inputs; a journal of other options is refused.
func readJournal(path, key string) (map[string]*journalEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*journalEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	done := map[string]*journalEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for line := 1; sc.Scan(); line++ {
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A line cut by a crash is the last one; it was not finished.
			continue
		}
		if e.Options != key {
			return nil, &ParamError{Name: "out", Value: filepath.Dir(path), Why: "holds a release made with other options (or another prior); resume only with the same options, or write to a new directory"}
		}
		done[strings.Join(e.Inputs, "\x00")] = &e
	}
	return done, sc.Err()
}

func outputsExist(out string, e *journalEntry) bool {
	for _, o := range e.Outputs {
		if _, err := os.Stat(filepath.Join(out, o)); err != nil {
			return false
		}
	}
	return true
}

func rel(root string, paths []string) []string {
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

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
