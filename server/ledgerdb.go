package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/server/internal/store"
)

// LedgerDB is the service's database as a budget ledger (budget.Store):
// a tracepriv command given --ledger sqlite:PATH or --ledger
// postgres://... charges the service's accounts, so that a person released
// by both the service and the command has one account and one budget.
// budget.Admission's policy runs on it unchanged: a pending charge is a
// row of the charges table (origin "cli", settlement "pending") that
// counts in the account's spent, and so in every check of the service,
// until it is settled or undone. The account is the service's: its
// currency is the person's cip.lambda and cip.radius_m, its budget the
// one set when the person was created. LedgerDB opens no account: a person
// the service does not know is refused, with the fix (create them with
// POST /v1/people). Every change is one transaction of the store, durable
// before it returns, and re-checks the budget on the locked rows.
type LedgerDB struct {
	st   *store.Store
	name string
	// Now is the clock of the charges (tests set it).
	Now func() time.Time
}

var _ budget.Store = (*LedgerDB)(nil)

// OpenLedgerDB opens the service's database at location: sqlite:PATH (the
// SQLite file of tracepriv serve, PATH being its --data directory or the
// file DIR/tracepriv.db in it) or a PostgreSQL URL (serve's --db). The
// database must exist (a path that is not there is refused rather than
// becoming a new, empty store: that would be a second budget).
func OpenLedgerDB(location string) (*LedgerDB, error) {
	var dbURL, name string
	switch {
	case strings.HasPrefix(location, "sqlite:"):
		path := strings.TrimPrefix(location, "sqlite:")
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			path = filepath.Join(path, store.SQLiteFile)
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			return nil, fmt.Errorf("%s: no database of tracepriv serve at %s: give sqlite:DIR, DIR being serve's --data directory, or sqlite:DIR/%s (a ledger file is given without sqlite:)",
				location, path, store.SQLiteFile)
		}
		dbURL, name = "sqlite:"+path, "sqlite:"+filepath.Base(path)
	case strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://"):
		u, err := url.Parse(location)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", store.RedactURL(location), err)
		}
		dbURL, name = location, "postgres:"+strings.TrimPrefix(u.Path, "/")
	default:
		return nil, fmt.Errorf("%s: want sqlite:PATH or postgres://... (the database of tracepriv serve)", store.RedactURL(location))
	}
	st, err := store.Open(context.Background(), "", dbURL, store.Options{})
	if err != nil {
		return nil, err
	}
	return &LedgerDB{st: st, name: name, Now: func() time.Time { return time.Now().UTC() }}, nil
}

// OpenLedgerStore is OpenLedgerDB as a budget.Store with its Name: what a
// command passes to budget.OpenStore (tracepriv's cli.Env.OpenDatabase,
// the pipeline's launcher), so that --ledger sqlite:PATH or
// postgres://... charges the service's accounts.
func OpenLedgerStore(location string) (budget.Store, string, error) {
	l, err := OpenLedgerDB(location)
	if err != nil {
		return nil, "", err
	}
	return l, l.Name(), nil
}

// Name names the database in certificates and manifests (their ledger
// field): sqlite: and the file's base name, or postgres: and the
// database's name.
func (l *LedgerDB) Name() string { return l.name }

// Path is the database's location (the SQLite file, or the PostgreSQL URL
// without its password).
func (l *LedgerDB) Path() string { return l.st.Location() }

// Close closes the database.
func (l *LedgerDB) Close() { l.st.Close() }

// accountOf is the person's account as package budget keeps one (the
// service's account rule: account).
func accountOf(row *store.PersonRow, cfg *personConfig) *budget.Account {
	b := row.Budget
	return &budget.Account{UID: row.ID, Unit: budget.CurrencyUnit, Lambda: cfg.CIP.Lambda, RadiusM: cfg.CIP.Radius,
		Budget: &b, Spent: row.Spent, Opened: row.Created}
}

// configs reads the configurations of people uids (fixed at creation, so
// read once, outside the transaction that locks their rows); a person the
// service does not know is nil.
func (l *LedgerDB) configs(uids []string) (map[string]*personConfig, error) {
	out := map[string]*personConfig{}
	err := l.st.Scan(context.Background(), func(v *store.View) error {
		for _, uid := range uids {
			row, err := v.Person(uid)
			if errors.Is(err, store.ErrNoPerson) {
				continue
			}
			if err != nil {
				return err
			}
			if out[uid], err = decodePersonConfig(row.Config); err != nil {
				return fmt.Errorf("person %s: %w", uid, err)
			}
		}
		return nil
	})
	return out, err
}

// unknown is the refusal of a person the service has no account for.
func (l *LedgerDB) unknown(uid string) error {
	return fmt.Errorf("%s: person %q has no account in the service's database, and a ledger kept there never opens one (that would be a second budget): create them with tracepriv serve's API, "+
		`POST /v1/people {"id": %q, "account": {"epsilon_budget": B}, "cip": {"lambda": L, "radius_m": R}} (docs/serve.md), then release again; or give the person's service id as their uid`,
		l.Path(), uid, uid)
}

// Account returns the person's account, or nil if the service has none.
func (l *LedgerDB) Account(uid string) (*budget.Account, error) {
	var a *budget.Account
	err := l.st.Scan(context.Background(), func(v *store.View) error {
		row, err := v.Person(uid)
		if errors.Is(err, store.ErrNoPerson) {
			return nil
		}
		if err != nil {
			return err
		}
		cfg, err := decodePersonConfig(row.Config)
		if err != nil {
			return err
		}
		a = accountOf(row, cfg)
		return nil
	})
	return a, err
}

// Check reports whether req fits every person's account
// (budget.CheckRequest), without charging; a person the service does not
// know is refused.
func (l *LedgerDB) Check(req budget.Request) error {
	accts := map[string]*budget.Account{}
	for _, uid := range slices.Sorted(maps.Keys(req.Epsilon)) {
		a, err := l.Account(uid)
		if err != nil {
			return err
		}
		accts[uid] = a
	}
	return l.check(req, accts)
}

// check is budget.CheckRequest with the service's fixes: its budgets are
// set when a person is created and never raised, so neither a refusal nor
// a --budget above the account's may suggest --raise-budget.
func (l *LedgerDB) check(req budget.Request, accts map[string]*budget.Account) error {
	err := budget.CheckRequest(l.Path(), req, func(uid string) (*budget.Account, error) {
		a := accts[uid]
		if a == nil {
			return nil, l.unknown(uid)
		}
		if a.Budget != nil && req.Budget > *a.Budget*(1+budget.Tolerance) {
			return nil, fmt.Errorf("%s: --budget %g is above the budget %g the service set for person %q; the service's budgets are set when a person is created and never raised: leave out --budget (a smaller one applies to this run only)",
				l.Path(), req.Budget, *a.Budget, uid)
		}
		return a, nil
	})
	var re *budget.RefusedError
	if errors.As(err, &re) {
		re.Fix = "release fewer people or a smaller epsilon (the service's budgets are set when a person is created and never raised)"
	}
	return err
}

// cliDetail is the public detail of a charge a tracepriv command made.
type cliDetail struct {
	Command string  `json:"command"`
	Output  string  `json:"output,omitempty"`
	Lambda  float64 `json:"lambda,omitempty"`
	RadiusM float64 `json:"radius_m,omitempty"`
	GridM   float64 `json:"grid_m,omitempty"`
}

// update runs fn in one transaction of the store that holds the rows of
// people uids locked (sorted, so that two such transactions cannot
// deadlock), with each one's account.
func (l *LedgerDB) update(uids []string, fn func(tx *store.Tx, rows map[string]*store.PersonRow, accts map[string]*budget.Account) error) error {
	if len(uids) == 0 {
		return nil
	}
	slices.Sort(uids)
	uids = slices.Compact(uids)
	cfgs, err := l.configs(uids)
	if err != nil {
		return err
	}
	return l.st.Update(context.Background(), uids[0], func(tx *store.Tx) error {
		rows := map[string]*store.PersonRow{}
		accts := map[string]*budget.Account{}
		for _, uid := range uids {
			if cfgs[uid] == nil {
				continue
			}
			row, _, err := tx.LockPerson(uid, "")
			if err != nil {
				return err
			}
			rows[uid], accts[uid] = row, accountOf(row, cfgs[uid])
		}
		return fn(tx, rows, accts)
	})
}

// Charge checks req on the locked accounts (budget.CheckRequest) and
// records a charge per person, pending if req.Pending, in one
// transaction: every person is charged, or none. A raise of a budget is
// refused: the service's budgets are set when a person is created.
func (l *LedgerDB) Charge(req budget.Request) error {
	if req.RaiseBudget {
		return fmt.Errorf("%s: the service's budgets are set when a person is created and never raised (--raise-budget)", l.Path())
	}
	uids := slices.Sorted(maps.Keys(req.Epsilon))
	out := ""
	if req.Output != "" {
		out = filepath.Base(req.Output)
	}
	d := cliDetail{Command: req.Command, Output: out}
	if req.Mechanism == budget.CIP {
		d.Lambda, d.RadiusM = req.Lambda, req.RadiusM
	} else {
		d.GridM = req.GridM
	}
	detail, err := json.Marshal(d)
	if err != nil {
		return err
	}
	settlement := store.Settled
	if req.Pending {
		settlement = store.Pending
	}
	return l.update(uids, func(tx *store.Tx, rows map[string]*store.PersonRow, accts map[string]*budget.Account) error {
		if err := l.check(req, accts); err != nil {
			return err
		}
		now := l.Now()
		for _, uid := range uids {
			row, a := rows[uid], accts[uid]
			c := &store.ChargeRow{Person: uid, Seq: row.Seq + 1, Time: now, Mechanism: req.Mechanism, Amount: req.Epsilon[uid],
				Epsilon: a.Cost(req.Mechanism, req.Epsilon[uid], req.GridM), RequestID: "cli", Detail: detail,
				Release: req.Release, Settlement: settlement, Answer: store.Answer{MAC: []byte{}, Body: []byte{}}}
			if err := tx.ChargeCLI(row, c, slack); err != nil {
				return err
			}
		}
		return nil
	})
}

// releasePeople returns the people with pending charges of release.
func (l *LedgerDB) releasePeople(release string) ([]string, error) {
	var people []string
	err := l.st.Scan(context.Background(), func(v *store.View) error {
		_, by, err := v.PendingReleases(release)
		people = by[release]
		return err
	})
	return people, err
}

// settle settles (or, with undo, undoes) the pending charges of release
// of the people uids (nil: all), in one transaction.
func (l *LedgerDB) settle(release string, uids []string, eps map[string]float64, undo bool) error {
	if release == "" {
		return errors.New("budget: settling or undoing needs a release key")
	}
	people, err := l.releasePeople(release)
	if err != nil {
		return err
	}
	if uids != nil {
		people = slices.DeleteFunc(people, func(p string) bool { return !slices.Contains(uids, p) })
	}
	return l.update(people, func(tx *store.Tx, rows map[string]*store.PersonRow, accts map[string]*budget.Account) error {
		for uid, a := range accts {
			cs, err := tx.PendingCharges(uid, release)
			if err != nil {
				return err
			}
			for _, c := range cs {
				native, cost := c.Amount, c.Epsilon
				if !undo {
					var d cliDetail
					if err := json.Unmarshal(c.Detail, &d); err != nil {
						return fmt.Errorf("person %s charge %d: %w", uid, c.Seq, err)
					}
					if native, err = budget.Settled(l.Path(), uid, c.Amount, eps); err != nil {
						return err
					}
					cost = a.Cost(c.Mechanism, native, d.GridM)
				}
				if err := tx.SettleCharge(uid, c.Seq, native, cost, undo); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Settle settles release's pending charges to the certified native
// epsilons eps (budget.Settled).
func (l *LedgerDB) Settle(release string, eps map[string]float64) error {
	return l.settle(release, nil, eps, false)
}

// UndoPeople marks release's pending charges of the people uids (nil:
// all) undone: their release did not land, so they cost nothing (the rows
// stay, so that every charge keeps its number).
func (l *LedgerDB) UndoPeople(release string, uids []string) error {
	return l.settle(release, uids, nil, true)
}

// PendingReleases returns the releases with pending charges whose key
// starts with prefix, in the order first charged.
func (l *LedgerDB) PendingReleases(prefix string) ([]string, error) {
	var keys []string
	err := l.st.Scan(context.Background(), func(v *store.View) error {
		var err error
		keys, _, err = v.PendingReleases(prefix)
		return err
	})
	return keys, err
}

// PendingPeople returns the people with a pending charge of release,
// ascending.
func (l *LedgerDB) PendingPeople(release string) ([]string, error) {
	people, err := l.releasePeople(release)
	slices.Sort(people)
	return slices.Compact(people), err
}

// ChargedUIDs returns the people with a charge under m for release (not
// undone).
func (l *LedgerDB) ChargedUIDs(m budget.Mechanism, release string) ([]string, error) {
	var out []string
	if release == "" {
		return nil, nil
	}
	err := l.st.Scan(context.Background(), func(v *store.View) error {
		var err error
		out, err = v.ReleasePeople(string(m), release)
		return err
	})
	return out, err
}

// SetRelease gives the charges of release old the key release and
// settles them at their amount.
func (l *LedgerDB) SetRelease(old, release string) error {
	if old == "" {
		return nil
	}
	var people []string
	for _, m := range []budget.Mechanism{budget.GeoInd, budget.CIP} {
		p, err := l.ChargedUIDs(m, old)
		if err != nil {
			return err
		}
		people = append(people, p...)
	}
	return l.update(people, func(tx *store.Tx, rows map[string]*store.PersonRow, _ map[string]*budget.Account) error {
		for uid := range rows {
			if err := tx.RenameRelease(uid, old, release); err != nil {
				return err
			}
		}
		return nil
	})
}
