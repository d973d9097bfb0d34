package geoind

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/noise"
)

// ReadState reads a session state file without verifying its seal: use
// StateFile.Load for a state that will be trusted.
func ReadState(path string) (State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, err
	}
	var st State
	if err := jsondoc.Decode(b, &st); err != nil {
		return State{}, fmt.Errorf("%s: session state: %w", path, err)
	}
	return st, nil
}

// WriteState replaces the state file atomically and durably: the new
// content is written to a temporary file, synced, renamed over path, and
// the directory is synced so that the rename survives a power loss. It
// writes st as given; StateFile seals the state before writing it.
func WriteState(path string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeStateFile(path, append(b, '\n'))
}

// writeStateFile and writeRecordFile are variables so that tests can
// simulate a crash.
var (
	writeStateFile  = writeDurably
	writeRecordFile = writeDurably
)

func writeDurably(path string, data []byte) error {
	if err := atomicfile.WriteBytes(path, data, 0o600); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// StateFile is a Session kept in a file between queries, sealed so that
// careless or unauthorised changes to the budget are detected.
//
// # What is kept where
//
// The state file (Path, JSON, readable by anyone it is shared with) holds
// the State and its Seal: a random session id, a keyed MAC of the
// file's canonical path (not the path: the file is shared), a write counter, the MAC of the previous write and an HMAC-SHA256
// over the canonical encoding of the whole state. The key never leaves
// the key directory (KeyDir): a file "key" of 32 random bytes created
// with mode 0600 on first use (in a directory of mode 0700), and
// "records/", one small record per state path, itself MACed, holding the
// current session id, the last counter and state MAC, the budget spent,
// and the history of budgets started at that path (BudgetStart).
//
// # What is refused
//
//   - An edited state (epsilon ×10, a shortened run, a lowered spend): its
//     MAC does not verify (ErrStateModified).
//   - An older copy put back (a backup, a snapshot, a version-control
//     checkout): its counter is below the record's, or it belongs to a
//     session since replaced (ErrStateRolledBack). Without this a step
//     could be released twice with fresh noise and charged once.
//   - A deleted state whose record shows it released something: the
//     next query does not silently start a fresh budget (ErrStateMissing)
//     unless NewBudget is set, and that fresh start is appended to the
//     record's history, with the budget the replaced session had spent.
//   - A state copied to another path, or one without a record (a forked
//     budget, or another key directory): ErrStateUnknown.
//
// # Crash safety
//
// A query computes the step in memory, then writes (1) for a new session
// only, the record of its start (write-ahead: the record knows a session
// before any state of it exists), (2) the state with counter c+1, (3) the
// record at c+1, each atomically and durably (temporary file, fsync,
// rename, directory fsync), and only then returns the released point. A
// crash before (2) completes releases nothing and leaves the old state. A
// crash between (2) and (3) leaves a state one write ahead of its record
// whose Prev is the record's MAC: it is accepted and the record catches up
// at the next write; its step is charged although its point was never
// returned (over-counting, never under-counting). Restoring the older
// state then is accepted too, correctly: the record shows that nothing
// after it was released. The state file is locked for the whole query
// (an advisory lock on Path+".lock", waited for up to 10 s), so concurrent
// queries are serialised instead of spending from the same snapshot.
//
// # Threat model
//
// This protects against accidents and careless or casual tampering by
// whoever can write the state file but not the key directory: an app
// restoring a backup, a user editing or deleting the file, a sync tool
// bringing back an old version, a copy onto a second device. It does not
// protect against anyone who can read the key and write the record (the
// same user account, by default, or root): they can forge any state, or
// put back an old state together with its old record. Keep KeyDir on
// storage the app's backups and sync do not restore, and away from where
// states are shared. The state file reveals the released run and the
// configuration (public by design), never the key or a secret location.
type StateFile struct {
	// Path is the state file.
	Path string
	// KeyDir holds the key and the records; "" means DefaultKeyDir().
	KeyDir string
	// NewBudget starts a fresh session with the Config given to Query,
	// even where the record knows an earlier session at Path (its file
	// deleted, or existing and then replaced). The fresh start is recorded
	// with the budget the replaced session had spent: privacy loss of the
	// two sessions adds up for the same person.
	NewBudget bool
}

// DefaultKeyDir returns the default key directory,
// os.UserConfigDir()/tracepriv/geoind.
func DefaultKeyDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("geoind: no default key directory (%w); set StateFile.KeyDir", err)
	}
	return filepath.Join(d, "tracepriv", "geoind"), nil
}

// BudgetStart records one session (one budget) started at a state path.
type BudgetStart struct {
	Time time.Time `json:"time"` // wall-clock time of the start
	ID   string    `json:"id"`   // the new session
	// Reason is "first", "new budget (state missing)", "new budget (state
	// replaced)" or "restart (interrupted start)".
	Reason string `json:"reason"`
	// Replaced is the session the start replaced, with the write counter
	// and the budget spent its record last showed.
	Replaced        string  `json:"replaced,omitempty"`
	ReplacedCounter uint64  `json:"replaced_counter,omitempty"`
	ReplacedSpent   float64 `json:"replaced_spent,omitempty"`
}

const recordVersion = 1

// stateRecord is the second record of a state path, kept with the key.
type stateRecord struct {
	Version  int           `json:"version"`
	Path     string        `json:"path"`
	StateID  string        `json:"state_id"`
	Counter  uint64        `json:"counter"`
	StateMAC string        `json:"state_mac"`
	Spent    float64       `json:"spent"`
	Budget   float64       `json:"budget"`
	Starts   []BudgetStart `json:"starts"`
	MAC      string        `json:"mac"`
}

// keyring is an open key directory.
type keyring struct {
	dir string
	key []byte
}

const (
	keyFile    = "key"
	recordsDir = "records"
	keyBytes   = 32
)

// openKeyring reads the key of dir, creating dir (0700) and the key (0600)
// on first use. The key is created under a temporary name and linked into
// place, so concurrent first uses agree on one key and no reader ever sees
// a partial key.
func openKeyring(dir string) (*keyring, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultKeyDir(); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, keyFile)
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(dir, path); err != nil {
			return nil, fmt.Errorf("geoind: creating the state key %s: %w", path, err)
		}
		key, err = readKey(path)
	}
	if err != nil {
		return nil, err
	}
	return &keyring{dir: dir, key: key}, nil
}

func readKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(path, fi); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(string(bytes.TrimSpace(b)))
	if err != nil || len(key) != keyBytes {
		return nil, fmt.Errorf("geoind: %s: not a state key (want %d hex-encoded bytes); it was damaged: restore it, or move the key directory aside and start new budgets", path, keyBytes)
	}
	return key, nil
}

func createKey(dir, path string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key := make([]byte, keyBytes)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Link fails if another process created the key first; theirs wins.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return atomicfile.SyncDir(dir)
}

// mac returns the hex HMAC-SHA256 of a domain-separated message.
func (k *keyring) mac(domain string, msg []byte) string {
	h := hmac.New(sha256.New, k.key)
	h.Write([]byte("tracepriv geoind " + domain + "\x00"))
	h.Write(msg)
	return hex.EncodeToString(h.Sum(nil))
}

// stateMAC is the MAC over the canonical encoding of st: encoding/json of
// the State with Seal.MAC empty. The encoding is deterministic (fields in
// declaration order, floats in their shortest exact form, times in RFC
// 3339 with nanoseconds), and decoding then re-encoding a state file gives
// it back, so the MAC ignores layout but covers every value.
func (k *keyring) stateMAC(st State) (string, error) {
	if st.Seal == nil {
		return "", errors.New("geoind: state has no seal")
	}
	seal := *st.Seal
	seal.MAC = ""
	st.Seal = &seal
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return k.mac("state", b), nil
}

func (k *keyring) recordMAC(r stateRecord) (string, error) {
	r.MAC = ""
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return k.mac("record", b), nil
}

// recordPath names the record of a canonical state path by a MAC of the
// path, so that a missing state is still found by its path.
func (k *keyring) recordPath(canon string) string {
	return filepath.Join(k.dir, recordsDir, k.mac("path", []byte(canon))[:32]+".json")
}

// readRecord returns the verified record of canon, nil if there is none.
func (k *keyring) readRecord(canon string) (*stateRecord, error) {
	path := k.recordPath(canon)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r stateRecord
	if err := jsondoc.Decode(b, &r); err != nil {
		return nil, fmt.Errorf("geoind: %s (record of %s): %w", path, canon, err)
	}
	m, err := k.recordMAC(r)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(m), []byte(r.MAC)) || r.Path != canon || r.Version != recordVersion {
		return nil, fmt.Errorf("%w: the record %s of %s does not verify with the key in %s (edited?)", ErrStateModified, path, canon, k.dir)
	}
	return &r, nil
}

func (k *keyring) writeRecord(r *stateRecord) error {
	r.Version = recordVersion
	m, err := k.recordMAC(*r)
	if err != nil {
		return err
	}
	r.MAC = m
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(k.dir, recordsDir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := atomicfile.SyncDir(k.dir); err != nil {
			return err
		}
	}
	return writeRecordFile(k.recordPath(r.Path), append(b, '\n'))
}

// seal sets st.Seal.MAC.
func (k *keyring) seal(st *State) error {
	m, err := k.stateMAC(*st)
	if err != nil {
		return err
	}
	st.Seal.MAC = m
	return nil
}

// pathMAC is Seal.PathMAC of the state at the canonical path canon.
func (k *keyring) pathMAC(canon string) string { return k.mac("state path", []byte(canon)) }

// sealedAt reports whether seal binds its state to the canonical path
// canon: by PathMAC, or by the path a version 2 state wrote.
func (k *keyring) sealedAt(seal *Seal, canon string) bool {
	if seal.PathMAC != "" {
		return hmac.Equal([]byte(seal.PathMAC), []byte(k.pathMAC(canon)))
	}
	return seal.Path == canon
}

// canonicalPath is the absolute path of path with the symbolic links of
// its directory resolved, so that one file has one record however it is
// named.
func canonicalPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// opened is a session loaded (or started) under the state lock.
type opened struct {
	kr    *keyring
	canon string
	s     *Session
	rec   *stateRecord // the record as it will be after this query's writes
	// start is non-nil for a new session: its record must be written
	// before the session's first state.
	start *stateRecord
}

// open verifies the state at f.Path against its record and resumes it, or
// starts a new session with cfg where that is allowed. The caller holds
// the lock.
func (f StateFile) open(cfg *Config, src noise.Source) (*opened, error) {
	kr, canon, rec, err := f.record()
	if err != nil {
		return nil, err
	}
	o := &opened{kr: kr, canon: canon, rec: rec}
	st, err := ReadState(f.Path)
	missing := errors.Is(err, fs.ErrNotExist)
	switch {
	case err == nil && !f.NewBudget:
		if err := kr.verify(f.Path, st, rec, canon); err != nil {
			return nil, err
		}
		s, err := Resume(st, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		o.s = s
		return o, nil
	case err != nil && !missing && !f.NewBudget:
		return nil, err
	case missing && rec != nil && rec.Counter > 0 && !f.NewBudget:
		return nil, fmt.Errorf("%w: %s was deleted or moved, but its record (%s) shows session %s after %d releases, %.6g of ε %.6g spent; querying on would start a fresh budget for the same person: start one explicitly (NewBudget) if that is intended",
			ErrStateMissing, f.Path, kr.recordPath(canon), rec.StateID, rec.Counter, rec.Spent, rec.Budget)
	}
	if cfg == nil {
		return nil, fmt.Errorf("geoind: %s: no session state and no configuration to start one", f.Path)
	}
	s, err := NewSession(*cfg, src)
	if err != nil {
		return nil, err
	}
	id, err := newSessionID()
	if err != nil {
		return nil, err
	}
	start := BudgetStart{Time: time.Now().UTC().Truncate(time.Second), ID: id, Reason: "first"}
	var starts []BudgetStart
	if rec != nil {
		starts = rec.Starts
		start.Replaced, start.ReplacedCounter, start.ReplacedSpent = rec.StateID, rec.Counter, rec.Spent
		switch {
		case !missing:
			start.Reason = "new budget (state replaced)"
		case rec.Counter == 0:
			start.Reason = "restart (interrupted start)"
		default:
			start.Reason = "new budget (state missing)"
		}
	}
	s.st.Seal = &Seal{ID: id, PathMAC: kr.pathMAC(canon)}
	if err := kr.seal(&s.st); err != nil {
		return nil, err
	}
	o.s = s
	o.start = &stateRecord{Path: canon, StateID: id, StateMAC: s.st.Seal.MAC, Budget: cfg.Params.Epsilon, Starts: append(append([]BudgetStart(nil), starts...), start)}
	o.rec = o.start
	return o, nil
}

// verify checks a state read from path against the key and its record.
func (k *keyring) verify(path string, st State, rec *stateRecord, canon string) error {
	if !knownState(st.Version) {
		return fmt.Errorf("%w: %s: state version %d, want %d (version 1 states were not sealed; start a new budget)", ErrStateModified, path, st.Version, StateVersion)
	}
	if st.Seal == nil {
		return fmt.Errorf("%w: %s has no seal (not written by StateFile)", ErrStateModified, path)
	}
	m, err := k.stateMAC(st)
	if err != nil {
		return err
	}
	if !hmac.Equal([]byte(m), []byte(st.Seal.MAC)) {
		return fmt.Errorf("%w: %s: its MAC does not verify with the key in %s, so it was edited (or sealed with another key directory); put back the file tracepriv wrote, or start a new budget", ErrStateModified, path, k.dir)
	}
	if !k.sealedAt(st.Seal, canon) {
		return fmt.Errorf("%w: %s is a copy of a state kept at another path; a copy would spend the same budget twice: query the original", ErrStateUnknown, path)
	}
	if rec == nil {
		return fmt.Errorf("%w: %s: the key directory %s has no record of it (the record was deleted, or another key directory is in use)", ErrStateUnknown, path, k.dir)
	}
	if rec.StateID != st.Seal.ID {
		when := "later"
		for _, s := range rec.Starts {
			if s.Replaced == st.Seal.ID {
				when = "at " + s.Time.Format(time.RFC3339)
			}
		}
		return fmt.Errorf("%w: %s belongs to session %s, replaced %s by session %s (a restored copy of an old budget?)", ErrStateRolledBack, path, st.Seal.ID, when, rec.StateID)
	}
	c, rc := st.Seal.Counter, rec.Counter
	switch {
	case c == rc && st.Seal.MAC == rec.StateMAC:
		return nil
	case c == rc+1 && st.Seal.Prev == rec.StateMAC:
		// Written just before a crash; the record catches up at the next
		// write.
		return nil
	case c <= rc:
		return fmt.Errorf("%w: %s is write %d of its session, but its record is at write %d with %.6g spent: an older copy was put back; querying it would release steps again with fresh noise",
			ErrStateRolledBack, path, c, rc, rec.Spent)
	}
	return fmt.Errorf("%w: %s is write %d of its session but its record %s is at write %d: the record was put back from an older copy",
		ErrStateRolledBack, path, c, k.recordPath(canon), rc)
}

// Query answers one query against the session at f.Path and persists the
// new state and its record before returning the report. If there is no
// state and cfg is non-nil, a new session with cfg is started (if the
// record knows an earlier session there, only with NewBudget); cfg is
// ignored when a state is resumed. Nothing is written when the query fails
// (ErrExhausted included).
func (f StateFile) Query(cfg *Config, p geo.Point, t time.Time, src noise.Source) (Report, error) {
	unlock, err := lockState(f.Path)
	if err != nil {
		return Report{}, err
	}
	defer unlock()
	o, err := f.open(cfg, src)
	if err != nil {
		return Report{}, err
	}
	prev := *o.s.st.Seal
	rep, err := o.s.Query(p, t)
	if err != nil {
		return Report{}, err
	}
	if o.start != nil {
		if err := o.kr.writeRecord(o.start); err != nil {
			return Report{}, fmt.Errorf("recording the new session (nothing was released): %w", err)
		}
	}
	next := o.s.State()
	// A version 2 state's path becomes its MAC here (sealedAt checked it).
	next.Version = StateVersion
	next.Seal = &Seal{ID: prev.ID, PathMAC: o.kr.pathMAC(o.canon), Counter: prev.Counter + 1, Prev: prev.MAC}
	if err := o.kr.seal(&next); err != nil {
		return Report{}, err
	}
	if err := WriteState(f.Path, next); err != nil {
		return Report{}, fmt.Errorf("saving session state (nothing was released): %w", err)
	}
	rec := *o.rec
	rec.StateID, rec.Counter, rec.StateMAC = prev.ID, next.Seal.Counter, next.Seal.MAC
	rec.Spent, rec.Budget = next.Spent, next.Config.Params.Epsilon
	if err := o.kr.writeRecord(&rec); err != nil {
		return Report{}, fmt.Errorf("updating the record of %s (nothing was released; the step stays charged): %w", f.Path, err)
	}
	return rep, nil
}

// Load returns the state at f.Path after verifying it against the key and
// its record, as Query would, without changing anything.
func (f StateFile) Load() (State, error) {
	unlock, err := lockState(f.Path)
	if err != nil {
		return State{}, err
	}
	defer unlock()
	f.NewBudget = false
	o, err := f.open(nil, nil)
	if err != nil {
		return State{}, err
	}
	return o.s.State(), nil
}

// History returns the sessions started at f.Path, oldest first (nil if
// the key directory has no record of the path).
func (f StateFile) History() ([]BudgetStart, error) {
	_, _, rec, err := f.record()
	if err != nil || rec == nil {
		return nil, err
	}
	return rec.Starts, nil
}

// record opens the key directory and reads the verified record of f.Path
// (nil if there is none), with the path's canonical form.
func (f StateFile) record() (*keyring, string, *stateRecord, error) {
	kr, err := openKeyring(f.KeyDir)
	if err != nil {
		return nil, "", nil, err
	}
	canon, err := canonicalPath(f.Path)
	if err != nil {
		return nil, "", nil, err
	}
	rec, err := kr.readRecord(canon)
	return kr, canon, rec, err
}
