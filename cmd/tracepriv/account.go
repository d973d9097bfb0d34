package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/accountant"
	"github.com/tracepriv/tracepriv/internal/cli"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "account",
			Short: "Compose privacy guarantees: Gaussian DP, the Gaussian mechanism, ledgers",
			Long: `account answers privacy-accounting questions.

  account gdp       convert a μ-GDP guarantee to (ε, δ)
  account gaussian  the exact δ (or σ) of the Gaussian mechanism
  account ledger    compose a JSON/YAML ledger of privacy events

See docs/accountant.md for the ledger format.`,
			Example: `  tracepriv account gdp --mu 1 --epsilon 1
  tracepriv account gaussian --delta 1e-5 --epsilon 1
  echo '{"version": 1, "events": [{"type": "gaussian", "sigma": 8, "count": 16}]}' | tracepriv account ledger -`,
		}
		cmd.AddCommand(accountGDPCmd(env), accountGaussianCmd(env), accountLedgerCmd(env))
		return cmd
	})
}

type gdpResult struct {
	Mu      float64 `json:"mu"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

func accountGDPCmd(env *cli.Env) *cobra.Command {
	var mu, eps, delta float64
	cmd := &cobra.Command{
		Use:   "gdp --mu MU (--epsilon E | --delta D)",
		Short: "Convert μ-GDP to (ε, δ): δ(ε) or ε(δ)",
		Long: `gdp converts a μ-Gaussian-DP guarantee to approximate DP using the tight
curve δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2). With --epsilon it prints
delta; with --delta it prints the smallest epsilon.`,
		Example: `  tracepriv account gdp --mu 1 --epsilon 1
  tracepriv account gdp --mu 0.5 --delta 1e-5 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("mu") {
				return usageErrorf("account gdp: --mu is required")
			}
			res := gdpResult{Mu: mu}
			var err error
			if cmd.Flags().Changed("epsilon") {
				res.Epsilon = eps
				res.Delta, err = accountant.GDPDelta(mu, eps)
			} else {
				res.Delta = delta
				res.Epsilon, err = accountant.GDPEpsilon(mu, delta)
			}
			if err != nil {
				return fmt.Errorf("account gdp: %w", err)
			}
			return env.Emit(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "mu = %g\nepsilon = %.10g\ndelta = %.10g\n", res.Mu, res.Epsilon, res.Delta)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.Float64Var(&mu, "mu", 0, "Gaussian-DP parameter μ")
	f.Float64Var(&eps, "epsilon", 0, "ε at which to report δ")
	f.Float64Var(&delta, "delta", 0, "δ at which to report ε")
	cmd.MarkFlagsMutuallyExclusive("epsilon", "delta")
	cmd.MarkFlagsOneRequired("epsilon", "delta")
	return cmd
}

type gaussianResult struct {
	Sigma       float64 `json:"sigma"`
	Sensitivity float64 `json:"sensitivity"`
	Mu          float64 `json:"mu"`
	Epsilon     float64 `json:"epsilon"`
	Delta       float64 `json:"delta"`
}

func accountGaussianCmd(env *cli.Env) *cobra.Command {
	var sigma, eps, delta, sens float64
	cmd := &cobra.Command{
		Use:   "gaussian --epsilon E (--sigma S | --delta D) [--sensitivity Δ]",
		Short: "Exact δ of the Gaussian mechanism (or the σ for a target δ)",
		Long: `gaussian gives the exact privacy of Gaussian noise with standard deviation σ
on a query of ℓ₂ sensitivity Δ (the analytic Gaussian mechanism of Balle &
Wang 2018): with --sigma it prints the smallest delta at --epsilon; with
--delta it prints the smallest sigma that is (ε, δ)-DP.`,
		Example: `  tracepriv account gaussian --sigma 10 --epsilon 0.1
  tracepriv account gaussian --delta 1e-5 --epsilon 1 --sensitivity 2 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("epsilon") {
				return usageErrorf("account gaussian: --epsilon is required")
			}
			res := gaussianResult{Sensitivity: sens, Epsilon: eps}
			var err error
			if cmd.Flags().Changed("sigma") {
				res.Sigma = sigma
				res.Delta, err = accountant.GaussianDelta(sigma, eps, sens)
			} else {
				res.Delta = delta
				res.Sigma, err = accountant.GaussianSigma(eps, delta, sens)
			}
			if err != nil {
				return fmt.Errorf("account gaussian: %w", err)
			}
			res.Mu = sens / res.Sigma
			return env.Emit(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "sigma = %.10g\nsensitivity = %g\nmu = %.10g\nepsilon = %g\ndelta = %.10g\n",
					res.Sigma, res.Sensitivity, res.Mu, res.Epsilon, res.Delta)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.Float64Var(&sigma, "sigma", 0, "noise standard deviation σ")
	f.Float64Var(&eps, "epsilon", 0, "target ε")
	f.Float64Var(&delta, "delta", 0, "target δ (report σ instead of δ)")
	f.Float64Var(&sens, "sensitivity", 1, "ℓ₂ sensitivity Δ of the query")
	cmd.MarkFlagsMutuallyExclusive("sigma", "delta")
	cmd.MarkFlagsOneRequired("sigma", "delta")
	return cmd
}

func accountLedgerCmd(env *cli.Env) *cobra.Command {
	var eps, delta float64
	cmd := &cobra.Command{
		Use:   "ledger FILE [--delta D | --epsilon E]",
		Short: "Compose a JSON or YAML ledger of privacy events",
		Long: `ledger composes every event of a ledger (see docs/accountant.md) with the
Rényi-DP accountant, with exact zCDP when every event is zCDP, and with exact
Gaussian DP when every event is a Gaussian mechanism. It reports ε at
--delta (default 1e-5) or δ at --epsilon, the best of the accountants, μ
and the optimal Rényi order. Metric-privacy events (planar Laplace) are
composed separately, per unit of distance. FILE "-" reads stdin.`,
		Example: `  echo '{"version": 1, "events": [{"type": "gaussian", "sigma": 8, "count": 16}]}' | tracepriv account ledger -
  echo '{"version": 1, "events": [{"type": "laplace", "epsilon": 0.1, "count": 5}, {"type": "zcdp", "rho": 0.01}]}' | tracepriv account ledger - --epsilon 1 --json
  # a ledger file in JSON or YAML (format in docs/accountant.md): tracepriv account ledger releases.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			var r io.Reader = cmd.InOrStdin()
			if name != "-" {
				f, err := openFile(name)
				if err != nil {
					return fmt.Errorf("account ledger: %w", err)
				}
				defer f.Close()
				r = f
			}
			l, err := accountant.ParseLedger(r)
			if err != nil {
				return ledgerFileError(name, err)
			}
			var rep *accountant.Report
			if cmd.Flags().Changed("epsilon") {
				rep, err = l.DeltaAt(eps)
			} else {
				rep, err = l.EpsilonAt(delta)
			}
			if err != nil {
				return fmt.Errorf("account ledger: %s: %w", ledgerName(name), err)
			}
			return env.Emit(rep, func(w io.Writer) error { return writeLedgerReport(w, name, rep) })
		},
	}
	f := cmd.Flags()
	f.Float64Var(&delta, "delta", 1e-5, "report the smallest ε at this δ")
	f.Float64Var(&eps, "epsilon", 0, "report the smallest δ at this ε instead")
	cmd.MarkFlagsMutuallyExclusive("epsilon", "delta")
	return cmd
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
	var le *accountant.LedgerError
	if !errors.As(err, &le) {
		return fmt.Errorf("account ledger: reading %s: %w", ledgerName(name), err)
	}
	if le.Path == "" {
		problem := le.Err.Error()
		if le.Field != "" {
			problem = le.Field + ": " + problem
		}
		return fmt.Errorf("account ledger: %s is not a valid ledger: %s.\nA ledger is a JSON or YAML object such as %s; the format is in docs/accountant.md",
			ledgerName(name), problem, ledgerExample)
	}
	return fmt.Errorf("account ledger: %s: %w (docs/accountant.md lists the fields each event type takes)", ledgerName(name), err)
}

func writeLedgerReport(w io.Writer, name string, rep *accountant.Report) error {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	p("%s: %d mechanism runs\n", name, rep.Runs)
	if rep.Method != "" {
		if rep.Query == "epsilon" {
			p("epsilon = %.10g at delta = %g (best: %s)\n", rep.Epsilon, rep.Delta, rep.Method)
		} else {
			p("delta = %.10g at epsilon = %g (best: %s)\n", rep.Delta, rep.Epsilon, rep.Method)
		}
	}
	if r := rep.RDP; r != nil {
		p("  rdp:  epsilon = %.10g, delta = %.10g, optimal order %g\n", r.Epsilon, r.Delta, r.Order)
	}
	if z := rep.ZCDP; z != nil {
		p("  zcdp: rho = %.10g, epsilon = %.10g, delta = %.10g\n", z.Rho, z.Epsilon, z.Delta)
	}
	if g := rep.GDP; g != nil {
		p("  gdp:  mu = %.10g, epsilon = %.10g, delta = %.10g (exact)\n", g.Mu, g.Epsilon, g.Delta)
	}
	if a := rep.Approx; a != nil {
		p("  (epsilon, delta) events, basic composition: epsilon = %g, delta = %g (included above)\n", a.Epsilon, a.Delta)
	}
	if m := rep.Metric; m != nil {
		p("metric privacy (per unit distance, composed separately): %v\n", m)
	}
	return err
}
