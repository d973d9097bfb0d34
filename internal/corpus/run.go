package corpus

import (
	"bufio"
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
// the same key; another key refuses to resume. A unit that fails is
// recorded in the manifest's Failed list and the rest goes on.
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

	// Pass 1: who is in which file, before anything is written.
	scans := ScanFiles(files, c.Read, c.Workers)
	if err := Refused(in, scans); err != nil {
		return nil, err
	}
	if c.Persons != nil {
		if err := c.Persons(Census(scans)); err != nil {
			return nil, err
		}
	}
	m := NewManifest(c.Header, in, len(files), ignored)
	m.UIDRule = Rule(c.Read)
	if err := os.MkdirAll(filepath.Join(out, CertificatesDir), 0o755); err != nil {
		return nil, err
	}
	done, err := readJournal(filepath.Join(out, JournalName), c.Key)
	if err != nil {
		return nil, err
	}
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
		if c.Progress != nil {
			c.Progress(finished, total, pts, totalPts)
		}
	}
	var journalErr error
	parallel(len(units), c.Workers, func(k int) {
		u := units[k]
		inputs := Rel(in, u.Files)
		if e, ok := done[strings.Join(inputs, "\x00")]; ok && outputsExist(out, e) {
			mu.Lock()
			m.Resumed++
			mu.Unlock()
			record(&e.UnitRelease, nil, u.Points)
			return
		}
		e, err := ReleaseUnit(u, c.Sanitizer, c.Read, in, out)
		if err != nil {
			f := u.Failure(in, err)
			record(nil, &f, u.Points)
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
		record(e, nil, u.Points)
	})
	if journalErr != nil {
		return nil, fmt.Errorf("sanitize: journal: %w", journalErr)
	}
	m.Finish(time.Since(start))
	return m, WriteManifest(out, m)
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
