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

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// Record is the caller's record of a released unit (package sanitize's),
// which Run journals as a JSON object, so that a resumed run gives it back.
type Record interface {
	// Paths are the unit's input files, relative to the corpus root, and
	// the files it wrote, relative to the output directory
	// (UnitRelease.Inputs and Outputs).
	Paths() (inputs, outputs []string)
	// Certified is each person's certified epsilon, by uid, which the
	// ledger is settled to.
	Certified() map[string]float64
}

// Config configures Run: C is the certificate's type, R the caller's
// record of a released unit.
type Config[C any, R Record] struct {
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
	// EpsilonTarget is the release's target, which the ledger checks and
	// charges each person before their unit is drawn.
	EpsilonTarget float64
	// Sanitizer releases the units, and Record makes the caller's record
	// of a unit released.
	Sanitizer Sanitizer[C]
	Record    func(*UnitRelease[C]) R
	// Failed is told each file or unit that could not be released, with
	// its files (as found under In), its people (none for a file that
	// could not be read) and the error; the rest of the corpus goes on.
	// Run calls it from one goroutine at a time.
	Failed func(files, uids []string, err error)
	// Epsilons reads a certificate a killed run left and gives each
	// person's certified epsilon, by uid, for the ledger (only used with
	// Ledger).
	Epsilons func(certificate []byte) (map[string]float64, error)
	// Key identifies the options that shape the release: a journal of a
	// run with another key is refused rather than mixed with this one.
	Key string
	// Ledger admits each unit's people (budget.Admission, its Release
	// naming this release): checked against EpsilonTarget before
	// anything is drawn, charged that bound as pending immediately before
	// their unit is drawn, settled to the certified epsilons when its
	// files land, undone when it fails with nothing landed. Nil charges
	// nothing.
	Ledger *budget.Admission
}

// Outcome is what Run did; the caller writes the manifest of it.
type Outcome[R Record] struct {
	// Files counts the trace files found under In, and Ignored lists the
	// other files found there, as found.
	Files   int
	Ignored []string
	// Released are the records of the units released, Resumed of them by
	// an earlier, interrupted run, in no particular order.
	Released []R
	Resumed  int
	// LedgerErr, if set, says that the ledger could not be updated: the
	// charges stay pending, at their upper bound, for the next run of the
	// release to settle. With nothing released, the run's files are then
	// kept for that run.
	LedgerErr error
}

// journalLine is a line of the journal: the caller's record of a finished
// unit, a JSON object, with the options key added as its first member
// "options" (the line's layout before records were the caller's).
func journalLine[R Record](key string, r R) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("journal: a unit's record is not a JSON object: %.40s", b)
	}
	k, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	line := append([]byte(`{"options":`), k...)
	if b[1] != '}' {
		line = append(line, ',')
	}
	return append(append(line, b[1:]...), '\n'), nil
}

// Run releases every unit of a corpus on this machine (ScanFile,
// GroupUnits, ReleaseUnit), c.Workers at a time, and returns the records
// of what it released, for the caller to write the manifest of, last. A
// journal in c.Out records finished units, so that a run interrupted (or
// killed) resumes where it stopped when started again with the same key;
// another key refuses to resume, before anything is charged or written. A
// file or unit that fails is told to c.Failed and the rest goes on. When
// nothing is released, what the run created under c.Out is taken away
// again (unless the ledger could not be updated), so that a refused run
// leaves the file system as it found it. With c.Ledger, each unit's people
// are charged as the Config says, and charges a killed run left pending
// are settled (the unit's files landed) or undone (nothing of it did)
// first.
func Run[C any, R Record](c Config[C, R]) (*Outcome[R], error) {
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
	res := &Outcome[R]{Files: len(files), Ignored: ignored}
	done, err := readJournal[R](filepath.Join(out, JournalName), c.Key)
	if err != nil {
		return nil, err
	}
	units, unreadable := GroupUnits(scans)
	for _, s := range unreadable {
		c.Failed([]string{s.Path}, nil, s.ReadError())
	}
	total, totalPts := len(units), unitPoints(units)
	resumed := func(u Unit) (R, bool) {
		r, ok := done[strings.Join(Rel(in, u.Files), "\x00")]
		return r, ok && outputsExist(out, r)
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
	// record counts a unit done: released (r), or failed (err).
	record := func(u Unit, r *R, err error) {
		mu.Lock()
		defer mu.Unlock()
		if r != nil {
			res.Released = append(res.Released, *r)
		}
		if err != nil {
			c.Failed(u.Files, u.UIDs, err)
		}
		finished++
		pts += u.Points
		if c.Progress != nil {
			c.Progress(finished, total, pts, totalPts)
		}
	}
	var journalErr, ledgerErr error
	parallel(len(units), c.Workers, func(k int) {
		u := units[k]
		if r, ok := resumed(u); ok {
			mu.Lock()
			res.Resumed++
			mu.Unlock()
			record(u, &r, nil)
			return
		}
		key := UnitKey(Rel(in, u.Files))
		target := map[string]float64{}
		for _, uid := range u.UIDs {
			target[uid] = c.EpsilonTarget
		}
		// Charged immediately before the unit is drawn (under the
		// ledger's lock, so the check above still holds).
		if err := c.Ledger.Charge(key, target); err != nil {
			record(u, nil, fmt.Errorf("not released: %w", err))
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
			record(u, nil, err)
			if lerr != nil {
				mu.Lock()
				ledgerErr = cmp.Or(ledgerErr, lerr)
				mu.Unlock()
			}
			return
		}
		r := c.Record(e)
		line, err := journalLine(c.Key, r)
		mu.Lock()
		if err == nil {
			if _, err = journal.Write(line); err == nil {
				err = journal.Sync()
			}
		}
		journalErr = cmp.Or(journalErr, err)
		mu.Unlock()
		if err := c.Ledger.Settle(key, r.Certified()); err != nil {
			mu.Lock()
			ledgerErr = cmp.Or(ledgerErr, err)
			mu.Unlock()
		}
		record(u, &r, nil)
	})
	if journalErr != nil {
		return nil, fmt.Errorf("journal: %w", journalErr)
	}
	res.LedgerErr = ledgerErr
	if len(res.Released) == 0 {
		// Nothing landed: no manifest of nobody, and nothing this run
		// created, unless the ledger still needs its files.
		journal.Close()
		if ledgerErr == nil {
			undo()
		}
	}
	return res, nil
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
func scanCorpus[C any, R Record](c Config[C, R], in string, files []string) ([]FileScan, error) {
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
func preflightLedger[C any, R Record](c Config[C, R], units []Unit, in, out string, resumed func(Unit) (R, bool)) error {
	if err := settleCrashed(c, units, in, out, resumed); err != nil {
		return err
	}
	all := map[string]float64{}
	for _, u := range units {
		if _, ok := resumed(u); !ok {
			for _, uid := range u.UIDs {
				all[uid] = c.EpsilonTarget
			}
		}
	}
	return c.Ledger.Check(all)
}

// UnitKey names a unit in the ledger by a hash of its inputs (relative to
// the corpus root), never a path.
func UnitKey(inputs []string) string {
	h := sha256.Sum256([]byte(strings.Join(inputs, "\x00")))
	return "unit " + hex.EncodeToString(h[:8])
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
		if tmps, err := tempFiles(p); err != nil || len(tmps) > 0 {
			return true
		}
	}
	return false
}

// tempFiles are the temporary files of a write of p that atomicfile left
// beside it (a killed write).
func tempFiles(p string) ([]string, error) {
	dir, base := filepath.Split(p)
	return filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".tmp-*"))
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
func settleCrashed[C any, R Record](c Config[C, R], units []Unit, in, out string, resumed func(Unit) (R, bool)) error {
	byKey := map[string]Unit{}
	for _, u := range units {
		byKey[UnitKey(Rel(in, u.Files))] = u
	}
	pending, err := c.Ledger.Pending()
	if err != nil {
		return err
	}
	for _, key := range pending {
		u, ok := byKey[key]
		if !ok {
			continue
		}
		var err error
		switch r, ok := resumed(u); {
		case ok:
			err = c.Ledger.Settle(key, r.Certified())
		case landed(u, c.Sanitizer.CertificateSuffix, in, out):
			if err = c.Ledger.Settle(key, certificateOn(u, c.Sanitizer.CertificateSuffix, out, c.Epsilons)); err != nil {
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
func certificateOn(u Unit, suffix, out string, epsilons func([]byte) (map[string]float64, error)) map[string]float64 {
	if epsilons == nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(out, CertificatesDir, certName(u.UIDs, suffix)))
	if err != nil {
		return nil
	}
	eps, err := epsilons(b)
	if err != nil || len(eps) != len(u.UIDs) {
		return nil
	}
	for uid := range eps {
		if !slices.Contains(u.UIDs, uid) {
			return nil
		}
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

// readJournal loads the records of the finished units of an earlier run
// with the same options key, keyed by their inputs; a journal of other
// options is refused.
func readJournal[R Record](path, key string) (map[string]R, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]R{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	done := map[string]R{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var opts struct {
			Options string `json:"options"`
		}
		var r R
		if json.Unmarshal(sc.Bytes(), &opts) != nil || json.Unmarshal(sc.Bytes(), &r) != nil {
			// A line cut by a crash is the last one; it was not finished.
			continue
		}
		if opts.Options != key {
			return nil, &param.Error{Name: "out", Value: filepath.Dir(path), Why: "holds a release made with other options (or another prior); resume only with the same options, or write to a new directory"}
		}
		inputs, _ := r.Paths()
		done[strings.Join(inputs, "\x00")] = r
	}
	return done, sc.Err()
}

// outputsExist reports whether every output of a journalled unit is still
// there.
func outputsExist(out string, r Record) bool {
	_, outputs := r.Paths()
	for _, o := range outputs {
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
