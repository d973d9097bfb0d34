package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

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
		Use:   "rad --mechanism " + mechanismList(risk.Mechanisms(), "|", "|") + " --m M (--epsilon E | --sigma S)",
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
			mc, err := lookupMechanism(mech, risk.Mechanisms())
			if err != nil {
				return err
			}
			f := cmd.Flags()
			rep := radReport{Mechanism: mech, M: m}
			p := risk.Params{M: m, Steps: steps}
			switch {
			case mc.Param == risk.ParamEpsilon:
				if !f.Changed("epsilon") {
					return usageErrorf("--epsilon is required for --mechanism %s", mech)
				}
				if f.Changed("sigma") {
					return usageErrorf("--sigma does not apply to --mechanism %s", mech)
				}
				p.Epsilon, rep.Epsilon = eps, ptr(eps)
			case mc.SigmaFor != nil:
				switch {
				case f.Changed("sigma") && f.Changed("epsilon"):
					return usageErrorf("give either --sigma or --epsilon (with --delta), not both")
				case f.Changed("epsilon"):
					rep.Epsilon, rep.Delta = ptr(eps), ptr(delta)
					if sigma, err = mc.SigmaFor(eps, delta); err != nil {
						return err
					}
				case !f.Changed("sigma"):
					return usageErrorf("--sigma or --epsilon is required for --mechanism %s", mech)
				}
				p.Sigma, rep.Sigma = sigma, ptr(sigma)
			default:
				if !f.Changed("sigma") || f.Changed("epsilon") {
					also := ""
					if mc.UsesSteps {
						also = " and --steps"
					}
					return usageErrorf("--mechanism %s takes --sigma (%s)%s, not --epsilon", mech, mc.ParamDoc, also)
				}
				p.Sigma, rep.Sigma = sigma, ptr(sigma)
			}
			res, err := mc.RAD(p)
			if err != nil {
				return err
			}
			rep.RAD, rep.Bound, rep.TVBound = res.RAD, res.Bound, res.TVBound
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
	fl.StringVar(&mech, "mechanism", "", mechanismList(risk.Mechanisms(), ", ", " or "))
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
		Use:   "calibrate --mechanism " + mechanismList(risk.Mechanisms(), "|", "|") + " --risk R --m M",
		Short: "Largest epsilon (or smallest sigma) whose RAD stays below a risk",
		Long: `Invert the exact RAD bound of "risk rad": print the largest epsilon (laplace,
grr, oue, ss) or the smallest sigma (gaussian, in units of the sensitivity;
dpsgd, the noise multiplier over --steps steps) for which the RAD under a
uniform prior on m values is at most --risk.`,
		Example: `  tracepriv risk calibrate --mechanism laplace --risk 0.05 --m 10
  tracepriv risk calibrate --mechanism gaussian --risk 0.05 --m 10 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := lookupMechanism(mech, risk.Mechanisms())
			if err != nil {
				return err
			}
			rep := calibrateReport{Mechanism: mech, M: m, Risk: gamma, Bound: mc.CalibrateBound}
			if mc.UsesSteps {
				rep.Steps = steps
			}
			v, err := mc.Calibrate(gamma, risk.Params{M: m, Steps: steps})
			if errors.Is(err, risk.ErrUnconstrained) {
				return fmt.Errorf("--risk %v: %w", gamma, err)
			}
			if err != nil {
				return err
			}
			name := mc.Param
			if name == risk.ParamSigma {
				rep.Sigma = ptr(v)
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
	fl.StringVar(&mech, "mechanism", "", mechanismList(risk.Mechanisms(), ", ", " or "))
	fl.Float64Var(&gamma, "risk", 0, "accepted RAD, in (0, 1)")
	fl.IntVar(&m, "m", 0, "number of candidate values (uniform prior)")
	fl.IntVar(&steps, "steps", 1, "DP-SGD steps (dpsgd)")
	_ = c.MarkFlagRequired("mechanism")
	_ = c.MarkFlagRequired("risk")
	_ = c.MarkFlagRequired("m")
	return c
}

// lookupMechanism finds --mechanism in a table of mechanisms.
func lookupMechanism(name string, table []risk.Mechanism) (risk.Mechanism, error) {
	for _, m := range table {
		if m.Name == name {
			return m, nil
		}
	}
	return risk.Mechanism{}, usageErrorf("unknown --mechanism %q (want %s)", name, mechanismList(table, ", ", " or "))
}

// mechanismList joins the names of a table of mechanisms: "a, b or c".
func mechanismList(table []risk.Mechanism, sep, last string) string {
	var b strings.Builder
	for i, m := range table {
		switch {
		case i == 0:
		case i == len(table)-1:
			b.WriteString(last)
		default:
			b.WriteString(sep)
		}
		b.WriteString(m.Name)
	}
	return b.String()
}
