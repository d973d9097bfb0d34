package geoind

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// stateFixture is a state path and a key directory in a fresh temporary
// directory, with a query helper that advances the time a minute a query.
type stateFixture struct {
	t    *testing.T
	f    StateFile
	cfg  Config
	src  noise.Source
	step int
}

func newStateFixture(t *testing.T) *stateFixture {
	dir := t.TempDir()
	return &stateFixture{
		t:   t,
		f:   StateFile{Path: filepath.Join(dir, "state.json"), KeyDir: filepath.Join(dir, "keys")},
		cfg: paperConfig(),
		src: noise.Seeded(22),
	}
}

var t0 = time.Unix(1.2e9, 0).UTC()

func (x *stateFixture) query() (Report, error) {
	x.step++
	return x.f.Query(&x.cfg, geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Duration(x.step)*time.Minute), x.src)
}

func (x *stateFixture) mustQuery() Report {
	x.t.Helper()
	rep, err := x.query()
	if err != nil {
		x.t.Fatal(err)
	}
	return rep
}

func (x *stateFixture) read() []byte {
	x.t.Helper()
	b, err := os.ReadFile(x.f.Path)
	if err != nil {
		x.t.Fatal(err)
	}
	return b
}

func (x *stateFixture) write(b []byte) {
	x.t.Helper()
	if err := os.WriteFile(x.f.Path, b, 0o600); err != nil {
		x.t.Fatal(err)
	}
}

func TestStateFileRoundTrip(t *testing.T) {
	x := newStateFixture(t)
	for i := range 4 {
		if rep := x.mustQuery(); rep.Step != i {
			t.Fatalf("query %d reported step %d", i, rep.Step)
		}
	}
	st, err := x.f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Seal == nil || st.Seal.Counter != 4 || len(st.Run) != 4 || st.Spent != st.Run.Spent() {
		t.Fatalf("loaded state: seal %+v, %d steps, spent %g", st.Seal, len(st.Run), st.Spent)
	}
	// The key file is private and never copied into the state.
	key, err := os.ReadFile(filepath.Join(x.f.KeyDir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(x.f.KeyDir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %v, want 0600", perm)
	}
	raw, _ := hex.DecodeString(strings.TrimSpace(string(key)))
	state := x.read()
	if bytes.Contains(state, bytes.TrimSpace(key)) || len(raw) != 32 || bytes.Contains(state, raw) {
		t.Error("the state file contains the key")
	}
	// Re-indenting the JSON changes no value: the MAC is over the
	// canonical encoding, not the layout.
	var buf bytes.Buffer
	if err := json.Compact(&buf, state); err != nil {
		t.Fatal(err)
	}
	x.write(buf.Bytes())
	if _, err := x.f.Load(); err != nil {
		t.Errorf("re-formatted state refused: %v", err)
	}
	h, err := x.f.History()
	if err != nil || len(h) != 1 || h[0].Reason != "first" || h[0].ID != st.Seal.ID {
		t.Errorf("history %+v, %v", h, err)
	}
}

// TestStateFileEdit: an edited state (epsilon ×10, or the spend lowered
// consistently with a forged run) is refused.
func TestStateFileEdit(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	x.mustQuery()
	orig := x.read()
	st, err := ReadState(x.f.Path)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*State){
		"epsilon ×10": func(s *State) { s.Config.Params.Epsilon *= 10; s.Config.Rate *= 10 },
		"run dropped": func(s *State) { s.Run = s.Run[:0]; s.Spent = 0 },
		"counter":     func(s *State) { s.Seal.Counter += 5 },
	} {
		e := st
		seal := *st.Seal
		e.Seal = &seal
		e.Run = append(Run(nil), st.Run...)
		edit(&e)
		if err := WriteState(x.f.Path, e); err != nil {
			t.Fatal(err)
		}
		if _, err := x.query(); !errors.Is(err, ErrStateModified) {
			t.Errorf("%s: query err = %v, want ErrStateModified", name, err)
		}
	}
	// A text edit of one digit.
	x.write(bytes.Replace(orig, []byte(`"epsilon": 0.0230`), []byte(`"epsilon": 0.2302`), 1))
	if _, err := x.query(); !errors.Is(err, ErrStateModified) {
		t.Errorf("text edit: err = %v", err)
	}
	// The original is still accepted.
	x.write(orig)
	if _, err := x.query(); err != nil {
		t.Errorf("original state refused: %v", err)
	}
}

// TestStateFileRollback: restoring an older copy is refused, so no step is
// released twice with fresh noise.
func TestStateFileRollback(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	old := x.read()
	x.mustQuery()
	x.mustQuery()
	latest := x.read()
	x.write(old)
	if _, err := x.query(); !errors.Is(err, ErrStateRolledBack) {
		t.Fatalf("restored state: err = %v, want ErrStateRolledBack", err)
	}
	if _, err := x.f.Load(); !errors.Is(err, ErrStateRolledBack) {
		t.Errorf("Load of a restored state: %v", err)
	}
	// One write back is refused too (it is not the crash case: the
	// record shows the newer write completed).
	x.write(latest)
	x.mustQuery()
	x.write(latest)
	if _, err := x.query(); !errors.Is(err, ErrStateRolledBack) {
		t.Errorf("state one write old: err = %v", err)
	}
}

// TestStateFileDelete: a deleted state does not silently give a fresh
// budget; NewBudget starts one and the record keeps the history, and the
// replaced session cannot be brought back.
func TestStateFileDelete(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	x.mustQuery()
	old := x.read()
	spent := x.mustQuery().Spent
	if err := os.Remove(x.f.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := x.query(); !errors.Is(err, ErrStateMissing) {
		t.Fatalf("deleted state: err = %v, want ErrStateMissing", err)
	}
	x.f.NewBudget = true
	rep := x.mustQuery()
	x.f.NewBudget = false
	if rep.Step != 0 {
		t.Errorf("new budget starts at step %d", rep.Step)
	}
	h, err := x.f.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[1].Reason != "new budget (state missing)" || h[1].Replaced != h[0].ID ||
		h[1].ReplacedCounter != 3 || h[1].ReplacedSpent != spent {
		t.Errorf("history after a new budget: %+v (spent %g)", h, spent)
	}
	x.mustQuery()
	// The replaced session's state is refused.
	x.write(old)
	if _, err := x.query(); !errors.Is(err, ErrStateRolledBack) {
		t.Errorf("state of a replaced session: err = %v", err)
	}
	// A missing state without a configuration is an error, not a budget.
	if err := os.Remove(x.f.Path); err != nil {
		t.Fatal(err)
	}
	f := x.f
	f.NewBudget = true
	if _, err := f.Query(nil, geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Hour), x.src); err == nil {
		t.Error("new budget without a configuration accepted")
	}
}

// TestStateFileNewBudgetReplaces: NewBudget over an existing state replaces
// it, and that too is recorded.
func TestStateFileNewBudgetReplaces(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	x.f.NewBudget = true
	x.mustQuery()
	h, err := x.f.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[1].Reason != "new budget (state replaced)" || h[1].ReplacedCounter != 1 {
		t.Errorf("history %+v", h)
	}
}

// TestStateFileCopy: a state copied to another path is refused there.
func TestStateFileCopy(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	cp := x.f
	cp.Path = filepath.Join(filepath.Dir(x.f.Path), "copy.json")
	if err := os.WriteFile(cp.Path, x.read(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := cp.Query(nil, geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Hour), x.src)
	if !errors.Is(err, ErrStateUnknown) {
		t.Errorf("copied state: err = %v, want ErrStateUnknown", err)
	}
	// Another key directory cannot verify it.
	other := x.f
	other.KeyDir = filepath.Join(t.TempDir(), "other")
	if _, err := other.Load(); !errors.Is(err, ErrStateModified) {
		t.Errorf("state under another key: err = %v", err)
	}
}

// TestStateFileCrash simulates crashes at each write of a query: nothing
// is released, the budget is never rolled back (a step whose state reached
// the disk stays charged even though its point was never returned), and
// the session goes on.
func TestStateFileCrash(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	before := x.read()
	crash := errors.New("simulated crash")
	origState, origRecord := writeStateFile, writeRecordFile
	t.Cleanup(func() { writeStateFile, writeRecordFile = origState, origRecord })

	// 1. Crash in the middle of the state write: part of the bytes hit a
	// temporary file that is never renamed over the state.
	writeStateFile = func(path string, data []byte) error {
		if err := os.WriteFile(path+".partial", data[:len(data)/2], 0o600); err != nil {
			return err
		}
		return crash
	}
	rep, err := x.query()
	if !errors.Is(err, crash) || rep != (Report{}) {
		t.Fatalf("crash during the state write: %+v, %v", rep, err)
	}
	if !bytes.Equal(x.read(), before) {
		t.Error("state file changed by a failed query")
	}
	writeStateFile = origState

	// 2. Crash between the state write and the record write.
	writeRecordFile = func(string, []byte) error { return crash }
	rep, err = x.query()
	if !errors.Is(err, crash) || rep != (Report{}) {
		t.Fatalf("crash before the record write: %+v, %v", rep, err)
	}
	writeRecordFile = origRecord
	st, err := ReadState(x.f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Run) != 2 {
		t.Fatalf("state after the crash has %d steps, want 2", len(st.Run))
	}
	// The state one write ahead of its record is accepted, and the step
	// it charged stays charged: the next report is step 2.
	rep = x.mustQuery()
	if rep.Step != 2 || rep.Spent != st.Spent+rep.Cost {
		t.Errorf("after recovery: step %d spent %g, want step 2 spent %g", rep.Step, rep.Spent, st.Spent+rep.Cost)
	}
	loaded, err := x.f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Seal.Counter != 3 || loaded.Spent != rep.Spent {
		t.Errorf("after recovery: counter %d spent %g", loaded.Seal.Counter, loaded.Spent)
	}

	// 3. After a crash between the writes, the older state is accepted
	// too: the record proves its successor was never released.
	mid := x.read()
	writeRecordFile = func(string, []byte) error { return crash }
	if _, err := x.query(); !errors.Is(err, crash) {
		t.Fatal(err)
	}
	writeRecordFile = origRecord
	x.write(mid)
	if rep = x.mustQuery(); rep.Step != 3 {
		t.Errorf("older state after an unreleased write: step %d, want 3", rep.Step)
	}

	// 4. Crash after the record of a new session, before its first
	// state: the start is retried without NewBudget (nothing was
	// released), and the history shows both starts.
	y := newStateFixture(t)
	writeStateFile = func(string, []byte) error { return crash }
	if _, err := y.query(); !errors.Is(err, crash) {
		t.Fatal(err)
	}
	writeStateFile = origState
	y.mustQuery()
	h, err := y.f.History()
	if err != nil || len(h) != 2 || h[1].Reason != "restart (interrupted start)" {
		t.Errorf("history after an interrupted start: %+v, %v", h, err)
	}
}

// TestStateFileConcurrent: concurrent queries on one state are serialised
// by the lock: every query succeeds, each step is released exactly once,
// and the state and record agree at the end.
func TestStateFileConcurrent(t *testing.T) {
	// The lock's wait bounds a user's query, not what this test checks: on
	// a busy machine (slow fsyncs) a waiter can wait for all 19 other
	// queries, since a worker that has just released the lock takes it
	// again before a polling waiter does.
	orig := lockWait
	lockWait = time.Hour
	t.Cleanup(func() { lockWait = orig })
	x := newStateFixture(t)
	x.cfg.Rate = x.cfg.Params.Epsilon / 200
	x.mustQuery() // create the session first so all goroutines resume it
	const workers, each = 4, 5
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		steps = map[int]bool{}
		errs  []error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// One time for all: the order the lock serialises them in is
				// arbitrary, and a run's times must not decrease.
				rep, err := x.f.Query(nil, geo.Point{Lat: 39.98, Lon: 116.32}, t0.Add(time.Hour), noise.Seeded(uint64(100+w*each+i)))
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if steps[rep.Step] {
					errs = append(errs, fmt.Errorf("step %d released twice", rep.Step))
				} else {
					steps[rep.Step] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	st, err := x.f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if n := 1 + workers*each; len(st.Run) != n || st.Seal.Counter != uint64(n) || len(steps) != workers*each {
		t.Errorf("after %d concurrent queries: %d steps, counter %d, %d distinct reports", workers*each, len(st.Run), st.Seal.Counter, len(steps))
	}
}

// TestStateFileLocked: a query waits for the lock and gives up with an
// error instead of spending from the same snapshot.
func TestStateFileLocked(t *testing.T) {
	x := newStateFixture(t)
	unlock, err := lockState(x.f.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	orig := lockWait
	lockWait = 50 * time.Millisecond
	t.Cleanup(func() { lockWait = orig })
	if _, err := x.query(); err == nil {
		t.Skip("flock not enforced on this platform")
	} else if !strings.Contains(err.Error(), "in use") {
		t.Errorf("err = %v", err)
	}
}

// TestStateKeyPermissions: a key readable by others is refused.
func TestStateKeyPermissions(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	key := filepath.Join(x.f.KeyDir, "key")
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := x.query(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: err = %v", err)
	}
}

// TestStateFileNoPath: the state file, which is shared, holds no path of
// the machine (issue 32: it held its canonical absolute path); a copy is
// still refused (TestStateFileCopy), by the keyed MAC of the path.
func TestStateFileNoPath(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	x.mustQuery()
	dir := filepath.Dir(x.f.Path)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, real} {
		if b := x.read(); bytes.Contains(b, []byte(d)) {
			t.Errorf("state file holds the directory %s:\n%s", d, b)
		}
	}
}

// TestStateFileVersion2: a version 2 state (its seal with the path itself)
// written before issue 32 is still verified and queried, and its next
// write is version 3 without the path.
func TestStateFileVersion2(t *testing.T) {
	x := newStateFixture(t)
	x.mustQuery()
	kr, canon, rec, err := x.f.record()
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(x.f.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite it as the earlier code did.
	st.Version = 2
	st.Seal.PathMAC, st.Seal.Path = "", canon
	if err := kr.seal(&st); err != nil {
		t.Fatal(err)
	}
	if err := WriteState(x.f.Path, st); err != nil {
		t.Fatal(err)
	}
	rec.StateMAC = st.Seal.MAC
	if err := kr.writeRecord(rec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(x.read(), []byte(`"path": "`+canon)) {
		t.Fatalf("fixture is not a version 2 state:\n%s", x.read())
	}
	x.mustQuery()
	got, err := x.f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != StateVersion || got.Seal.Path != "" || got.Seal.PathMAC == "" || got.Seal.Counter != 2 {
		t.Errorf("after a query: version %d, seal %+v; want version %d, a path MAC and counter 2", got.Version, got.Seal, StateVersion)
	}
	// A version 2 copy elsewhere is refused too.
	st.Seal.Path = filepath.Join(filepath.Dir(canon), "elsewhere.json")
	if err := kr.seal(&st); err != nil {
		t.Fatal(err)
	}
	if err := kr.verify(x.f.Path, st, rec, canon); !errors.Is(err, ErrStateUnknown) {
		t.Errorf("version 2 state of another path: %v, want ErrStateUnknown", err)
	}
}
