package budget

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/filelock"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
)

// What a certificate's ledger field says of a release that no ledger
// charged (otherwise it names the ledger file).
const (
	// Off: made with --no-ledger; no ledger records what it cost.
	Off = "off"
	// Seeded: a seeded release is not private and is not charged.
	Seeded = "not charged: seeded, not private"
)

// Admission is the one admission policy every release follows (sanitize,
// geoind, the pipeline; the package doc): Check before anything is drawn,
// with the upper bound each person can be charged (a refusal writes
// nothing); Charge that bound as pending immediately before a part of the
// release is drawn; Settle it to the certified epsilon when that part has
// landed; Undo it when the part failed and nothing of it landed. A crash
// between Charge and Settle leaves the pending upper bound charged, which
// the next run of the same release settles or undoes (Pending).
//
// The policy is the same whichever Store keeps the accounts: a ledger
// file, or the service's database. The methods serialise, so the parts of
// a release drawn in parallel can share one Admission. A nil *Admission is a release that is not charged
// (--no-ledger, or a seeded, non-private run): every method does nothing.
type Admission struct {
	mu  sync.Mutex
	s   Store
	req Request
}

// NewAdmission admits releases described by req (its Epsilon is ignored;
// each call gives its own) into s, under req.Release as the key prefix.
func NewAdmission(s Store, req Request) *Admission {
	req.Epsilon = nil
	return &Admission{s: s, req: req}
}

// Store is where the accounts are kept (nil for a nil Admission).
func (a *Admission) Store() Store {
	if a == nil {
		return nil
	}
	return a.s
}

// Release is the key of part key of the release ("" is the release
// itself).
func (a *Admission) Release(key string) string {
	if key == "" {
		return a.req.Release
	}
	if a.req.Release == "" {
		return key
	}
	return a.req.Release + " " + key
}

func (a *Admission) request(key string, eps map[string]float64) Request {
	r := a.req
	r.Release, r.Epsilon = a.Release(key), eps
	return r
}

// Check reports whether charging eps (native epsilons, the most each
// person can be certified) fits every budget; it writes nothing.
func (a *Admission) Check(eps map[string]float64) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.Check(a.request("", eps))
}

// Charge charges eps as pending under part key, durably; call it
// immediately before the part is drawn.
func (a *Admission) Charge(key string, eps map[string]float64) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.request(key, eps)
	r.Pending = true
	return a.s.Charge(r)
}

// Settle settles part key's pending charges to the certified eps (a
// person missing from eps stays at the upper bound); call it once the
// part has landed.
func (a *Admission) Settle(key string, eps map[string]float64) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.Settle(a.Release(key), eps)
}

// Undo removes part key's pending charges; call it only when nothing of
// the part landed.
func (a *Admission) Undo(key string) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.UndoPeople(a.Release(key), nil)
}

// UndoNote undoes the pending charge of a release that did not land
// (Undo) and says what became of it, as a clause an error message ends
// with ("" for a nil Admission: nothing was charged).
func (a *Admission) UndoNote() string {
	if a == nil {
		return ""
	}
	if err := a.Undo(""); err != nil {
		return fmt.Sprintf(" (its charge stays in the ledger %s, as pending: undoing it failed: %v)", a.s.Path(), err)
	}
	return fmt.Sprintf(" (nothing was released, so nothing is charged in the ledger %s)", a.s.Path())
}

// UndoPeople removes the pending charges of part key for the people uids
// only: those of the part whose release did not land.
func (a *Admission) UndoPeople(key string, uids []string) error {
	if a == nil || len(uids) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.UndoPeople(a.Release(key), uids)
}

// Pending returns the parts of this release with pending charges (left by
// a run that stopped between Charge and Settle), as the keys given to
// Charge.
func (a *Admission) Pending() ([]string, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	prefix := a.req.Release
	if prefix != "" {
		prefix += " "
	}
	rels, err := a.s.PendingReleases(prefix)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, r := range rels {
		keys = append(keys, r[len(prefix):])
	}
	return keys, nil
}

// PendingPeople returns the people with a pending charge of part key of
// this release ("" is the release itself), ascending: what a run killed
// between Charge and Settle left of it.
func (a *Admission) PendingPeople(key string) ([]string, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.PendingPeople(a.Release(key))
}

// PendingElsewhere returns the releases other than this one (and its
// parts) that hold a charge of any of the people uids pending, each with
// those of uids it holds: charges that only a run of that release (its
// options and output) settles.
func (a *Admission) PendingElsewhere(uids []string) (map[string][]string, error) {
	if a == nil || len(uids) == 0 {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rels, err := a.s.PendingReleases("")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rels {
		if r == a.req.Release || strings.HasPrefix(r, a.req.Release+" ") {
			continue
		}
		people, err := a.s.PendingPeople(r)
		if err != nil {
			return nil, err
		}
		for _, p := range people {
			if slices.Contains(uids, p) {
				out[r] = append(out[r], p)
			}
		}
	}
	return out, nil
}

// Migrate rewrites the version-1 ledger at path as version 2 (MigrateV1
// with gridM), under its lock, durably. A version-2 ledger is left as it
// is.
func Migrate(path string, gridM float64, wait time.Duration) (*Ledger, error) {
	unlock, err := filelock.Lock(path+".lock", wait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l, err := MigrateV1(b, gridM)
	if errors.Is(err, ErrDamaged) {
		if l2, err2 := ReadLedger(bytesReader(b)); err2 == nil && l2.Version == Version {
			return l2, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := atomicfile.WriteDurable(path, 0o644, func(w io.Writer) error { return jsondoc.Write(w, l) }); err != nil {
		return nil, err
	}
	return l, nil
}
