package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geoind"
)

// The ledger policy of geoind query: a session is charged its budget
// once, before its first query releases anything, to one person.

// CheckStatePath refuses a --state that query would lose or cannot use: a
// directory, a path whose directory does not exist, or an existing file
// that is not a session state (query, and with --new-budget replaces, only
// states).
func CheckStatePath(state string) error {
	if err := CheckOut("--state", state); err != nil {
		return err
	}
	if _, err := os.Stat(state); err != nil {
		return nil // a new session
	}
	if _, err := geoind.ReadState(state); err != nil {
		return fmt.Errorf("--state %s exists and is not a session state written by geoind query (%w); give the session's state file or a new path (move the file away if it is a damaged state)", state, err)
	}
	return nil
}

// sessionRelease is the ledger's release key of a geoind session.
func sessionRelease(id string) string { return "geoind session " + id }

// ChargeSession charges the session a query runs in, once, before the
// query releases anything: a session that will start (cfg non-nil: no
// state, or --new-budget) is charged its budget ε as pending, keyed by a
// key that the caller replaces with the session's id once it exists (the
// returned key); an existing session is charged only if the ledger has no
// charge for it (it was started without --ledger, or its start's key was
// never replaced). A session charged to another person is refused.
func ChargeSession(env *Env, lf budget.Store, led LedgerFlags, sf geoind.StateFile, cfg *geoind.Config, uid, state string) (string, error) {
	charge := led.Request(budget.GeoInd, "tracepriv geoind query", state)
	if cfg != nil {
		if _, err := os.Stat(state); err != nil && !sf.NewBudget {
			// A deleted state is refused by Query; charge nothing for it.
			if _, lerr := sf.Load(); errors.Is(lerr, geoind.ErrStateMissing) {
				return "", nil
			}
		}
		nonce := make([]byte, 8)
		if _, err := rand.Read(nonce); err != nil {
			return "", err
		}
		charge.Release = "geoind session starting " + hex.EncodeToString(nonce)
		charge.Pending = true
		charge.Epsilon[uid] = cfg.Params.Epsilon
		charge.GridM = cfg.Noise.Grid
		if err := lf.Charge(charge); err != nil {
			return "", LedgerError("geoind query", err)
		}
		env.ReportCharge(lf, charge)
		return charge.Release, nil
	}
	st, err := sf.Load()
	if err != nil {
		return "", nil // Query reports it
	}
	release := sessionRelease(st.Seal.ID)
	other, err := lf.ChargedUIDs(budget.GeoInd, release)
	if err != nil {
		return "", LedgerError("geoind query", err)
	}
	if slices.Contains(other, uid) {
		return "", nil
	}
	if len(other) > 0 {
		return "", usagef("geoind query: --uid %s: the session at %s is charged to person %q in %s; give that person's uid", uid, state, other[0], lf.Path())
	}
	charge.Release = release
	charge.Epsilon[uid] = st.Config.Params.Epsilon
	charge.GridM = st.Config.Noise.Grid
	if err := lf.Charge(charge); err != nil {
		return "", LedgerError("geoind query", err)
	}
	env.ReportCharge(lf, charge)
	return "", nil
}

// TieSessionCharge ties the pending charge of a geoind query at state to
// the session now that it has an id; a session that did not start (no new state landed) released
// nothing, and its charge is undone.
func TieSessionCharge(env *Env, lf budget.Store, state, pending, before string, queryErr error) {
	st, err := geoind.ReadState(state)
	switch {
	case err == nil && st.Seal != nil && st.Seal.ID != before:
		err = lf.SetRelease(pending, sessionRelease(st.Seal.ID))
	case queryErr != nil:
		err = lf.UndoPeople(pending, nil)
	default:
		err = nil // the charge stays pending: an upper bound
	}
	if err != nil && !env.Quiet {
		fmt.Fprintf(env.Stderr, "tracepriv: ledger: %v (the session stays charged; its next query charges it again)\n", err)
	}
}

// QueryError says what a query that released nothing can do next.
func QueryError(state string, err error) error {
	switch {
	case geoind.IsExhausted(err):
		return fmt.Errorf("geoind query: %s: %w (nothing released)", state, err)
	case errors.Is(err, geoind.ErrOutOfOrder):
		return usagef("geoind query: --time: %w; give a time at or after the session's last query (leave --time out for now); nothing was released or charged", err)
	case errors.Is(err, geoind.ErrStateMissing):
		return fmt.Errorf("geoind query: %w.\nTo start a new budget for this person anyway (the privacy losses of both budgets add up), repeat with --new-budget and the configuration flags", err)
	case errors.Is(err, geoind.ErrStateModified), errors.Is(err, geoind.ErrStateRolledBack), errors.Is(err, geoind.ErrStateUnknown):
		return fmt.Errorf("geoind query: %w.\nNothing was released. If the state is lost for good, --new-budget starts a fresh one (recorded); --key-dir selects the key directory", err)
	}
	return fmt.Errorf("geoind query: %w", err)
}
