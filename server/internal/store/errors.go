package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/budget"
)

// The ledger's domain errors. Callers branch on them with errors.Is (and
// errors.As for *ExhaustedError); their texts are written for people.
var (
	// ErrNoPerson: no person has this id.
	ErrNoPerson = errors.New("no such person")
	// ErrExists: a person with this id already exists; a budget is never
	// reset or recreated.
	ErrExists = errors.New("the person already exists; a budget cannot be reset or recreated")
	// ErrWrongToken: the token does not (or no longer) match the person's.
	ErrWrongToken = errors.New("this token does not grant access to this person")
	// ErrReplayMismatch: the idempotency key was already used with
	// another request.
	ErrReplayMismatch = errors.New("this Idempotency-Key was already used with a different request; use a new key for a new query")
	// ErrBudgetExhausted: the budget cannot pay the request. The error is
	// an *ExhaustedError with the figures.
	ErrBudgetExhausted = errors.New("budget exhausted")
	// ErrNotDurable: a commit was issued but the store could not confirm
	// that it is durable (a failed fsync, a lost connection during
	// COMMIT). Whether the request was charged is not known; nothing of it
	// was released.
	ErrNotDurable = errors.New("the store could not confirm that this request's charge is durable: it may or may not have been charged, and nothing was released; retry with the same Idempotency-Key once the service is healthy")
	// ErrUnhealthy: an earlier commit could not be made durable, so the
	// store releases nothing until it is healthy again (SQLite: until the
	// service is restarted).
	ErrUnhealthy = errors.New("the store failed to make an earlier write durable and releases nothing until it is restarted; this request was not charged")
	// ErrUnavailable: the store could not run the request (it is closed,
	// or the database did not answer); nothing of it was stored.
	ErrUnavailable = errors.New("the store is unavailable; this request was not charged")
	// ErrNotRun: the caller's context ended before the request ran;
	// nothing of it was stored.
	ErrNotRun = errors.New("the request was cancelled before it ran; it was not charged")
)

// BudgetKind names the budget a refused charge would exceed; its values
// are the API's error detail "kind".
type BudgetKind string

// The budgets of a person.
const (
	// BudgetAccount is the person's one budget, for every mechanism; it
	// never renews.
	BudgetAccount BudgetKind = "account"
	// BudgetGeoindWindow is one window's geoind session, a rate within the
	// account.
	BudgetGeoindWindow BudgetKind = "geoind"
)

// ExhaustedError is ErrBudgetExhausted with its figures.
type ExhaustedError struct {
	// Kind is the budget exceeded.
	Kind BudgetKind
	// Mechanism is the release refused by the account.
	Mechanism budget.Mechanism
	// Budget, Spent and Needed are in the budget's unit; Needed is 0 when
	// the next step's cost is not known (the mechanism stops instead).
	Budget, Spent, Needed float64
	// Lambda and RadiusM are the account's Rényi order and radius.
	Lambda, RadiusM float64
	// Window is the budget window (geoind), WindowEnd its end (zero for a
	// budget without windows).
	Window    int64
	WindowEnd time.Time
}

func (e *ExhaustedError) Error() string {
	if e.Kind == BudgetAccount {
		return fmt.Sprintf("the person's budget cannot pay this %s release: %.6g of %.6g spent (Rényi epsilon at order %g within %g m, every mechanism), the release needs %.6g; the budget bounds the person's total and never renews",
			e.Mechanism, e.Spent, e.Budget, e.Lambda, e.RadiusM, e.Needed)
	}
	return fmt.Sprintf("the geo-indistinguishability budget of this window is spent (%.6g of %.6g epsilon per metre)", e.Spent, e.Budget)
}

// Is makes errors.Is(err, ErrBudgetExhausted) true.
func (e *ExhaustedError) Is(target error) bool { return target == ErrBudgetExhausted }

// storeError is one of the sentinels above with the underlying cause,
// which is logged, never shown.
type storeError struct {
	kind  error
	cause error
}

func (e *storeError) Error() string { return e.kind.Error() + ": " + e.cause.Error() }
func (e *storeError) Unwrap() []error {
	return []error{e.kind, e.cause}
}

func wrap(kind, cause error) error {
	if cause == nil {
		return kind
	}
	return &storeError{kind: kind, cause: cause}
}
