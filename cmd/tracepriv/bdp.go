package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/bdp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/matfile"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "bdp",
			Short: "Bayesian-DP calibration for correlated records",
			Long: `Calibrate a standard epsilon-DP mechanism so that it is epsilon-BDP (Bayesian
differential privacy) on correlated data, following Guerra-Balboa's thesis,
Chapter 6.`,
			Example: `  tracepriv bdp calibrate --model groups --epsilon 1 --m 3
  tracepriv bdp calibrate --model markov --epsilon 2 --gamma 1.2 --n 100 --json`,
		}
		cmd.AddCommand(bdpCalibrateCmd(env))
		return cmd
	})
}

func bdpCalibrateCmd(env *cli.Env) *cobra.Command {
	var (
		model, covFile, transFile string
		eps, rho, gamma, tol      float64
		m, n                      int
		exact                     bool
	)
	c := &cobra.Command{
		Use:   "calibrate --model gaussian|markov|groups --epsilon E [model flags]",
		Short: "Per-record DP budget tau for a BDP target epsilon",
		Long: `Print tau, the DP parameter to give a standard mechanism so that it is
epsilon-BDP under a correlation model, and factor = epsilon/tau, by how much
the noise (and the error) grows over plain epsilon-DP.

  groups    at most --m correlated records per independent group (Thm 6.3):
            tau = epsilon/m, for any epsilon-DP mechanism.
  gaussian  Gaussian data with at most --m correlated records and
            |correlation| <= --rho, or a covariance matrix --cov FILE (Thm 6.14):
            tau = epsilon/h(m, rho), for clipped Laplace-type mechanisms.
            The general bound for the same m is also tried; the larger tau wins.
            With --cov and --exact, Lemma 6.10 is also evaluated exactly on
            the matrix (an extension, not a result stated in the thesis).
  markov    a stationary Markov chain with --gamma = max P / min P, or a
            transition matrix --transition FILE (Thm 6.20): tau = epsilon - 4 ln
            gamma, for any epsilon-DP mechanism. With --n (the chain length) the
            general bound tau = epsilon/n is also tried, so targets below the
            floor 4 ln gamma still get a budget.

Matrix files hold one row per line, values separated by commas or spaces;
lines starting with # are comments. A covariance must be symmetric to --tol
times its largest entry.`,
		Example: `  tracepriv bdp calibrate --model groups --epsilon 1 --m 3
  tracepriv bdp calibrate --model gaussian --epsilon 1 --m 5 --rho 0.2
  tracepriv bdp calibrate --model markov --epsilon 2 --gamma 1.2 --n 100 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			var models []bdp.Calibrator
			var exactModel bdp.Calibrator
			switch model {
			case "groups":
				if !f.Changed("m") {
					return usageErrorf("--model groups needs --m")
				}
				models = append(models, bdp.Groups{M: m})
			case "gaussian":
				var g bdp.Gaussian
				switch {
				case f.Changed("cov") && (f.Changed("rho") || f.Changed("m")):
					return usageErrorf("give either --cov or --m and --rho, not both")
				case f.Changed("cov"):
					m, err := readMatrix(covFile)
					if err != nil {
						return fmt.Errorf("--cov: %w", err)
					}
					sym, err := m.Symmetric(tol)
					if err != nil {
						return fmt.Errorf("--cov: %w", err)
					}
					if g, err = bdp.GaussianFromCovariance(sym, tol); err != nil {
						return fmt.Errorf("%s: %w", covFile, err)
					}
					if exact {
						h, err := bdp.CovarianceFactor(sym, tol)
						if err != nil {
							return fmt.Errorf("%s: %w", covFile, err)
						}
						exactModel = bdp.Scaled{Label: "gaussian-exact(Lemma 6.10, extension)", H: h}
					}
				case f.Changed("m") && f.Changed("rho"):
					// Out-of-range input is an error; a valid ρ with
					// ρ(m−2) ≥ 1 only makes the Gaussian bound inapplicable,
					// and the general bound answers.
					if m < 1 || !(rho >= 0 && rho < 1) {
						return usageErrorf("--m must be at least 1 and --rho in [0, 1), got %d and %v", m, rho)
					}
					g = bdp.Gaussian{M: m, Rho: rho}
				default:
					return usageErrorf("--model gaussian needs --m and --rho, or --cov FILE")
				}
				if exact && exactModel == nil {
					return usageErrorf("--exact needs --cov FILE")
				}
				models = append(models, g, bdp.Groups{M: g.M})
				if exactModel != nil {
					models = append(models, exactModel)
				}
			case "markov":
				var mk bdp.Markov
				switch {
				case f.Changed("transition") && f.Changed("gamma"):
					return usageErrorf("give either --transition or --gamma, not both")
				case f.Changed("transition"):
					m, err := readMatrix(transFile)
					if err == nil {
						err = m.Square(0)
					}
					if err != nil {
						return fmt.Errorf("--transition: %w", err)
					}
					if mk, err = bdp.NewMarkov(m.Rows, tol); err != nil {
						return fmt.Errorf("%s: %w", transFile, err)
					}
				case f.Changed("gamma"):
					mk = bdp.Markov{Gamma: gamma}
				default:
					return usageErrorf("--model markov needs --gamma or --transition FILE")
				}
				models = append(models, mk)
				if f.Changed("n") {
					models = append(models, bdp.Groups{M: n})
				}
			default:
				return usageErrorf("unknown --model %q (want gaussian, markov or groups)", model)
			}
			res, err := bdp.BestOf(eps, models...)
			if err != nil {
				return err
			}
			return env.Emit(res, func(w io.Writer) error {
				fmt.Fprintf(w, "tau %.6g  factor %.6g  (epsilon %g, model %s)\n", res.Tau, res.Factor, res.Epsilon, res.Model)
				for _, c := range res.Candidates {
					if c.Error != "" {
						fmt.Fprintf(w, "  %s: not applicable: %s\n", c.Model, c.Error)
					} else {
						fmt.Fprintf(w, "  %s: tau %.6g\n", c.Model, c.Tau)
					}
				}
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&model, "model", "", "gaussian, markov or groups")
	fl.Float64Var(&eps, "epsilon", 0, "BDP target epsilon")
	fl.IntVar(&m, "m", 0, "largest number of correlated records (groups, gaussian)")
	fl.Float64Var(&rho, "rho", 0, "largest absolute correlation (gaussian)")
	fl.StringVar(&covFile, "cov", "", "covariance matrix file (gaussian)")
	fl.Float64Var(&gamma, "gamma", 0, "max P / min P of the transition matrix (markov)")
	fl.StringVar(&transFile, "transition", "", "transition matrix file, rows = from-state (markov)")
	fl.IntVar(&n, "n", 0, "number of records in the chain, for the general-bound fallback (markov)")
	fl.BoolVar(&exact, "exact", false, "with --cov, also evaluate Lemma 6.10 exactly on the matrix (an extension of the thesis; never looser than Thm 6.14)")
	fl.Float64Var(&tol, "tol", matfile.DefaultTol, "tolerance for row sums, the constant diagonal and symmetry (relative to the largest entry)")
	_ = c.MarkFlagRequired("model")
	_ = c.MarkFlagRequired("epsilon")
	return c
}

// readMatrix reads a matrix file (internal/matfile's format), with the
// command line's messages for a missing or unreadable file.
func readMatrix(path string) (*matfile.Matrix, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return matfile.Read(f, path)
}
