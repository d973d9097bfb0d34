package budget

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracepriv/tracepriv/internal/atomicfile"
	"github.com/tracepriv/tracepriv/internal/filelock"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
)

// Version is the version of the ledger file layout.
const Version = 1

// Tolerance is the relative slack with which a sum of charges is compared
// with a budget (see the package doc).
const Tolerance = 1e-9

// DefaultLockWait is how long Open waits for another process holding the
// ledger (a release runs under the lock, so this covers a long one).
const DefaultLockWait = 2 * time.Minute

// Mechanism is the kind of a release, and the unit of its epsilon.
type Mechanism string

// The mechanism kinds a ledger accounts, one budget per person each.
const (
	// CIP: conditional inferential privacy (package sanitize); epsilon is
	// the certificate's per-person Rényi epsilon_max at order lambda
	// within radius_m.
	CIP Mechanism = "cip"
	// GeoInd: geo-indistinguishability (package geoind); epsilon is per
	// metre (the release is ε·d-private).
	GeoInd Mechanism = "geoind"
)

// Unit describes the unit of a mechanism's epsilon.
func (m Mechanism) Unit() string {
	switch m {
	case CIP:
		return "Rényi CIP epsilon at order lambda within radius_m metres (sanitize certificate epsilon_max)"
	case GeoInd:
		return "geo-indistinguishability epsilon per metre (a release is epsilon·d-private)"
	}
	return ""
}

func (m Mechanism) valid() bool { return m == CIP || m == GeoInd }

// compositionRule is stated in every ledger file.
const compositionRule = "basic sequential composition: the epsilons charged to one person (uid) under one mechanism add up, " +
	"and a release is admitted only if the sum stays within the person's budget for that mechanism; cip and geoind epsilons " +
	"are different units and have separate budgets; a cip account is at the order lambda and radius_m of its first charge"

// Ledger is the content of a ledger file.
type Ledger struct {
	Version     int    `json:"version"`
	Composition string `json:"composition"`
	// Accounts are the budgets, one per person and mechanism.
	Accounts []*Account `json:"accounts"`
	// Charges are every release's charges, in the order made.
	Charges []Charge `json:"charges"`
}

// Account is one person's budget for one mechanism.
type Account struct {
	UID       string    `json:"uid"`
	Mechanism Mechanism `json:"mechanism"`
	Unit      string    `json:"unit"`
	// Budget is the budget the account was opened with, or last raised to.
	Budget float64 `json:"budget"`
	// Spent is the sum of the account's charges (kept for readers; checked
	// against the charges when the ledger is read).
	Spent float64 `json:"spent"`
	// Lambda and RadiusM fix a CIP account's order and radius.
	Lambda  float64   `json:"lambda,omitempty"`
	RadiusM float64   `json:"radius_m,omitempty"`
	Opened  time.Time `json:"opened"`
	Raised  []Raise   `json:"raised,omitempty"`
}

// Raise records a budget raised with Request.RaiseBudget.
type Raise struct {
	Time time.Time `json:"time"`
	From float64   `json:"from"`
	To   float64   `json:"to"`
}

// Charge is what one release charged one person.
type Charge struct {
	Seq       int       `json:"seq"`
	UID       string    `json:"uid"`
	Mechanism Mechanism `json:"mechanism"`
	Epsilon   float64   `json:"epsilon"`
	// Lambda and RadiusM are the CIP release's order and radius.
	Lambda  float64   `json:"lambda,omitempty"`
	RadiusM float64   `json:"radius_m,omitempty"`
	Time    time.Time `json:"time"`
	// Command is the command that released; Output the base name of its
	// output (never a local path).
	Command string `json:"command"`
	Output  string `json:"output,omitempty"`
	// Release ties together the charges of one release that spans several
	// runs (a resumed corpus run, a geoind session's queries).
	Release string `json:"release,omitempty"`
	// Pending marks a charge made before its release finished: an
	// upper bound that Settle replaces with the certified epsilon.
	Pending bool `json:"pending,omitempty"`
}

// Request is a release to be charged: Epsilon[uid] for each person.
type Request struct {
	Mechanism Mechanism
	// Lambda and RadiusM are a CIP release's order and radius.
	Lambda, RadiusM float64
	// Budget is the budget B given for this run; RaiseBudget allows it to
	// exceed the budget recorded for a person (and records the raise).
	Budget      float64
	RaiseBudget bool
	Command     string
	// Output is the release's output file or directory; only its base
	// name is recorded.
	Output  string
	Release string
	Pending bool
	Epsilon map[string]float64
}

// Over is a person a request would take over budget.
type Over struct {
	UID    string
	Budget float64
	Spent  float64
	Charge float64
}

// RefusedError is returned when a request would take people over their
// budget; nothing is charged.
type RefusedError struct {
	Path      string
	Mechanism Mechanism
	Over      []Over
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: over budget for %d person(s); nothing released:", e.Path, len(e.Over))
	for i, o := range e.Over {
		if i == 5 {
			fmt.Fprintf(&b, " ... and %d more;", len(e.Over)-5)
			break
		}
		fmt.Fprintf(&b, " person %q has spent %.6g of %.6g (%s) and this release needs %.6g;", o.UID, o.Spent, o.Budget, e.Mechanism, o.Charge)
	}
	b.WriteString(" release fewer people, a smaller epsilon, or raise the budget deliberately with --budget and --raise-budget")
	return b.String()
}

// ErrDamaged is wrapped by the errors of a ledger file that cannot be
// trusted.
var ErrDamaged = errors.New("not a valid tracepriv budget ledger")

// File is an open ledger, locked until Close.
type File struct {
	path   string
	unlock func()
	l      *Ledger
	// Now is the clock (tests set it).
	Now func() time.Time
}

// Open locks the ledger at path (path+".lock", waiting up to wait) and
// reads it; a missing file is an empty ledger, written on the first
// charge. The caller must Close it.
func Open(path string, wait time.Duration) (*File, error) {
	if path == "" {
		return nil, errors.New("budget: no ledger path")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give the ledger file", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: the directory %s does not exist; create it or give another ledger path", path, filepath.Dir(path))
	}
	unlock, err := filelock.Lock(path+".lock", wait)
	if err != nil {
		if errors.Is(err, filelock.ErrBusy) {
			return nil, fmt.Errorf("ledger %s is in use by another release: %w; try again when it has finished", path, err)
		}
		return nil, err
	}
	l, err := Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		l, err = &Ledger{Version: Version, Composition: compositionRule}, nil
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return &File{path: path, unlock: unlock, l: l, Now: func() time.Time { return time.Now().UTC() }}, nil
}

// Close releases the lock.
func (f *File) Close() {
	if f.unlock != nil {
		f.unlock()
		f.unlock = nil
	}
}

// Path is the ledger file.
func (f *File) Path() string { return f.path }

// Ledger returns the ledger as read and charged so far (do not modify).
func (f *File) Ledger() *Ledger { return f.l }

// Read reads and checks a ledger file without locking it.
func Read(path string) (*Ledger, error) {
	l, err := jsondoc.ReadFile(path, ReadLedger)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ledger %w; restore the file from a backup (starting a new ledger would forget what was spent)", err)
	}
	return l, err
}

// ReadLedger decodes and checks a ledger, refusing other versions, unknown
// fields and inconsistent records.
func ReadLedger(r io.Reader) (*Ledger, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var l Ledger
	if err := jsondoc.DecodeVersion(b, Version, &l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if err := l.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return &l, nil
}

func finitePos(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// check verifies the ledger's records against each other.
func (l *Ledger) check() error {
	type key struct {
		uid string
		m   Mechanism
	}
	acc := map[key]*Account{}
	sum := map[key]float64{}
	for i, a := range l.Accounts {
		if a == nil {
			return fmt.Errorf("account %d is null", i+1)
		}
		k := key{a.UID, a.Mechanism}
		switch {
		case a.UID == "":
			return fmt.Errorf("account %d: no uid", i+1)
		case !a.Mechanism.valid():
			return fmt.Errorf("account %d (%q): mechanism %q, want cip or geoind", i+1, a.UID, a.Mechanism)
		case !finitePos(a.Budget):
			return fmt.Errorf("account %d (%q): budget %v, want positive and finite", i+1, a.UID, a.Budget)
		case a.Mechanism == CIP && !(a.Lambda > 1 && finitePos(a.RadiusM)):
			return fmt.Errorf("account %d (%q): a cip account needs lambda > 1 and radius_m > 0", i+1, a.UID)
		case acc[k] != nil:
			return fmt.Errorf("account %d: person %q has two %s accounts", i+1, a.UID, a.Mechanism)
		}
		acc[k] = a
	}
	for i, c := range l.Charges {
		k := key{c.UID, c.Mechanism}
		a := acc[k]
		switch {
		case c.Seq != i+1:
			return fmt.Errorf("charge %d: seq %d, want %d (charges were removed or reordered)", i+1, c.Seq, i+1)
		case a == nil:
			return fmt.Errorf("charge %d: person %q has no %s account", i+1, c.UID, c.Mechanism)
		case !finitePos(c.Epsilon):
			return fmt.Errorf("charge %d (%q): epsilon %v, want positive and finite", i+1, c.UID, c.Epsilon)
		case c.Mechanism == CIP && (c.Lambda < a.Lambda || c.RadiusM < a.RadiusM):
			return fmt.Errorf("charge %d (%q): lambda %g, radius_m %g below the account's %g, %g", i+1, c.UID, c.Lambda, c.RadiusM, a.Lambda, a.RadiusM)
		}
		sum[k] += c.Epsilon
	}
	for _, a := range l.Accounts {
		s := sum[key{a.UID, a.Mechanism}]
		if math.Abs(s-a.Spent) > Tolerance*math.Max(1, math.Abs(s)) {
			return fmt.Errorf("account %q (%s): spent %v, but its charges add up to %v", a.UID, a.Mechanism, a.Spent, s)
		}
	}
	return nil
}

// Account returns the account of uid for m, or nil.
func (l *Ledger) Account(uid string, m Mechanism) *Account {
	for _, a := range l.Accounts {
		if a.UID == uid && a.Mechanism == m {
			return a
		}
	}
	return nil
}

// Pending returns the pending charges of release, by uid.
func (l *Ledger) Pending(release string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range l.Charges {
		if c.Pending && c.Release == release && release != "" {
			out[c.UID] += c.Epsilon
		}
	}
	return out
}

// Charged reports whether uid has a charge under m for release.
func (l *Ledger) Charged(uid string, m Mechanism, release string) bool {
	for _, c := range l.Charges {
		if c.UID == uid && c.Mechanism == m && c.Release == release && release != "" {
			return true
		}
	}
	return false
}

// ChargedUIDs returns the people with a charge under m for release.
func (l *Ledger) ChargedUIDs(m Mechanism, release string) []string {
	var out []string
	for _, c := range l.Charges {
		if c.Mechanism == m && c.Release == release && release != "" && !slices.Contains(out, c.UID) {
			out = append(out, c.UID)
		}
	}
	return out
}

// validate checks a request's own values.
func (r *Request) validate() error {
	switch {
	case !r.Mechanism.valid():
		return &param.Error{Name: "mechanism", Value: r.Mechanism, Why: "cip or geoind"}
	case !finitePos(r.Budget):
		return &param.Error{Name: "budget", Value: r.Budget, Why: "must be positive and finite (in the mechanism's epsilon unit)"}
	case r.Mechanism == CIP && !(r.Lambda > 1 && finitePos(r.RadiusM)):
		return &param.Error{Name: "lambda", Value: r.Lambda, Why: "a cip charge needs lambda > 1 and a positive radius"}
	}
	for uid, e := range r.Epsilon {
		if uid == "" {
			return &param.Error{Name: "uid", Value: "", Why: "every person charged needs a uid"}
		}
		if !finitePos(e) {
			return &param.Error{Name: "epsilon", Value: e, Why: fmt.Sprintf("person %q: a charge must be positive and finite", uid)}
		}
	}
	return nil
}

// Check reports whether req fits every person's budget, without charging:
// a *RefusedError if some would go over, another error if the request
// cannot be charged at all (an order or radius below a CIP account's, a
// budget above the recorded one without RaiseBudget).
func (f *File) Check(req Request) error {
	if err := req.validate(); err != nil {
		return err
	}
	var over []Over
	for _, uid := range sortedUIDs(req.Epsilon) {
		e := req.Epsilon[uid]
		b, spent := req.Budget, 0.0
		if a := f.l.Account(uid, req.Mechanism); a != nil {
			if req.Mechanism == CIP && (req.Lambda < a.Lambda || req.RadiusM < a.RadiusM) {
				return fmt.Errorf("%s: person %q's cip budget is accounted at lambda %g within %g m; a release at lambda %g within %g m is not covered by it (use a lambda and a radius at least as large)",
					f.path, uid, a.Lambda, a.RadiusM, req.Lambda, req.RadiusM)
			}
			if req.Budget > a.Budget*(1+Tolerance) && !req.RaiseBudget {
				return fmt.Errorf("%s: --budget %g is above the %s budget %g recorded for person %q on %s; raising a person's budget is a decision: repeat with --raise-budget to record it",
					f.path, req.Budget, req.Mechanism, a.Budget, uid, a.Opened.Format(time.RFC3339))
			}
			b = math.Min(req.Budget, a.Budget)
			if req.RaiseBudget {
				b = math.Max(req.Budget, a.Budget)
			}
			spent = a.Spent
		}
		if spent+e > b*(1+Tolerance) {
			over = append(over, Over{UID: uid, Budget: b, Spent: spent, Charge: e})
		}
	}
	if len(over) > 0 {
		return &RefusedError{Path: f.path, Mechanism: req.Mechanism, Over: over}
	}
	return nil
}

// Charge checks req and, if it fits, records its charges (opening or
// raising accounts) and writes the ledger durably before returning. On
// any error nothing is charged.
func (f *File) Charge(req Request) error {
	if err := f.Check(req); err != nil {
		return err
	}
	if len(req.Epsilon) == 0 {
		return nil
	}
	next := f.clone()
	now := f.Now()
	out := ""
	if req.Output != "" {
		out = filepath.Base(req.Output)
	}
	for _, uid := range sortedUIDs(req.Epsilon) {
		a := next.Account(uid, req.Mechanism)
		if a == nil {
			a = &Account{UID: uid, Mechanism: req.Mechanism, Unit: req.Mechanism.Unit(), Budget: req.Budget, Opened: now}
			if req.Mechanism == CIP {
				a.Lambda, a.RadiusM = req.Lambda, req.RadiusM
			}
			next.Accounts = append(next.Accounts, a)
		} else if req.RaiseBudget && req.Budget > a.Budget {
			a.Raised = append(a.Raised, Raise{Time: now, From: a.Budget, To: req.Budget})
			a.Budget = req.Budget
		}
		c := Charge{Seq: len(next.Charges) + 1, UID: uid, Mechanism: req.Mechanism, Epsilon: req.Epsilon[uid], Time: now,
			Command: req.Command, Output: out, Release: req.Release, Pending: req.Pending}
		if req.Mechanism == CIP {
			c.Lambda, c.RadiusM = req.Lambda, req.RadiusM
		}
		next.Charges = append(next.Charges, c)
	}
	return f.commit(next)
}

// Settle replaces the pending charges of release with the certified
// epsilons eps[uid] (each at most the pending charge, up to Tolerance) and
// marks them done; a pending charge of a person not in eps (not released,
// or failed) stays at its upper bound and is marked done too. It writes
// the ledger durably.
func (f *File) Settle(release string, eps map[string]float64) error {
	if release == "" {
		return errors.New("budget: Settle needs a release key")
	}
	next := f.clone()
	for i := range next.Charges {
		c := &next.Charges[i]
		if !c.Pending || c.Release != release {
			continue
		}
		if e, ok := eps[c.UID]; ok {
			if !finitePos(e) || e > c.Epsilon*(1+Tolerance) {
				return fmt.Errorf("%s: person %q: certified epsilon %v is not within the %v charged before the release", f.path, c.UID, e, c.Epsilon)
			}
			c.Epsilon = e
		}
		c.Pending = false
	}
	return f.commit(next)
}

// SetRelease renames the release key of the charges of release old (a
// geoind session whose id is known only once it started).
func (f *File) SetRelease(old, release string) error {
	next := f.clone()
	for i := range next.Charges {
		if next.Charges[i].Release == old && old != "" {
			next.Charges[i].Release = release
			next.Charges[i].Pending = false
		}
	}
	return f.commit(next)
}

// commit writes next durably and makes it the ledger.
func (f *File) commit(next *Ledger) error {
	next.Version, next.Composition = Version, compositionRule
	for _, a := range next.Accounts {
		a.Spent = 0
		for _, c := range next.Charges {
			if c.UID == a.UID && c.Mechanism == a.Mechanism {
				a.Spent += c.Epsilon
			}
		}
	}
	if err := next.check(); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	err := atomicfile.WriteDurable(f.path, 0o644, func(w io.Writer) error { return jsondoc.Write(w, next) })
	if err != nil {
		return fmt.Errorf("ledger: %w (nothing charged, nothing released)", err)
	}
	f.l = next
	return nil
}

// clone deep-copies the ledger.
func (f *File) clone() *Ledger {
	n := &Ledger{Version: f.l.Version, Composition: f.l.Composition, Charges: slices.Clone(f.l.Charges)}
	for _, a := range f.l.Accounts {
		c := *a
		c.Raised = slices.Clone(a.Raised)
		n.Accounts = append(n.Accounts, &c)
	}
	return n
}

func sortedUIDs(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
