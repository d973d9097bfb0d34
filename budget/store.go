package budget

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Store keeps the accounts and charges an Admission works on: a ledger
// file (*File), or the service's database (server.LedgerDB), so that the
// admission policy is the same code whichever keeps a person's one
// account. Every method that changes the store does so durably before it
// returns, and changes nothing when it fails.
type Store interface {
	// Path names the store in messages: the ledger file, or the
	// database's location (a PostgreSQL URL without its password).
	Path() string
	// Account returns the person's account (nil if the store has none
	// for uid).
	Account(uid string) (*Account, error)
	// Check reports whether req fits every person's budget (CheckRequest),
	// without charging.
	Check(req Request) error
	// Charge checks req and records its charges (pending if req.Pending).
	Charge(req Request) error
	// Settle settles release's pending charges to the certified native
	// epsilons (Settled).
	Settle(release string, eps map[string]float64) error
	// UndoPeople removes release's pending charges of the people uids
	// (nil: all): their release did not land.
	UndoPeople(release string, uids []string) error
	// PendingReleases returns the releases with pending charges whose key
	// starts with prefix, in the order first charged.
	PendingReleases(prefix string) ([]string, error)
	// PendingPeople returns the people with a pending charge of release
	// (exactly that key), ascending.
	PendingPeople(release string) ([]string, error)
	// ChargedUIDs returns the people with a charge under m for release.
	ChargedUIDs(m Mechanism, release string) ([]string, error)
	// SetRelease renames the release key of release old's charges and
	// settles them (a geoind session whose id is known once it started).
	SetRelease(old, release string) error
	// Close releases the store (a file's lock, a database's connections).
	Close()
}

var _ Store = (*File)(nil)

// IsDatabase reports whether a --ledger value names the service's
// database (sqlite:PATH, postgres://..., postgresql://...; a Store the
// service provides, server.LedgerDB) rather than a ledger file.
func IsDatabase(ledger string) bool {
	for _, p := range []string{"sqlite:", "postgres://", "postgresql://"} {
		if strings.HasPrefix(ledger, p) {
			return true
		}
	}
	return false
}

// OpenStore opens the ledger a release's --ledger value location names,
// so that every command that releases (tracepriv's, the pipeline's) picks
// the same store by the same rule: the service's database through openDB
// when IsDatabase(location) (package budget cannot import the service:
// the command passes server.OpenLedgerStore; nil refuses), else the
// ledger file location, locked (waiting up to wait), or the default
// ledger DefaultPath, its folder created, when location is "". It returns
// the store and its name in certificates and manifests: a file's base
// name, the database's own (sqlite:tracepriv.db, postgres:DBNAME). raise
// is --raise-budget, refused with a database: the service's budgets are
// set when a person is created and never raised. The caller closes the
// store.
func OpenStore(location string, raise bool, openDB func(string) (Store, string, error), wait time.Duration) (Store, string, error) {
	if IsDatabase(location) {
		switch {
		case openDB == nil:
			return nil, "", errors.New("--ledger names the service's database, and this command keeps its ledger in a file only: give --ledger FILE")
		case raise:
			return nil, "", errors.New("--raise-budget with the service's database as --ledger: the service's budgets are set when a person is created and never raised (a smaller --budget applies to one run)")
		}
		return openDB(location)
	}
	if location == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, "", err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, "", fmt.Errorf("the default ledger %s: %w; give --ledger FILE, or --no-ledger", p, err)
		}
		location = p
	}
	f, err := Open(location, wait)
	if err != nil {
		return nil, "", err
	}
	return f, filepath.Base(location), nil
}

// CheckRequest is the admission check of every Store: for each person of
// req, account(uid) is their account as the store keeps it (an error
// refuses the request: a store that opens no accounts refuses a person it
// does not know); a CIP release must be covered by it (Account.Covers);
// the budget that applies is the account's, or a smaller one given for
// this run, or a larger one only with RaiseBudget (otherwise refused);
// and the charge in the account's currency (Account.Cost) must fit it
// (Fits), else a *RefusedError lists every person over budget. name names
// the store in the errors.
func CheckRequest(name string, req Request, account func(uid string) (*Account, error)) error {
	if err := req.validate(); err != nil {
		return err
	}
	var over []Over
	for _, uid := range sortedUIDs(req.Epsilon) {
		a, err := account(uid)
		if err != nil {
			return err
		}
		if req.Mechanism == CIP && !a.Covers(req.Lambda, req.RadiusM) {
			return fmt.Errorf("%s: person %q's account is kept at lambda %g within %g m; a cip release at lambda %g within %g m is %w (use a lambda and a radius at least as large)",
				name, uid, a.Lambda, a.RadiusM, req.Lambda, req.RadiusM, ErrNotCovered)
		}
		b, ok, err := a.budgetFor(name, req)
		if err != nil {
			return err
		}
		e := a.Cost(req.Mechanism, req.Epsilon[uid], req.GridM)
		if ok && !Fits(a.Spent, e, b) {
			over = append(over, Over{UID: uid, Budget: b, Spent: a.Spent, Charge: e})
		}
	}
	if len(over) > 0 {
		return &RefusedError{Path: name, Mechanism: req.Mechanism, Over: over}
	}
	return nil
}

// budgetFor is the budget req is admitted under in account a (ok false:
// none set and none given).
func (a *Account) budgetFor(name string, req Request) (b float64, ok bool, err error) {
	switch {
	case a.Budget == nil && req.Budget > 0:
		return req.Budget, true, nil
	case a.Budget == nil:
		return 0, false, nil
	case req.Budget > *a.Budget*(1+Tolerance) && !req.RaiseBudget:
		return 0, false, fmt.Errorf("%s: --budget %g is above the budget %g recorded for person %q on %s; raising a person's budget is a decision: repeat with --raise-budget to record it",
			name, req.Budget, *a.Budget, a.UID, a.Opened.Format(time.RFC3339))
	case req.RaiseBudget:
		return max(req.Budget, *a.Budget), true, nil
	case req.Budget > 0:
		return min(req.Budget, *a.Budget), true, nil
	}
	return *a.Budget, true, nil
}

// Settled is what a pending charge of native epsilon charged settles to,
// given the certified native epsilons eps of its release: the person's
// certified epsilon, which must be within the charge (up to Tolerance);
// the charge itself when eps does not name the person (the release
// landed, but its certified epsilon is not known) or certifies 0 (no
// guarantee at all: a person the prior was fitted on, released with
// --allow-prior-overlap, stays at the upper bound the release was designed
// for). name names the store in the error.
func Settled(name, uid string, charged float64, eps map[string]float64) (float64, error) {
	e, ok := eps[uid]
	if !ok || e == 0 {
		return charged, nil
	}
	if !finitePos(e) || e > charged*(1+Tolerance) {
		return 0, fmt.Errorf("%s: person %q: certified epsilon %v is not within the %v charged before the release", name, uid, e, charged)
	}
	return e, nil
}

// WriteCharges writes what the store s now holds for the people req
// charged, a line each (the first five, by uid): the charge in the
// currency and natively, the account's spending and budget.
func WriteCharges(w io.Writer, s Store, req Request) error {
	uids := sortedUIDs(req.Epsilon)
	for i, u := range uids {
		if i == 5 {
			_, err := fmt.Fprintf(w, "ledger: ... and %d more people\n", len(uids)-5)
			return err
		}
		a, err := s.Account(u)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		of := "no budget set (--budget sets one)"
		if a.Budget != nil {
			of = fmt.Sprintf("of %.6g", *a.Budget)
		}
		if _, err := fmt.Fprintf(w, "ledger %s: person %q charged %.6g (%s %.6g); spent %.6g %s, at lambda %g within %g m\n",
			filepath.Base(s.Path()), u, a.Cost(req.Mechanism, req.Epsilon[u], req.GridM), req.Mechanism, req.Epsilon[u], a.Spent, of, a.Lambda, a.RadiusM); err != nil {
			return err
		}
	}
	return nil
}

// Account returns the account of uid in the ledger, or nil (Store).
func (f *File) Account(uid string) (*Account, error) { return f.l.Account(uid), nil }

// PendingReleases is Ledger.PendingReleases of the ledger (Store).
func (f *File) PendingReleases(prefix string) ([]string, error) {
	return f.l.PendingReleases(prefix), nil
}

// PendingPeople is the people of Ledger.Pending of the ledger, ascending
// (Store).
func (f *File) PendingPeople(release string) ([]string, error) {
	return slices.Sorted(maps.Keys(f.l.Pending(release))), nil
}

// ChargedUIDs is Ledger.ChargedUIDs of the ledger (Store).
func (f *File) ChargedUIDs(m Mechanism, release string) ([]string, error) {
	return slices.Clone(f.l.ChargedUIDs(m, release)), nil
}
