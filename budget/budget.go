package budget

import (
	"encoding/json"
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
	"github.com/tracepriv/tracepriv/internal/infile"
	"github.com/tracepriv/tracepriv/internal/jsondoc"
	"github.com/tracepriv/tracepriv/param"
)

// Version is the version of the ledger file layout: 2 keeps one account
// per person in one currency (version 1 kept one per person and
// mechanism; Open migrates it, MigrateV1).
const Version = 2

// Tolerance is the relative slack with which a sum of charges is compared
// with a budget (see the package doc).
const Tolerance = 1e-9

// DefaultLockWait is how long Open waits for another process holding the
// ledger (a release runs under the lock, so this covers a long one).
const DefaultLockWait = 2 * time.Minute

// The currency of an account opened by a geoind charge (a CIP charge
// opens its account at its own order and radius): Rényi order 2 within
// 100 m, the order and radius of the documented CIP examples.
const (
	DefaultLambda  = 2.0
	DefaultRadiusM = 100.0
)

// Mechanism is the kind of a release, and the unit of its native epsilon.
type Mechanism string

// The mechanisms a ledger accounts; all charge one account per person.
const (
	// CIP: conditional inferential privacy (package sanitize); the native
	// epsilon is the certificate's per-person Rényi epsilon_max at order
	// lambda within radius_m.
	CIP Mechanism = "cip"
	// GeoInd: geo-indistinguishability (package geoind); the native
	// epsilon is per metre (a session is ε·d_∞-private), converted to the
	// account's currency by GeoIndCharge.
	GeoInd Mechanism = "geoind"
)

// Unit describes the unit of a mechanism's native epsilon.
func (m Mechanism) Unit() string {
	switch m {
	case CIP:
		return "Rényi CIP epsilon at the release's order lambda within radius_m metres (sanitize certificate epsilon_max)"
	case GeoInd:
		return "geo-indistinguishability epsilon per metre of one session (its releases are epsilon·d_inf-private)"
	}
	return ""
}

func (m Mechanism) valid() bool { return m == CIP || m == GeoInd }

// CurrencyUnit is the unit of every account's budget and spent, and of
// every charge's epsilon.
const CurrencyUnit = "Rényi divergence at the account's order lambda between hypotheses on one person's secret locations within radius_m metres (CIP epsilon; docs/ledger.md)"

// compositionRule is stated in every ledger file.
const compositionRule = "one account per person (uid) in one currency, Rényi epsilon at the account's order lambda within its radius_m: " +
	"the charges of every mechanism add up (sequential composition of Rényi divergences at one order), and a release is admitted only if the sum stays " +
	"within the person's budget; a cip charge is the certificate's epsilon_max at an order and radius at least the account's; a geoind charge of " +
	"epsilon per metre on a grid of u metres is min(e, lambda e^2/2) with e = epsilon (radius_m + sqrt(2) u) (pure e-DP between positions within " +
	"radius_m, Bun and Steinke 2016), which bounds the CIP loss of basic secrets (one location) under priors with one stationary time kernel, " +
	"not that of places or the route, and leaves out geoind's additive tail of 2^-64 (1 + e^e) per noise draw (docs/ledger.md)"

// GeoIndCharge converts a geo-indistinguishability budget of epsPerMetre
// (one session, ε·d_∞-private between grid points) on a grid of gridM
// metres into Rényi divergence at order lambda between two sets of
// positions within radiusM of each other at every time: snapped to the
// grid they are within e = ε(radiusM + √2·gridM), so the session is pure
// e-DP for them, hence D_λ ≤ e and, since pure e-DP implies e²/2-zCDP
// (Bun and Steinke 2016, Proposition 3.3), D_λ ≤ λe²/2. docs/ledger.md
// says which CIP secrets this covers.
func GeoIndCharge(epsPerMetre, gridM, lambda, radiusM float64) float64 {
	e := epsPerMetre * (radiusM + math.Sqrt2*gridM)
	return math.Min(e, lambda*e*e/2)
}

// Ledger is the content of a ledger file.
type Ledger struct {
	Version     int    `json:"version"`
	Composition string `json:"composition"`
	// Accounts are the people, one account each (uids unique).
	Accounts []*Account `json:"accounts"`
	// Charges are every release's charges, in the order made.
	Charges []Charge `json:"charges"`
}

// Account is one person's budget, in one currency for every mechanism.
type Account struct {
	UID  string `json:"uid"`
	Unit string `json:"unit"`
	// Lambda and RadiusM are the account's currency: Rényi order and
	// radius, fixed when it is opened.
	Lambda  float64 `json:"lambda"`
	RadiusM float64 `json:"radius_m"`
	// Budget is the budget set (--budget) and last raised to; null until
	// one is set, and from then on enforced in every run.
	Budget *float64 `json:"budget"`
	// Spent is the sum of the account's charges, pending ones included
	// (kept for readers; checked against the charges when read).
	Spent  float64   `json:"spent"`
	Opened time.Time `json:"opened"`
	Raised []Raise   `json:"raised,omitempty"`
	// Migrated says how a version-1 ledger's accounts were combined.
	Migrated string `json:"migrated,omitempty"`
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
	// Epsilon is the amount charged, in the account's currency.
	Epsilon float64 `json:"epsilon"`
	// NativeEpsilon is the mechanism's own epsilon (Mechanism.Unit).
	NativeEpsilon float64 `json:"native_epsilon"`
	// Lambda and RadiusM are a CIP release's order and radius; GridM a
	// geoind release's output grid.
	Lambda  float64   `json:"lambda,omitempty"`
	RadiusM float64   `json:"radius_m,omitempty"`
	GridM   float64   `json:"grid_m,omitempty"`
	Time    time.Time `json:"time"`
	// Command is the command that released; Output the base name of its
	// output (never a local path).
	Command string `json:"command"`
	Output  string `json:"output,omitempty"`
	// Release names the release (a hash, never a path): a corpus unit, a
	// geoind session.
	Release string `json:"release,omitempty"`
	// Pending marks a charge made before its release landed, at the
	// upper bound the release can reach; Settle replaces it with the
	// certified epsilon, Undo removes it if the release did not land.
	Pending bool `json:"pending,omitempty"`
}

// Request is a release to be charged: Epsilon[uid], in the mechanism's
// native unit, for each person.
type Request struct {
	Mechanism Mechanism
	// Lambda and RadiusM are a CIP release's order and radius. For a
	// geoind release they are the currency of an account it opens (zero:
	// DefaultLambda, DefaultRadiusM).
	Lambda, RadiusM float64
	// GridM is a geoind release's output grid in metres.
	GridM float64
	// Budget is the budget B given for this run, in the currency (0: none
	// given; an account's recorded budget applies). RaiseBudget allows
	// it to exceed the recorded budget (and records the raise).
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

// Over is a person a request would take over budget (in the currency).
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
	// Fix is what to do instead; empty, the ledger file's (fewer people,
	// a smaller epsilon, or a deliberate raise).
	Fix string
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: over budget for %d person(s); nothing released:", e.Path, len(e.Over))
	for i, o := range e.Over {
		if i == 5 {
			fmt.Fprintf(&b, " ... and %d more;", len(e.Over)-5)
			break
		}
		fmt.Fprintf(&b, " person %q has spent %.6g of %.6g and this %s release needs %.6g;", o.UID, o.Spent, o.Budget, e.Mechanism, o.Charge)
	}
	if e.Fix != "" {
		b.WriteString(" " + e.Fix)
	} else {
		b.WriteString(" release fewer people, a smaller epsilon, or raise the budget deliberately with --budget and --raise-budget")
	}
	return b.String()
}

// ErrDamaged is wrapped by the errors of a ledger file that cannot be
// trusted.
var ErrDamaged = errors.New("not a valid tracepriv budget ledger")

// ErrNotCovered refuses a CIP release whose order or radius is below its
// person's account's (Account.Covers): its charge cannot be stated in the
// account's currency. Nothing was charged.
var ErrNotCovered = errors.New("not covered by it")

// File is an open ledger, locked until Close.
type File struct {
	path   string
	unlock func()
	l      *Ledger
	// Now is the clock (tests set it).
	Now func() time.Time
}

// DefaultPath is the ledger used when none is named:
// os.UserConfigDir()/tracepriv/ledger.json.
func DefaultPath() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user configuration directory for the default ledger (%w); give --ledger FILE", err)
	}
	return filepath.Join(d, "tracepriv", "ledger.json"), nil
}

// Open locks the ledger at path (path+".lock", waiting up to wait) and
// reads it; a missing file is an empty ledger, written on the first
// charge, and a version-1 ledger is migrated (MigrateV1; written back on
// the first change). The caller must Close it.
func Open(path string, wait time.Duration) (*File, error) {
	if path == "" {
		return nil, errors.New("budget: no ledger path")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; give the ledger file", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		if err == nil {
			err = fs.ErrNotExist // a file where the directory should be
		}
		return nil, infile.Worded(err, "%s: the directory %s does not exist; create it or give another ledger path", path, filepath.Dir(path))
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

// Read reads and checks a ledger file without locking it, migrating a
// version-1 ledger in memory.
func Read(path string) (*Ledger, error) {
	l, err := jsondoc.ReadFile(path, ReadLedger)
	if errors.Is(err, ErrNeedsGrid) {
		return nil, fmt.Errorf("ledger %w; migrate it with: tracepriv ledger migrate --ledger %s --grid METRES (the largest --grid its geoind sessions used; geoind's default is 1)", err, path)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ledger %w; restore the file from a backup (starting a new ledger would forget what was spent)", err)
	}
	return l, err
}

// ReadLedger decodes and checks a ledger, refusing unknown fields,
// unknown versions and inconsistent records; a version-1 ledger is
// migrated (MigrateV1 without a grid).
func ReadLedger(r io.Reader) (*Ledger, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var head struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(b, &head) == nil && head.Version == 1 {
		return MigrateV1(b, 0)
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

// charged is what a native epsilon costs in account a's currency.
func charged(m Mechanism, native, gridM float64, a *Account) float64 {
	if m == GeoInd {
		return GeoIndCharge(native, gridM, a.Lambda, a.RadiusM)
	}
	return native
}

// Cost is what a release of native epsilon under m costs in the account's
// currency: a geoind session of native epsilon per metre on a grid of
// gridM metres is charged GeoIndCharge at the account's order and radius,
// a CIP release its certified epsilon as it is (see Covers). Only the
// account's Lambda and RadiusM are read, so a service keeping accounts in
// its own store charges with the same conversion as the ledger file.
func (a *Account) Cost(m Mechanism, native, gridM float64) float64 {
	return charged(m, native, gridM, a)
}

// Covers reports whether a CIP release certified at order lambda within
// radiusM metres can be charged to the account: Rényi divergence does not
// decrease with the order, and a guarantee within radiusM holds within
// any smaller radius, so the release's order and radius must be at least
// the account's.
func (a *Account) Covers(lambda, radiusM float64) bool {
	return lambda >= a.Lambda && radiusM >= a.RadiusM
}

// Fits is the admission rule every release follows: a charge fits a
// budget when what was spent plus the charge stays within the budget, up
// to the relative Tolerance.
func Fits(spent, charge, budget float64) bool {
	return spent+charge <= budget*(1+Tolerance)
}

func close9(a, b float64) bool { return math.Abs(a-b) <= Tolerance*math.Max(1, math.Abs(b)) }

// check verifies the ledger's records against each other, recomputing
// every charge from its native epsilon.
func (l *Ledger) check() error {
	acc := map[string]*Account{}
	sum := map[string]float64{}
	for i, a := range l.Accounts {
		switch {
		case a == nil:
			return fmt.Errorf("account %d is null", i+1)
		case a.UID == "":
			return fmt.Errorf("account %d: no uid", i+1)
		case a.Budget != nil && !finitePos(*a.Budget):
			return fmt.Errorf("account %d (%q): budget %v, want positive and finite, or null", i+1, a.UID, *a.Budget)
		case !(a.Lambda > 1 && finitePos(a.Lambda) && finitePos(a.RadiusM)):
			return fmt.Errorf("account %d (%q): an account needs lambda > 1 and radius_m > 0", i+1, a.UID)
		case acc[a.UID] != nil:
			return fmt.Errorf("account %d: person %q has two accounts", i+1, a.UID)
		}
		acc[a.UID] = a
	}
	for i, c := range l.Charges {
		a := acc[c.UID]
		switch {
		case c.Seq != i+1:
			return fmt.Errorf("charge %d: seq %d, want %d (charges were removed or reordered)", i+1, c.Seq, i+1)
		case a == nil:
			return fmt.Errorf("charge %d: person %q has no account", i+1, c.UID)
		case !c.Mechanism.valid():
			return fmt.Errorf("charge %d (%q): mechanism %q, want cip or geoind", i+1, c.UID, c.Mechanism)
		case !finitePos(c.NativeEpsilon) || !finitePos(c.Epsilon):
			return fmt.Errorf("charge %d (%q): epsilon %v (native %v), want positive and finite", i+1, c.UID, c.Epsilon, c.NativeEpsilon)
		case c.Mechanism == CIP && (c.Lambda < a.Lambda || c.RadiusM < a.RadiusM):
			return fmt.Errorf("charge %d (%q): lambda %g, radius_m %g below the account's %g, %g", i+1, c.UID, c.Lambda, c.RadiusM, a.Lambda, a.RadiusM)
		case c.Mechanism == GeoInd && !finitePos(c.GridM):
			return fmt.Errorf("charge %d (%q): a geoind charge needs its grid_m", i+1, c.UID)
		case !close9(c.Epsilon, charged(c.Mechanism, c.NativeEpsilon, c.GridM, a)):
			return fmt.Errorf("charge %d (%q): epsilon %v is not the %s charge %v of its native epsilon %v", i+1, c.UID, c.Epsilon, c.Mechanism, charged(c.Mechanism, c.NativeEpsilon, c.GridM, a), c.NativeEpsilon)
		}
		sum[c.UID] += c.Epsilon
	}
	for _, a := range l.Accounts {
		if s := sum[a.UID]; !close9(a.Spent, s) {
			return fmt.Errorf("account %q: spent %v, but its charges add up to %v", a.UID, a.Spent, s)
		}
	}
	return nil
}

// Account returns the account of uid, or nil.
func (l *Ledger) Account(uid string) *Account {
	for _, a := range l.Accounts {
		if a.UID == uid {
			return a
		}
	}
	return nil
}

// Spent is what uid has spent under m alone, in the currency.
func (l *Ledger) Spent(uid string, m Mechanism) float64 {
	s := 0.0
	for _, c := range l.Charges {
		if c.UID == uid && c.Mechanism == m {
			s += c.Epsilon
		}
	}
	return s
}

// Pending returns the pending charges of release, by uid (native).
func (l *Ledger) Pending(release string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range l.Charges {
		if c.Pending && c.Release == release && release != "" {
			out[c.UID] += c.NativeEpsilon
		}
	}
	return out
}

// PendingReleases returns the releases with pending charges whose key
// starts with prefix, in the order first charged.
func (l *Ledger) PendingReleases(prefix string) []string {
	var out []string
	for _, c := range l.Charges {
		if c.Pending && c.Release != "" && strings.HasPrefix(c.Release, prefix) && !slices.Contains(out, c.Release) {
			out = append(out, c.Release)
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
	case r.Budget != 0 && !finitePos(r.Budget):
		return &param.Error{Name: "budget", Value: r.Budget, Why: "must be positive and finite (Rényi epsilon at the account's order within its radius)"}
	case r.RaiseBudget && r.Budget == 0:
		return &param.Error{Name: "budget", Value: r.Budget, Why: "raising a budget needs the new budget"}
	case r.Mechanism == CIP && !(r.Lambda > 1 && finitePos(r.Lambda) && finitePos(r.RadiusM)):
		return &param.Error{Name: "lambda", Value: r.Lambda, Why: "a cip charge needs lambda > 1 and a positive radius"}
	case r.Mechanism == GeoInd && !finitePos(r.GridM):
		return &param.Error{Name: "grid", Value: r.GridM, Why: "a geoind charge needs its output grid in metres"}
	case r.Mechanism == GeoInd && (r.Lambda != 0 && !(r.Lambda > 1 && finitePos(r.Lambda)) || r.RadiusM != 0 && !finitePos(r.RadiusM)):
		return &param.Error{Name: "lambda", Value: r.Lambda, Why: "an account's currency needs lambda > 1 and a positive radius"}
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

// newAccount is the account req opens for uid (not yet in a ledger).
func (r *Request) newAccount(uid string, now time.Time) *Account {
	a := &Account{UID: uid, Unit: CurrencyUnit, Lambda: r.Lambda, RadiusM: r.RadiusM, Opened: now}
	if r.Mechanism == GeoInd {
		a.Lambda, a.RadiusM = DefaultLambda, DefaultRadiusM
		if r.Lambda != 0 {
			a.Lambda = r.Lambda
		}
		if r.RadiusM != 0 {
			a.RadiusM = r.RadiusM
		}
	}
	if r.Budget > 0 {
		b := r.Budget
		a.Budget = &b
	}
	return a
}

// Cost returns what req charges uid in the currency of uid's account (of
// the account it would open), without checking the budget.
func (f *File) Cost(req Request, uid string) float64 {
	a := f.l.Account(uid)
	if a == nil {
		a = req.newAccount(uid, time.Time{})
	}
	return charged(req.Mechanism, req.Epsilon[uid], req.GridM, a)
}

// Check reports whether req fits every person's budget, without charging
// (CheckRequest; a person without an account is checked against the
// account req would open): a *RefusedError if some would go over, another
// error if the request cannot be charged at all (an order or radius below
// a CIP account's, a budget above the recorded one without RaiseBudget).
func (f *File) Check(req Request) error {
	return CheckRequest(f.path, req, func(uid string) (*Account, error) {
		if a := f.l.Account(uid); a != nil {
			return a, nil
		}
		return req.newAccount(uid, time.Time{}), nil
	})
}

// Charge checks req and, if it fits, records its charges (opening
// accounts, setting or raising budgets) and writes the ledger durably
// before returning. On any error nothing is charged.
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
		a := next.Account(uid)
		switch {
		case a == nil:
			a = req.newAccount(uid, now)
			next.Accounts = append(next.Accounts, a)
		case a.Budget == nil && req.Budget > 0:
			b := req.Budget
			a.Budget = &b
		case a.Budget != nil && req.RaiseBudget && req.Budget > *a.Budget:
			a.Raised = append(a.Raised, Raise{Time: now, From: *a.Budget, To: req.Budget})
			b := req.Budget
			a.Budget = &b
		}
		c := Charge{Seq: len(next.Charges) + 1, UID: uid, Mechanism: req.Mechanism, NativeEpsilon: req.Epsilon[uid], Time: now,
			Command: req.Command, Output: out, Release: req.Release, Pending: req.Pending}
		switch req.Mechanism {
		case CIP:
			c.Lambda, c.RadiusM = req.Lambda, req.RadiusM
		case GeoInd:
			c.GridM = req.GridM
		}
		c.Epsilon = charged(c.Mechanism, c.NativeEpsilon, c.GridM, a)
		next.Charges = append(next.Charges, c)
	}
	return f.commit(next)
}

// Settle replaces the pending charges of release with the certified
// native epsilons eps[uid] (each at most the pending charge, up to
// Tolerance) and marks them settled; a pending charge of a person not in
// eps stays at its upper bound and is marked settled too (its release
// landed, but its certified epsilon is not known). It writes the ledger
// durably.
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
		e, err := Settled(f.path, c.UID, c.NativeEpsilon, eps)
		if err != nil {
			return err
		}
		c.NativeEpsilon = e
		c.Epsilon = charged(c.Mechanism, e, c.GridM, next.Account(c.UID))
		c.Pending = false
	}
	return f.commit(next)
}

// Undo removes the pending charges of release: their release did not
// land, so nothing of it was released. Settled charges are never removed.
// It writes the ledger durably (nothing if there was nothing to undo).
func (f *File) Undo(release string) error { return f.UndoPeople(release, nil) }

// UndoPeople is Undo for the people uids of release only (nil: all): a
// release of which some people's parts landed and others' did not.
func (f *File) UndoPeople(release string, uids []string) error {
	if release == "" {
		return errors.New("budget: Undo needs a release key")
	}
	undo := func(c Charge) bool {
		return c.Pending && c.Release == release && (uids == nil || slices.Contains(uids, c.UID))
	}
	next := f.clone()
	kept := next.Charges[:0]
	for _, c := range next.Charges {
		if undo(c) {
			continue
		}
		c.Seq = len(kept) + 1
		kept = append(kept, c)
	}
	if len(kept) == len(f.l.Charges) {
		return nil
	}
	next.Charges = kept
	// An account the undone charges opened, and that has no charge left,
	// was never used: remove it too, so a release that did not land
	// leaves no trace.
	opened := map[string]bool{}
	for _, c := range f.l.Charges {
		if undo(c) {
			if a := f.l.Account(c.UID); a != nil && a.Opened.Equal(c.Time) && len(a.Raised) == 0 {
				opened[c.UID] = true
			}
		}
	}
	for _, c := range kept {
		delete(opened, c.UID)
	}
	next.Accounts = slices.DeleteFunc(next.Accounts, func(a *Account) bool { return opened[a.UID] })
	return f.commit(next)
}

// SetRelease renames the release key of the charges of release old (a
// geoind session whose id is known only once it started) and settles
// them.
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
			if c.UID == a.UID {
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
		if a.Budget != nil {
			b := *a.Budget
			c.Budget = &b
		}
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
