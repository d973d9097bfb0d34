package cli

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// LedgerFlags are --ledger, --no-ledger, --budget and --raise-budget of
// the commands that release (sanitize, geoind sanitize, geoind query): a
// person's one budget across releases and mechanisms (package budget,
// docs/ledger.md). The ledger is on by default: a JSON file, or the
// service's database (--ledger sqlite:PATH, --ledger postgres://...).
type LedgerFlags struct {
	Path   string
	Off    bool
	Budget float64
	Raise  bool
}

// Add registers the flags.
func (l *LedgerFlags) Add(f *pflag.FlagSet) {
	f.StringVar(&l.Path, "ledger", "", "per-person budget ledger: a JSON file (created if missing; default: the user configuration directory's tracepriv/ledger.json), or the database of tracepriv serve, sqlite:PATH (its --data directory or PATH/tracepriv.db) or postgres://..., whose accounts the release then charges: every private release is charged to its people there, and refused past their budget (docs/ledger.md)")
	f.BoolVar(&l.Off, "no-ledger", false, "release without recording the cost in any ledger (the certificate says ledger: off)")
	f.Float64Var(&l.Budget, "budget", 0, "set each person's total budget B, in Rényi epsilon at the account's order within its radius, for CIP and geoind releases together; once set it is enforced in every later run (a database ledger keeps the budget the service set: a smaller B applies to this run)")
	f.BoolVar(&l.Raise, "raise-budget", false, "allow --budget above the budget the ledger recorded for a person (the raise is recorded; not with a database ledger)")
}

// OpenDatabase opens the service's database at location (sqlite:PATH,
// postgres://...) as a budget store, and names it for certificates.
// Package cli cannot import the service (it is a layer above): the
// command sets it (tracepriv sets server.OpenLedgerStore).
type OpenDatabase func(location string) (s budget.Store, name string, err error)

// Open checks the flags (f is the command's parsed flag set) and opens
// the ledger: a ledger file, locked and read, or the service's database
// (env.OpenDatabase). It returns nil and what the certificate's ledger
// field says when nothing is charged: with --no-ledger, and for a seeded
// run (not private, so not charged: demos and tests can run again and
// again). Otherwise the ledger is --ledger or the default file, and the
// field is its name (a file's base name). name is the command, for
// messages. The caller closes it when the release has landed.
func (l *LedgerFlags) Open(env *Env, f *pflag.FlagSet, name string) (budget.Store, string, error) {
	if f.Changed("budget") && l.Budget == 0 {
		// A budget of 0 in a Request means "none given", which would leave
		// a new account without any budget: the opposite of what was asked.
		return nil, "", usagef("%s: --budget 0: a budget must be positive; to stop releasing a person's data, do not run the release (a budget smaller than what they spent refuses every later release)", name)
	}
	if l.Off {
		for _, fl := range []string{"ledger", "budget", "raise-budget"} {
			if f.Changed(fl) {
				return nil, "", usagef("%s: --no-ledger and --%s contradict each other: give one", name, fl)
			}
		}
		return nil, budget.Off, nil
	}
	if env.SeedSet {
		if !env.Quiet {
			fmt.Fprintf(env.Stderr, "tracepriv: seeded run: NOT private, so not charged to any ledger (run again freely; drop --seed for a private, charged release)\n")
		}
		return nil, budget.Seeded, nil
	}
	s, ledgerName, err := budget.OpenStore(l.Path, l.Raise, env.OpenDatabase, budget.DefaultLockWait)
	if err != nil {
		if budget.IsDatabase(l.Path) && (env.OpenDatabase == nil || l.Raise) {
			return nil, "", usagef("%s: %v", name, err) // the flags contradict each other: exit 2
		}
		return nil, "", fmt.Errorf("%s: --ledger: %w", name, err)
	}
	return s, ledgerName, nil
}

// Request is a charge of this run's release, named by a fresh key.
func (l *LedgerFlags) Request(m budget.Mechanism, command, out string) budget.Request {
	return budget.NewRequest(m, command, out, l.Budget, l.Raise)
}

// LedgerError names the flags behind a budget error of the command name.
func LedgerError(name string, err error) error {
	var pe *budget.RefusedError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: --ledger %w", name, err)
	}
	if perr := (*param.Error)(nil); errors.As(err, &perr) && perr.Name == "budget" {
		return fmt.Errorf("%s: --budget: %w", name, err)
	}
	return fmt.Errorf("%s: --ledger: %w", name, err)
}

// UIDsOf returns the distinct uids of traces, refusing a trace without
// one: the ledger is kept per person.
func UIDsOf(traces []*trace.Trace) ([]string, error) {
	var out []string
	for _, t := range traces {
		if t.UID == "" {
			return nil, fmt.Errorf("trace %q has no uid, and the ledger is kept per person: give --uid, or put each person's files in a directory named after them", t.Name)
		}
		if !slices.Contains(out, t.UID) {
			out = append(out, t.UID)
		}
	}
	return out, nil
}

// ReportCharge tells on stderr what the ledger now holds for the people
// charged (nothing with --quiet or without a ledger).
func (e *Env) ReportCharge(lf budget.Store, req budget.Request) {
	if e.Quiet || lf == nil {
		return
	}
	budget.WriteCharges(Notes{e.Stderr}, lf, req)
}

// LedgerTargets is each person's upper bound eps, the charge a release of
// traces under adm is checked against before anything is drawn; nil adm
// (no ledger) charges nobody.
func LedgerTargets(adm *budget.Admission, traces []*trace.Trace, eps float64) (map[string]float64, error) {
	target := map[string]float64{}
	if adm == nil {
		return target, nil
	}
	uids, err := UIDsOf(traces)
	if err != nil {
		return nil, err
	}
	for _, u := range uids {
		target[u] = eps
	}
	return target, nil
}
