package main

import (
	"errors"
	"fmt"
	"github.com/tracepriv/tracepriv/internal/infile"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/bdp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/matfile"
	"github.com/tracepriv/tracepriv/param"
)

func init() { register(newBDPCmd) }

func newBDPCmd(env *cli.Env) *cobra.Command {
	long, example := help("bdp")
	cmd := &cobra.Command{
		Use:     "bdp",
		Short:   "Bayesian-DP calibration for correlated records",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newBDPCalibrateCmd(env))
	return cmd
}

// bdpCalibrateCmd is "tracepriv bdp calibrate".
type bdpCalibrateCmd struct {
	env                       *cli.Env
	model, covFile, transFile string
	eps, rho, gamma, tol      float64
	m, n                      int
	exact                     bool
}

func newBDPCalibrateCmd(env *cli.Env) *cobra.Command {
	c := &bdpCalibrateCmd{env: env}
	long, example := help("bdp calibrate")
	cmd := &cobra.Command{
		Use:     "calibrate --model gaussian|markov|groups --epsilon E [model flags]",
		Short:   "Per-record DP budget tau for a BDP target epsilon",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.model, "model", "", "gaussian, markov or groups")
	fl.Float64Var(&c.eps, "epsilon", 0, "BDP target epsilon")
	fl.IntVar(&c.m, "m", 0, "largest number of correlated records (groups, gaussian)")
	fl.Float64Var(&c.rho, "rho", 0, "largest absolute correlation (gaussian)")
	fl.StringVar(&c.covFile, "cov", "", "covariance matrix file (gaussian)")
	fl.Float64Var(&c.gamma, "gamma", 0, "max P / min P of the transition matrix (markov)")
	fl.StringVar(&c.transFile, "transition", "", "transition matrix file, rows = from-state (markov)")
	fl.IntVar(&c.n, "n", 0, "number of records in the chain, for the general-bound fallback (markov)")
	fl.BoolVar(&c.exact, "exact", false, "with --cov, also evaluate Lemma 6.10 exactly on the matrix (an extension of the thesis; never looser than Thm 6.14)")
	fl.Float64Var(&c.tol, "tol", matfile.DefaultTol, "tolerance for row sums, the constant diagonal and symmetry (relative to the largest entry)")
	_ = cmd.MarkFlagRequired("model")
	_ = cmd.MarkFlagRequired("epsilon")
	return cmd
}

func (c *bdpCalibrateCmd) run(f *pflag.FlagSet) error {
	var (
		models []bdp.Calibrator
		err    error
	)
	switch c.model {
	case "groups":
		if !f.Changed("m") {
			return usageErrorf("--model groups needs --m")
		}
		models = append(models, bdp.Groups{M: c.m})
	case "gaussian":
		models, err = c.gaussian(f)
	case "markov":
		models, err = c.markov(f)
	default:
		return usageErrorf("unknown --model %q (want gaussian, markov or groups)", c.model)
	}
	if err != nil {
		return err
	}
	res, err := bdp.BestOf(c.eps, models...)
	if err != nil {
		return err
	}
	return c.env.Emit(res, res.WriteText)
}

// gaussian returns the calibrators of --model gaussian: Theorem 6.14, the
// general bound for the same m, and with --exact Lemma 6.10 on the matrix.
func (c *bdpCalibrateCmd) gaussian(f *pflag.FlagSet) ([]bdp.Calibrator, error) {
	var (
		g          bdp.Gaussian
		exactModel bdp.Calibrator
	)
	switch {
	case f.Changed("cov") && (f.Changed("rho") || f.Changed("m")):
		return nil, usageErrorf("give either --cov or --m and --rho, not both")
	case f.Changed("cov"):
		m, err := readMatrix(c.covFile)
		if err != nil {
			return nil, fmt.Errorf("--cov: %w", err)
		}
		sym, err := m.Symmetric(c.tol)
		if err != nil {
			return nil, fmt.Errorf("--cov: %w", err)
		}
		if g, err = bdp.GaussianFromCovariance(sym, c.tol); err != nil {
			if errors.Is(err, param.ErrInvalid) {
				return nil, fmt.Errorf("%s: %w", c.covFile, err)
			}
			// The matrix read is not one the bound takes: bad input.
			return nil, fmt.Errorf("--cov: %w", &matfile.Error{File: c.covFile, Msg: err.Error()})
		}
		if c.exact {
			h, err := bdp.CovarianceFactor(sym, c.tol)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.covFile, err)
			}
			exactModel = bdp.Scaled{Label: "gaussian-exact(Lemma 6.10, extension)", H: h}
		}
	case f.Changed("m") && f.Changed("rho"):
		// Out-of-range input is an error; a valid ρ with ρ(m−2) ≥ 1 only
		// makes the Gaussian bound inapplicable, and the general bound
		// answers.
		if c.m < 1 || !(c.rho >= 0 && c.rho < 1) {
			return nil, usageErrorf("--m must be at least 1 and --rho in [0, 1), got %d and %v", c.m, c.rho)
		}
		g = bdp.Gaussian{M: c.m, Rho: c.rho}
	default:
		return nil, usageErrorf("--model gaussian needs --m and --rho, or --cov FILE")
	}
	if c.exact && exactModel == nil {
		return nil, usageErrorf("--exact needs --cov FILE")
	}
	models := []bdp.Calibrator{g, bdp.Groups{M: g.M}}
	if exactModel != nil {
		models = append(models, exactModel)
	}
	return models, nil
}

// markov returns the calibrators of --model markov: Theorem 6.20, and with
// --n the general bound.
func (c *bdpCalibrateCmd) markov(f *pflag.FlagSet) ([]bdp.Calibrator, error) {
	var mk bdp.Markov
	switch {
	case f.Changed("transition") && f.Changed("gamma"):
		return nil, usageErrorf("give either --transition or --gamma, not both")
	case f.Changed("transition"):
		m, err := readMatrix(c.transFile)
		if err == nil {
			err = m.Square(0)
		}
		if err != nil {
			return nil, fmt.Errorf("--transition: %w", err)
		}
		if mk, err = bdp.NewMarkov(m.Rows, c.tol); err != nil {
			return nil, fmt.Errorf("%s: %w", c.transFile, err)
		}
	case f.Changed("gamma"):
		mk = bdp.Markov{Gamma: c.gamma}
	default:
		return nil, usageErrorf("--model markov needs --gamma or --transition FILE")
	}
	models := []bdp.Calibrator{mk}
	if f.Changed("n") {
		models = append(models, bdp.Groups{M: c.n})
	}
	return models, nil
}

// readMatrix reads a matrix file (internal/matfile's format), with the
// command line's messages for a missing or unreadable file.
func readMatrix(path string) (*matfile.Matrix, error) {
	f, err := infile.OpenNamed(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return matfile.Read(f, path)
}
