package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/internal/cli"
)

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
	if budget.IsDatabase(c.path) {
		return "", usageErrorf("--ledger names the service's database, which this command does not read: see a person's account with GET /v1/people/{id}/ledger (docs/serve.md)")
	}
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
