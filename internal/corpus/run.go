package corpus

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// Config configures Run.
type Config[C Certificate] struct {
	// In is the corpus directory (searched recursively for trace files)
	// and Out the output directory, which mirrors it.
	In, Out string
	// Read says how files are read, and Read.Corpus who the persons are
	// (trace.PersonRule): Run reads every file with Read.Root = In.
	Read trace.ReadOptions
	// Persons, if set, is told who the persons are, with their files and
	// points, before anything is released; an error it returns ends the
	// run with nothing written.
	Persons func([]trace.PersonCount) error
	// Workers is the number of units released in parallel; zero means
	// GOMAXPROCS.
	Workers int
	// Progress, if set, is called after each unit with the units and
	// points done so far and the totals.
	Progress func(done, total, points, totalPoints int)
	// Header is what the manifest states of the options.
	Header Header
	// Sanitizer releases the units.
	Sanitizer Sanitizer[C]
	// Key identifies the options that shape the release: a journal of a
	// run with another key is refused rather than mixed with this one.
	Key string
	// Ledger admits each unit's people (budget.Admission, its Release
	// naming this release): checked against Header.EpsilonTarget before
	// anything is drawn, charged that bound as pending immediately before
	// their unit is drawn, settled to the certified epsilons when its
	// files land, undone when it fails with nothing landed. Nil charges
	// nothing.
	Ledger *budget.Admission
}

// journalEntry records a finished unit, so that an interrupted run resumes
// without redoing it.
type journalEntry struct {
	Options string `json:"options"`
	UnitRelease
}

// Run releases every unit of a corpus on this machine (ScanFile,
// GroupUnits, ReleaseUnit), c.Workers at a time, and writes the manifest
// last. A journal in c.Out records finished units, so that a run
// interrupted (or killed) resumes where it stopped when started again with
// the same key; another key refuses to resume, before anything is charged
// or written. A unit that fails is recorded in the manifest's Failed list
// and the rest goes on. With c.Ledger, each unit's people are charged as
// the Config says, and charges a killed run left pending are settled (the
// unit's files landed) or undone (nothing of it did) first.
func Run[C Certificate](c Config[C]) (*Manifest, error) {
	start := time.Now()
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	in, out, err := CheckDirs(c.In, c.Out)
	if err != nil {
		return nil, err
	}
	files, ignored, err := trace.Files(in)
	if err != nil {
		return nil, err
	}
	c.Read.Root = in

	scans, err := scanCorpus(c, in, files)
	if err != nil {
		return nil, err
	}
	m := NewManifest(c.Header, in, len(files), ignored)
	m.UIDRule = Rule(c.Read)
	done, err := readJournal(filepath.Join(out, JournalName), c.Key)
	if err != nil {
		return nil, err
	}
	units, failed := GroupUnits(in, scans)
	for _, f := range failed {
		m.Fail(f)
	}
	total, totalPts := len(units), unitPoints(units)
	resumed := func(u Unit) (*journalEntry, bool) {
		e, ok := done[strings.Join(Rel(in, u.Files), "\x00")]
		return e, ok && outputsExist(out, e)
	}
	if c.Ledger != nil {
		if err := preflightLedger(c, units, in, out, resumed); err != nil {
			return nil, err
		}
	}
	created, err := atomicfile.MkdirAll(filepath.Join(out, CertificatesDir), 0o755)
	if err != nil {
		return nil, err
	}
	journalPath := filepath.Join(out, JournalName)
	_, statErr := os.Stat(journalPath)
	newJournal := errors.Is(statErr, fs.ErrNotExist)
	// undo takes away what this run created when it released nothing:
	// a refused run leaves the file system as it found it.
	undo := func() {
		if newJournal {
			os.Remove(journalPath)
		}
		atomicfile.RemoveCreated(created)
	}

	// Pass 2: release the units.
	var mu sync.Mutex
	journal, err := os.OpenFile(journalPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		undo()
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
		if c.Progress != nil {
			c.Progress(finished, total, pts, totalPts)
		}
	}
	var journalErr, ledgerErr error
	var unitErrs []error // the errors of the units that failed
	failErr := func(err error) {
		mu.Lock()
		unitErrs = append(unitErrs, err)
		mu.Unlock()
	}
	parallel(len(units), c.Workers, func(k int) {
		u := units[k]
		if e, ok := resumed(u); ok {
			mu.Lock()
			m.Resumed++
			mu.Unlock()
			record(&e.UnitRelease, nil, u.Points)
			return
		}
		key := UnitKey(Rel(in, u.Files))
		target := map[string]float64{}
		for _, uid := range u.UIDs {
			target[uid] = c.Header.EpsilonTarget
		}
		// Charged immediately before the unit is drawn (under the
		// ledger's lock, so the check above still holds).
		if err := c.Ledger.Charge(key, target); err != nil {
			err = fmt.Errorf("not released: %w", err)
			f := u.Failure(in, err)
			record(nil, &f, u.Points)
			failErr(err)
			return
		}
		e, err := ReleaseUnit(u, c.Sanitizer, c.Read, in, out)
		if err != nil {
			var lerr error
			if landed(u, c.Sanitizer.CertificateSuffix, in, out) {
				lerr = c.Ledger.Settle(key, nil) // something landed: the bound stays
			} else {
				lerr = c.Ledger.Undo(key)
			}
			f := u.Failure(in, err)
			record(nil, &f, u.Points)
			failErr(err)
			if lerr != nil {
				mu.Lock()
				ledgerErr = cmp.Or(ledgerErr, lerr)
				mu.Unlock()
			}
			return
		}
		b, _ := json.Marshal(journalEntry{Options: c.Key, UnitRelease: *e})
		mu.Lock()
		if _, err := journal.Write(append(b, '\n')); err == nil {
			err = journal.Sync()
		} else if journalErr == nil {
			journalErr = err
		}
		mu.Unlock()
		if err := c.Ledger.Settle(key, certifiedOf(e.Persons)); err != nil {
			mu.Lock()
			ledgerErr = cmp.Or(ledgerErr, err)
			mu.Unlock()
		}
		record(e, nil, u.Points)
	})
	if journalErr != nil {
		return nil, fmt.Errorf("journal: %w", journalErr)
	}
	m.Finish(time.Since(start))
	return finishRun(out, m, journal, undo, unitErrs, ledgerErr)
}

// unitPoints is the number of points of the units together.
func unitPoints(units []Unit) int {
	n := 0
	for _, u := range units {
		n += u.Points
	}
	return n
}

// scanCorpus is pass 1: who is in which file, before anything is written.
// It refuses a corpus that names no person where one is needed and shows
// the census to c.Persons.
func scanCorpus[C Certificate](c Config[C], in string, files []string) ([]FileScan, error) {
	scans := ScanFiles(files, c.Read, c.Workers)
	if err := Refused(in, scans); err != nil {
		return nil, err
	}
	if c.Persons != nil {
		joined, _ := JoinPersons(scans) // as GroupUnits will release them
		if err := c.Persons(Census(joined)); err != nil {
			return nil, err
		}
	}
	return scans, nil
}

// preflightLedger settles what a crashed run left pending, then refuses
// before anything is drawn or written: each person of a unit still to
// release can be certified at most the target.
func preflightLedger[C Certificate](c Config[C], units []Unit, in, out string, resumed func(Unit) (*journalEntry, bool)) error {
	if err := settleCrashed(c, units, in, out, resumed); err != nil {
		return err
	}
	all := map[string]float64{}
	for _, u := range units {
		if _, ok := resumed(u); !ok {
			for _, uid := range u.UIDs {
				all[uid] = c.Header.EpsilonTarget
			}
		}
	}
	return c.Ledger.Check(all)
}

// finishRun writes the manifest of what landed, or, when nothing did (every
// unit failed, or there was none), leaves no manifest of nobody, no
// certified epsilon of 0 and nothing this run created.
func finishRun(out string, m *Manifest, journal *os.File, undo func(), unitErrs []error, ledgerErr error) (*Manifest, error) {
	if len(m.Persons) == 0 {
		journal.Close()
		if ledgerErr == nil {
			undo()
		}
		return nil, &NothingReleasedError{Failed: m.Failed, Errs: unitErrs, LedgerErr: ledgerErr}
	}
	if err := WriteManifest(out, m); err != nil {
		return nil, err
	}
	if ledgerErr != nil {
		return m, fmt.Errorf("the release was written, but the ledger could not be updated (its charges stay at their upper bound, pending; the next run of this release settles them): %w", ledgerErr)
	}
	return m, nil
}

// UnitKey names a unit in the ledger by a hash of its inputs (relative to
// the corpus root), never a path.
func UnitKey(inputs []string) string {
	h := sha256.Sum256([]byte(strings.Join(inputs, "\x00")))
	return "unit " + hex.EncodeToString(h[:8])
}

func certifiedOf(ps []Person) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ps {
		out[p.UID] = p.EpsilonMax
	}
	return out
}

// outputsOf are the files ReleaseUnit writes for u under out.
func outputsOf(u Unit, suffix, in, out string) []string {
	var paths []string
	for _, r := range Rel(in, u.Files) {
		paths = append(paths, filepath.Join(out, filepath.FromSlash(r)))
	}
	return append(paths, filepath.Join(out, CertificatesDir, certName(u.UIDs, suffix)))
}

// landed reports whether anything of u's release may have been written
// under out: one of its files, or a temporary file of one (atomicfile
// writes them beside their targets, and a killed run leaves them). When
// in doubt it says yes, so that a charge is kept rather than undone.
func landed(u Unit, suffix, in, out string) bool {
	for _, p := range outputsOf(u, suffix, in, out) {
		// A path through a file (ENOTDIR) cannot exist either.
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return true
		}
		dir, base := filepath.Split(p)
		tmps, err := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".tmp-*"))
		if err != nil || len(tmps) > 0 {
			return true
		}
	}
	return false
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// settleCrashed resolves the charges an earlier run of this release left
// pending (it was killed between charging a unit and settling it): a unit
// journalled as finished is settled to its certified epsilons; a unit with
// any file (or temporary file) under out is settled to its certificate's
// epsilons if that certificate is there and names the unit's people, else
// kept at the upper bound; a unit with nothing under out released nothing
// and its charge is undone. A pending charge of a unit the corpus no
// longer has stays at its upper bound.
func settleCrashed[C Certificate](c Config[C], units []Unit, in, out string, resumed func(Unit) (*journalEntry, bool)) error {
	byKey := map[string]Unit{}
	for _, u := range units {
		byKey[UnitKey(Rel(in, u.Files))] = u
	}
	for _, key := range c.Ledger.Pending() {
		u, ok := byKey[key]
		if !ok {
			continue
		}
		var err error
		switch e, ok := resumed(u); {
		case ok:
			err = c.Ledger.Settle(key, certifiedOf(e.Persons))
		case landed(u, c.Sanitizer.CertificateSuffix, in, out):
			if err = c.Ledger.Settle(key, certificateOn(u, c.Sanitizer.CertificateSuffix, out)); err != nil {
				err = c.Ledger.Settle(key, nil) // a certificate above the bound is not this release's
			}
		default:
			err = c.Ledger.Undo(key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// certificateOn reads the epsilons of u's people from its certificate
// under out, if it is there and names exactly them (nil otherwise).
func certificateOn(u Unit, suffix, out string) map[string]float64 {
	b, err := os.ReadFile(filepath.Join(out, CertificatesDir, certName(u.UIDs, suffix)))
	if err != nil {
		return nil
	}
	var c certified
	if json.Unmarshal(b, &c) != nil || len(c.Persons) != len(u.UIDs) {
		return nil
	}
	eps := map[string]float64{}
	for _, p := range c.Persons {
		if !slices.Contains(u.UIDs, p.UID) {
			return nil
		}
		eps[p.UID] = p.EpsilonMax
	}
	return eps
}

// ScanFiles scans files with ro (ScanFile), workers at a time (zero
// means GOMAXPROCS), in the order of files.
func ScanFiles(files []string, ro trace.ReadOptions, workers int) []FileScan {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	scans := make([]FileScan, len(files))
	parallel(len(files), workers, func(i int) { scans[i] = ScanFile(files[i], ro) })
	return scans
}

// readJournal loads the finished units of an earlier run with the same
// options key, keyed by their inputs; a journal of other options is
// refused.
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
	for sc.Scan() {
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A line cut by a crash is the last one; it was not finished.
			continue
		}
		if e.Options != key {
			return nil, &param.Error{Name: "out", Value: filepath.Dir(path), Why: "holds a release made with other options (or another prior); resume only with the same options, or write to a new directory"}
		}
		done[strings.Join(e.Inputs, "\x00")] = &e
	}
	return done, sc.Err()
}

// outputsExist reports whether every output of a journalled unit is still
// there.
func outputsExist(out string, e *journalEntry) bool {
	for _, o := range e.Outputs {
		if _, err := os.Stat(filepath.Join(out, o)); err != nil {
			return false
		}
	}
	return true
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
