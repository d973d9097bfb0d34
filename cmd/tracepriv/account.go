package main

import (
	"errors"
	"fmt"
	"github.com/tracepriv/tracepriv/internal/infile"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/cli"
)

func init() { register(newAccountCmd) }

func newAccountCmd(env *cli.Env) *cobra.Command {
	long, example := help("account")
	cmd := &cobra.Command{
		Use:     "account",
		Short:   "Compose privacy guarantees: Gaussian DP, the Gaussian mechanism, ledgers",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newAccountGDPCmd(env), newAccountGaussianCmd(env), newAccountLedgerCmd(env))
	return cmd
}

// accountGDPCmd is "tracepriv account gdp".
type accountGDPCmd struct {
	env            *cli.Env
	mu, eps, delta float64
}

func newAccountGDPCmd(env *cli.Env) *cobra.Command {
	c := &accountGDPCmd{env: env}
	long, example := help("account gdp")
	cmd := &cobra.Command{
		Use:     "gdp --mu MU (--epsilon E | --delta D)",
		Short:   "Convert μ-GDP to (ε, δ): δ(ε) or ε(δ)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.Float64Var(&c.mu, "mu", 0, "Gaussian-DP parameter μ")
	f.Float64Var(&c.eps, "epsilon", 0, "ε at which to report δ")
	f.Float64Var(&c.delta, "delta", 0, "δ at which to report ε")
	cmd.MarkFlagsMutuallyExclusive("epsilon", "delta")
	cmd.MarkFlagsOneRequired("epsilon", "delta")
	return cmd
}

func (c *accountGDPCmd) run(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("mu") {
		return usageErrorf("account gdp: --mu is required")
	}
	res := &accountant.GDPResult{Mu: c.mu}
	var err error
	if cmd.Flags().Changed("epsilon") {
		res.Epsilon = c.eps
		res.Delta, err = accountant.GDPDelta(c.mu, c.eps)
	} else {
		res.Delta = c.delta
		res.Epsilon, err = accountant.GDPEpsilon(c.mu, c.delta)
	}
	if err != nil {
		return fmt.Errorf("account gdp: %w", err)
	}
	return c.env.Emit(res, res.WriteText)
}

// accountGaussianCmd is "tracepriv account gaussian".
type accountGaussianCmd struct {
	env                     *cli.Env
	sigma, eps, delta, sens float64
}

func newAccountGaussianCmd(env *cli.Env) *cobra.Command {
	c := &accountGaussianCmd{env: env}
	long, example := help("account gaussian")
	cmd := &cobra.Command{
		Use:     "gaussian --epsilon E (--sigma S | --delta D) [--sensitivity Δ]",
		Short:   "Exact δ of the Gaussian mechanism (or the σ for a target δ)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd) },
	}
	f := cmd.Flags()
	f.Float64Var(&c.sigma, "sigma", 0, "noise standard deviation σ")
	f.Float64Var(&c.eps, "epsilon", 0, "target ε")
	f.Float64Var(&c.delta, "delta", 0, "target δ (report σ instead of δ)")
	f.Float64Var(&c.sens, "sensitivity", 1, "ℓ₂ sensitivity Δ of the query")
	cmd.MarkFlagsMutuallyExclusive("sigma", "delta")
	cmd.MarkFlagsOneRequired("sigma", "delta")
	return cmd
}

func (c *accountGaussianCmd) run(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("epsilon") {
		return usageErrorf("account gaussian: --epsilon is required")
	}
	res := gaussianResult{Sensitivity: c.sens, Epsilon: c.eps}
	var err error
	if cmd.Flags().Changed("sigma") {
		res.Sigma = c.sigma
		res.Delta, err = accountant.GaussianDelta(c.sigma, c.eps, c.sens)
	} else {
		res.Delta = c.delta
		res.Sigma, err = accountant.GaussianSigma(c.eps, c.delta, c.sens)
	}
	if err != nil {
		return fmt.Errorf("account gaussian: %w", err)
	}
	res.Mu = c.sens / res.Sigma
	return c.env.Emit(res, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "sigma = %.10g\nsensitivity = %g\nmu = %.10g\nepsilon = %g\ndelta = %.10g\n",
			res.Sigma, res.Sensitivity, res.Mu, res.Epsilon, res.Delta)
		return err
	})
}

// gaussianResult is the JSON of "account gaussian".
type gaussianResult struct {
	Sigma       float64 `json:"sigma"`
	Sensitivity float64 `json:"sensitivity"`
	Mu          float64 `json:"mu"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
}

// accountLedgerCmd is "tracepriv account ledger".
type accountLedgerCmd struct {
	env        *cli.Env
	eps, delta float64
}

func newAccountLedgerCmd(env *cli.Env) *cobra.Command {
	c := &accountLedgerCmd{env: env}
	long, example := help("account ledger")
	cmd := &cobra.Command{
		Use:     "ledger FILE [--delta D | --epsilon E]",
		Short:   "Compose a JSON or YAML ledger of privacy events",
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return c.run(cmd, args[0]) },
	}
	f := cmd.Flags()
	f.Float64Var(&c.delta, "delta", 1e-5, "report the smallest ε at this δ")
	f.Float64Var(&c.eps, "epsilon", 0, "report the smallest δ at this ε instead")
	cmd.MarkFlagsMutuallyExclusive("epsilon", "delta")
	return cmd
}

func (c *accountLedgerCmd) run(cmd *cobra.Command, name string) error {
	var r io.Reader = cmd.InOrStdin()
	if name != "-" {
		f, err := infile.OpenNamed(name)
		if err != nil {
			return fmt.Errorf("account ledger: %w", err)
		}
		defer f.Close()
		r = f
	}
	l, err := accountant.ParseEventLog(r)
	if err != nil {
		return ledgerFileError(name, err)
	}
	var rep *accountant.Report
	if cmd.Flags().Changed("epsilon") {
		rep, err = l.DeltaAt(c.eps)
	} else {
		rep, err = l.EpsilonAt(c.delta)
	}
	if err != nil {
		return fmt.Errorf("account ledger: %s: %w", ledgerName(name), err)
	}
	return c.env.Emit(rep, func(w io.Writer) error {
		fmt.Fprintf(w, "%s: ", name)
		return rep.WriteText(w)
	})
}

// ledgerExample is the smallest ledger, shown when a file is not one.
const ledgerExample = `{"version": 1, "events": [{"type": "gaussian", "sigma": 8, "count": 16}]}`

func ledgerName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// ledgerFileError says which file is not a ledger, what is wrong and how to
// fix it: a problem with the document as a whole (another kind of file, a
// field a ledger does not have, no version or events) or with one event.
func ledgerFileError(name string, err error) error {
	var le *accountant.EventLogError
	if !errors.As(err, &le) {
		return fmt.Errorf("account ledger: reading %s: %w", ledgerName(name), err)
	}
	if le.Path == "" {
		what := le.Err.Error()
		if le.Field != "" {
			what = le.Field + ": " + what
		}
		return infile.Worded(err, "account ledger: %s is not a valid ledger: %s.\nA ledger is a JSON or YAML object such as %s; the format is in docs/accountant.md",
			ledgerName(name), what, ledgerExample)
	}
	return fmt.Errorf("account ledger: %s: %w (docs/accountant.md lists the fields each event type takes)", ledgerName(name), err)
}
