package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// ledgerFlags are --ledger, --no-ledger, --budget and --raise-budget of
// the commands that release (sanitize, geoind sanitize, geoind query): a
// person's one budget across releases and mechanisms (package budget,
// docs/ledger.md). The ledger is on by default.
type ledgerFlags struct {
	path   string
	off    bool
	budget float64
	raise  bool
}

// add registers the flags.
func (l *ledgerFlags) add(f *pflag.FlagSet) {
	f.StringVar(&l.path, "ledger", "", "per-person budget ledger (JSON; created if missing; default: the user configuration directory's tracepriv/ledger.json): every private release is charged to its people there, and refused past their budget (docs/ledger.md)")
	f.BoolVar(&l.off, "no-ledger", false, "release without recording the cost in any ledger (the certificate says ledger: off)")
	f.Float64Var(&l.budget, "budget", 0, "set each person's total budget B, in Rényi epsilon at the account's order within its radius, for CIP and geoind releases together; once set it is enforced in every later run")
	f.BoolVar(&l.raise, "raise-budget", false, "allow --budget above the budget the ledger recorded for a person (the raise is recorded)")
}

// open checks the flags and locks and reads the ledger. It returns nil
// and what the certificate's ledger field says when nothing is charged:
// with --no-ledger, and for a seeded run (not private, so not charged:
// demos and tests can run again and again). Otherwise the ledger is
// --ledger FILE or the default one, and the field is
// its base name. The caller closes it when the release has landed.
func (l *ledgerFlags) open(env *cli.Env, cmd *cobra.Command, name string) (*budget.File, string, error) {
	f := cmd.Flags()
	if l.off {
		for _, fl := range []string{"ledger", "budget", "raise-budget"} {
			if f.Changed(fl) {
				return nil, "", usageErrorf("%s: --no-ledger and --%s contradict each other: give one", name, fl)
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
	path := l.path
	if path == "" {
		p, err := budget.DefaultPath()
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", name, err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, "", fmt.Errorf("%s: the default ledger %s: %w; give --ledger FILE, or --no-ledger", name, p, err)
		}
		path = p
	}
	lf, err := budget.Open(path, budget.DefaultLockWait)
	if err != nil {
		return nil, "", fmt.Errorf("%s: --ledger: %w", name, err)
	}
	return lf, filepath.Base(path), nil
}

// request is a charge of this run's release, named by a fresh key.
func (l *ledgerFlags) request(m budget.Mechanism, command, out string) budget.Request {
	return budget.NewRequest(m, command, out, l.budget, l.raise)
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
	lf.WriteCharges(notes{env.Stderr}, req)
}

func init() { register(newLedgerCmd) }

// ledgerCmd is "tracepriv ledger show" and "ledger migrate".
type ledgerCmd struct {
	env  *cli.Env
	path string
	grid float64
}

func newLedgerCmd(env *cli.Env) *cobra.Command {
	c := &ledgerCmd{env: env}
	_, example := help("ledger")
	cmd := &cobra.Command{
		Use:     "ledger",
		Short:   "Show or migrate the per-person budget ledger (docs/ledger.md)",
		Example: example,
		Args:    cobra.NoArgs,
	}
	_, example = help("ledger show")
	show := &cobra.Command{
		Use:     "show [--ledger FILE]",
		Short:   "Print each person's account: budget, spent, currency and charges",
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.show() },
	}
	long, example := help("ledger migrate")
	migrate := &cobra.Command{
		Use:     "migrate --ledger FILE --grid METRES",
		Short:   "Rewrite a version-1 ledger as version 2: one account per person, in one currency",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.migrate(cmd) },
	}
	for _, s := range []*cobra.Command{show, migrate} {
		s.Flags().StringVar(&c.path, "ledger", "", "the ledger file (default: the user configuration directory's tracepriv/ledger.json)")
	}
	migrate.Flags().Float64Var(&c.grid, "grid", 0, "the largest output grid in metres of the ledger's geoind sessions")
	cmd.AddCommand(show, migrate)
	return cmd
}

func (c *ledgerCmd) file() (string, error) {
	if c.path != "" {
		return c.path, nil
	}
	return budget.DefaultPath()
}

func (c *ledgerCmd) show() error {
	p, err := c.file()
	if err != nil {
		return fmt.Errorf("ledger show: %w", err)
	}
	l, err := budget.Read(p)
	if err != nil {
		return fmt.Errorf("ledger show: %w", err)
	}
	return c.env.Emit(l, func(w io.Writer) error {
		fmt.Fprintf(w, "%s: ", p)
		return l.WriteText(w)
	})
}

func (c *ledgerCmd) migrate(cmd *cobra.Command) error {
	p, err := c.file()
	if err != nil {
		return fmt.Errorf("ledger migrate: %w", err)
	}
	if !cmd.Flags().Changed("grid") {
		return usageErrorf("ledger migrate: --grid METRES is required: the largest output grid the ledger's geoind sessions used (geoind's default is 1)")
	}
	l, err := budget.Migrate(p, c.grid, budget.DefaultLockWait)
	if err != nil {
		return fmt.Errorf("ledger migrate: %w", err)
	}
	return c.env.Emit(l, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s: version %d, %d people, %d charges\n", p, l.Version, len(l.Accounts), len(l.Charges))
		return err
	})
}
