package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// ledgerFlags are --ledger, --budget and --raise-budget of the commands
// that release (sanitize, geoind sanitize, geoind query): a person's
// budget across releases (package budget, docs/ledger.md).
type ledgerFlags struct {
	path   string
	budget float64
	raise  bool
}

// add registers the flags; unit names the budget's unit in the help.
func (l *ledgerFlags) add(f *pflag.FlagSet, unit string) {
	f.StringVar(&l.path, "ledger", "", "per-person budget ledger (JSON; created if missing): every release is charged to its people there first, and refused if it would exceed --budget (docs/ledger.md)")
	f.Float64Var(&l.budget, "budget", 0, "each person's total budget B in the ledger, in "+unit+" (required with --ledger)")
	f.BoolVar(&l.raise, "raise-budget", false, "allow --budget above the budget the ledger recorded for a person (the raise is recorded)")
}

// open checks the flags and locks and reads the ledger; nil without
// --ledger. The caller closes it when the release is written.
func (l *ledgerFlags) open(cmd *cobra.Command, name string) (*budget.File, error) {
	f := cmd.Flags()
	if l.path == "" {
		for _, fl := range []string{"budget", "raise-budget"} {
			if f.Changed(fl) {
				return nil, fmt.Errorf("%s: --%s needs --ledger FILE, the file that records each person's spending", name, fl)
			}
		}
		return nil, nil
	}
	if !f.Changed("budget") {
		return nil, fmt.Errorf("%s: --ledger %s needs --budget B, each person's total budget", name, l.path)
	}
	lf, err := budget.Open(l.path, budget.DefaultLockWait)
	if err != nil {
		return nil, fmt.Errorf("%s: --ledger: %w", name, err)
	}
	return lf, nil
}

// request is a charge of this run's release.
func (l *ledgerFlags) request(m budget.Mechanism, command, out string) budget.Request {
	return budget.Request{Mechanism: m, Budget: l.budget, RaiseBudget: l.raise, Command: command, Output: out, Epsilon: map[string]float64{}}
}

// ledgerError names the flags behind a budget error.
func ledgerError(name string, err error) error {
	var pe *budget.RefusedError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: --ledger %w", name, err)
	}
	if perr := (*param.Error)(nil); errors.As(err, &perr) && perr.Name == "budget" {
		return fmt.Errorf("%s: --budget: %w", name, err)
	}
	return fmt.Errorf("%s: --ledger: %w", name, err)
}

// uidsOf returns the distinct uids of traces, refusing a trace without
// one: the ledger is kept per person.
func uidsOf(traces []*trace.Trace) ([]string, error) {
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

// reportCharge tells on stderr what the ledger now holds for the people
// charged.
func reportCharge(env *cli.Env, lf *budget.File, req budget.Request) {
	if env.Quiet || lf == nil {
		return
	}
	uids := make([]string, 0, len(req.Epsilon))
	for u := range req.Epsilon {
		uids = append(uids, u)
	}
	slices.Sort(uids)
	for i, u := range uids {
		if i == 5 {
			fmt.Fprintf(env.Stderr, "tracepriv: ledger: ... and %d more people\n", len(uids)-5)
			break
		}
		a := lf.Ledger().Account(u, req.Mechanism)
		if a == nil {
			continue
		}
		fmt.Fprintf(env.Stderr, "tracepriv: ledger %s: person %q charged %.6g (%s); spent %.6g of %.6g\n", filepath.Base(lf.Path()), u, req.Epsilon[u], req.Mechanism, a.Spent, a.Budget)
	}
}

// releaseKey names a release that spans runs (a corpus run resumed) by a
// hash of its parts, so that no local path goes into the ledger.
func releaseKey(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return kind + " " + hex.EncodeToString(h.Sum(nil))[:16]
}
