package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/risk"
)

// radReport is the JSON of "risk rad".
type radReport struct {
	Mechanism string   `json:"mechanism"`
	M         int      `json:"m"`
	Epsilon   *float64 `json:"epsilon,omitempty"`
	Delta     *float64 `json:"delta,omitempty"`
	Sigma     *float64 `json:"sigma,omitempty"`
	RAD       float64  `json:"rad"`
	Bound     string   `json:"bound"`
	// TVBound is Theorem 5.2's black-box bound at the same parameters, for
	// comparison (any auxiliary knowledge).
	TVBound float64 `json:"tv_bound"`
}

// calibrateReport is the JSON of "risk calibrate".
type calibrateReport struct {
	Mechanism string   `json:"mechanism"`
	M         int      `json:"m"`
	Risk      float64  `json:"risk"`
	Epsilon   *float64 `json:"epsilon,omitempty"`
	Sigma     *float64 `json:"sigma,omitempty"`
	Steps     int      `json:"steps,omitempty"`
	Bound     string   `json:"bound"`
}

func ptr(v float64) *float64 { return &v }

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "risk",
			Short: "Reconstruction-advantage (RAD) risk bounds and calibration",
			Long: `Reconstruction advantage (RAD, Guerra-Balboa's thesis, Chapter 5) is how much
better an informed adversary reconstructs a target's value from a release than
by guessing from the prior. All bounds assume a uniform prior over m candidate
values, no auxiliary knowledge of the target and exact reconstruction.`,
			Example: `  tracepriv risk rad --mechanism laplace --m 10 --epsilon 1
  tracepriv risk calibrate --mechanism gaussian --risk 0.05 --m 10`,
		}
		cmd.AddCommand(riskRadCmd(env), riskCalibrateCmd(env))
		return cmd
	})
}

func riskRadCmd(env *cli.Env) *cobra.Command {
	var (
		mech              string
		eps, delta, sigma float64
		m, steps          int
	)
	c := &cobra.Command{
		Use:   "rad --mechanism laplace|gaussian|grr|oue|ss|dpsgd --m M (--epsilon E | --sigma S)",
		Short: "Print the exact RAD of a mechanism",
		Long: `Print the exact RAD (Theorem 5.3) of a mechanism under a uniform prior on m
values. For laplace and gaussian it is the worst case over m query values in a
range of one sensitivity: (A.18) ((m-1)/m)(1 - exp(-eps/(2(m-1)))) and (A.12)
((m-1)/m)(2 Phi(1/(2 sigma (m-1))) - 1). A gaussian mechanism is given by
--sigma (in units of the sensitivity) or by --epsilon and --delta, which give
the analytic-Gaussian sigma. dpsgd is full-batch DP-SGD with noise multiplier
--sigma over --steps steps (Theorem 5.11).`,
		Example: `  tracepriv risk rad --mechanism laplace --m 10 --epsilon 1
  tracepriv risk rad --mechanism gaussian --m 10 --sigma 2 --json
  tracepriv risk rad --mechanism dpsgd --m 10 --sigma 1 --steps 100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			rep := radReport{Mechanism: mech, M: m}
			var err error
			needEps := func() error {
				if !f.Changed("epsilon") {
					return fmt.Errorf("--epsilon is required for --mechanism %s", mech)
				}
				if f.Changed("sigma") {
					return fmt.Errorf("--sigma does not apply to --mechanism %s", mech)
				}
				rep.Epsilon = ptr(eps)
				return nil
			}
			switch mech {
			case "laplace", "grr", "oue", "ss":
				if err := needEps(); err != nil {
					return err
				}
				tv, err := risk.EpsDeltaBound(eps, 0, m)
				if err != nil {
					return err
				}
				rep.TVBound = tv
				switch mech {
				case "laplace":
					rep.RAD, err = risk.LaplaceUnitRange(eps, m)
					rep.Bound = "Theorem 5.3, worst case over m values in a unit range (A.18)"
					rep.TVBound = risk.TVBound(risk.LaplaceTV(eps), 1/float64(m))
				case "grr":
					rep.RAD, err = risk.GRR(eps, m)
					rep.Bound = "Theorem 5.3 (Example 5.4)"
				case "oue":
					rep.RAD, err = risk.OUE(eps, m)
					rep.Bound = "Theorem 5.3 (Example A.17)"
				case "ss":
					rep.RAD, err = risk.SubsetSelection(eps, m)
					rep.Bound = "Theorem 5.3 (Example A.18)"
				}
			case "gaussian":
				switch {
				case f.Changed("sigma") && f.Changed("epsilon"):
					return errors.New("give either --sigma or --epsilon (with --delta), not both")
				case f.Changed("epsilon"):
					rep.Epsilon, rep.Delta = ptr(eps), ptr(delta)
					if sigma, err = risk.GaussianSigma(eps, delta, 1); err != nil {
						return err
					}
				case !f.Changed("sigma"):
					return errors.New("--sigma or --epsilon is required for --mechanism gaussian")
				}
				rep.Sigma = ptr(sigma)
				rep.RAD, err = risk.GaussianUnitRange(sigma, m)
				rep.Bound = "Theorem 5.3, worst case over m values in a unit range (A.12)"
				if err == nil {
					rep.TVBound = risk.TVBound(risk.GDPTV(1/sigma), 1/float64(m))
				}
			case "dpsgd":
				if !f.Changed("sigma") || f.Changed("epsilon") {
					return errors.New("--mechanism dpsgd takes --sigma (noise multiplier) and --steps, not --epsilon")
				}
				rep.Sigma = ptr(sigma)
				rep.RAD, err = risk.DPSGD(sigma, steps, m)
				rep.Bound = fmt.Sprintf("Theorem 5.11 for full-batch DP-SGD, %d steps (Example 5.17)", steps)
				if err == nil {
					rep.TVBound, err = risk.DPSGDTV(sigma, steps, m)
				}
			default:
				return fmt.Errorf("unknown --mechanism %q (want laplace, gaussian, grr, oue, ss or dpsgd)", mech)
			}
			if err != nil {
				return err
			}
			return env.Emit(rep, func(w io.Writer) error {
				if rep.Sigma != nil {
					fmt.Fprintf(w, "sigma %.6g\n", *rep.Sigma)
				}
				_, err := fmt.Fprintf(w, "RAD %.6g: %s\nblack-box Theorem 5.2 bound %.6g\n", rep.RAD, rep.Bound, rep.TVBound)
				return err
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&mech, "mechanism", "", "laplace, gaussian, grr, oue, ss (subset selection) or dpsgd")
	fl.Float64Var(&eps, "epsilon", 0, "privacy parameter epsilon")
	fl.Float64Var(&delta, "delta", 1e-5, "delta for --mechanism gaussian given by --epsilon")
	fl.Float64Var(&sigma, "sigma", 0, "Gaussian noise in units of the sensitivity (gaussian), or the DP-SGD noise multiplier")
	fl.IntVar(&m, "m", 0, "number of candidate values (uniform prior)")
	fl.IntVar(&steps, "steps", 1, "DP-SGD steps (dpsgd)")
	_ = c.MarkFlagRequired("mechanism")
	_ = c.MarkFlagRequired("m")
	return c
}

func riskCalibrateCmd(env *cli.Env) *cobra.Command {
	var (
		mech     string
		gamma    float64
		m, steps int
	)
	c := &cobra.Command{
		Use:   "calibrate --mechanism laplace|gaussian|grr|oue|ss|dpsgd --risk R --m M",
		Short: "Largest epsilon (or smallest sigma) whose RAD stays below a risk",
		Long: `Invert the exact RAD bound of "risk rad": print the largest epsilon (laplace,
grr, oue, ss) or the smallest sigma (gaussian, in units of the sensitivity;
dpsgd, the noise multiplier over --steps steps) for which the RAD under a
uniform prior on m values is at most --risk.`,
		Example: `  tracepriv risk calibrate --mechanism laplace --risk 0.05 --m 10
  tracepriv risk calibrate --mechanism gaussian --risk 0.05 --m 10 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := calibrateReport{Mechanism: mech, M: m, Risk: gamma}
			var v float64
			var err error
			switch mech {
			case "laplace":
				v, err = risk.CalibrateLaplace(gamma, m)
				rep.Bound = "A.18"
			case "grr":
				v, err = risk.CalibrateGRR(gamma, m)
				rep.Bound = "Example 5.4"
			case "oue":
				v, err = risk.CalibrateOUE(gamma, m)
				rep.Bound = "Example A.17 (bisection)"
			case "ss":
				v, err = risk.CalibrateSubsetSelection(gamma, m)
				rep.Bound = "Example A.18 (bisection)"
			case "gaussian":
				v, err = risk.CalibrateGaussian(gamma, m)
				rep.Bound = "A.12"
			case "dpsgd":
				v, err = risk.CalibrateDPSGD(gamma, steps, m)
				rep.Bound = "Theorem 5.11 (Example 5.17)"
				rep.Steps = steps
			default:
				return fmt.Errorf("unknown --mechanism %q (want laplace, gaussian, grr, oue, ss or dpsgd)", mech)
			}
			if errors.Is(err, risk.ErrUnconstrained) {
				return fmt.Errorf("--risk %v: %w", gamma, err)
			}
			if err != nil {
				return err
			}
			name := "epsilon"
			if mech == "gaussian" || mech == "dpsgd" {
				rep.Sigma, name = ptr(v), "sigma"
			} else {
				rep.Epsilon = ptr(v)
			}
			return env.Emit(rep, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s %.6g: RAD ≤ %g over %d values, %s\n", name, v, gamma, m, rep.Bound)
				return err
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&mech, "mechanism", "", "laplace, gaussian, grr, oue, ss or dpsgd")
	fl.Float64Var(&gamma, "risk", 0, "accepted RAD, in (0, 1)")
	fl.IntVar(&m, "m", 0, "number of candidate values (uniform prior)")
	fl.IntVar(&steps, "steps", 1, "DP-SGD steps (dpsgd)")
	_ = c.MarkFlagRequired("mechanism")
	_ = c.MarkFlagRequired("risk")
	_ = c.MarkFlagRequired("m")
	return c
}
