package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

func init() { register(newRiskCmd) }

func newRiskCmd(env *cli.Env) *cobra.Command {
	long, example := help("risk")
	cmd := &cobra.Command{
		Use:     "risk",
		Short:   "Reconstruction-advantage (RAD) risk bounds and calibration",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newRiskRADCmd(env), newRiskCalibrateCmd(env))
	return cmd
}

// riskRADCmd is "tracepriv risk rad".
type riskRADCmd struct {
	env               *cli.Env
	mech              string
	eps, delta, sigma float64
	m, steps          int
}

func newRiskRADCmd(env *cli.Env) *cobra.Command {
	c := &riskRADCmd{env: env}
	long, example := help("risk rad")
	cmd := &cobra.Command{
		Use:     "rad --mechanism " + risk.JoinNames(risk.Mechanisms(), "|", "|") + " --m M (--epsilon E | --sigma S)",
		Short:   "Print the exact RAD of a mechanism",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return c.run(cmd.Flags()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.mech, "mechanism", "", risk.JoinNames(risk.Mechanisms(), ", ", " or "))
	fl.Float64Var(&c.eps, "epsilon", 0, "privacy parameter epsilon")
	fl.Float64Var(&c.delta, "delta", 1e-5, "delta for --mechanism gaussian given by --epsilon")
	fl.Float64Var(&c.sigma, "sigma", 0, "Gaussian noise in units of the sensitivity (gaussian), or the DP-SGD noise multiplier")
	fl.IntVar(&c.m, "m", 0, "number of candidate values (uniform prior)")
	fl.IntVar(&c.steps, "steps", 1, "DP-SGD steps (dpsgd)")
	_ = cmd.MarkFlagRequired("mechanism")
	_ = cmd.MarkFlagRequired("m")
	return cmd
}

func (c *riskRADCmd) run(f *pflag.FlagSet) error {
	mc, err := lookupMechanism(c.mech, risk.Mechanisms())
	if err != nil {
		return err
	}
	rep := radReport{Mechanism: c.mech, M: c.m}
	p := risk.Params{M: c.m, Steps: c.steps}
	switch {
	case mc.Param == risk.ParamEpsilon:
		if !f.Changed("epsilon") {
			return usageErrorf("--epsilon is required for --mechanism %s", c.mech)
		}
		if f.Changed("sigma") {
			return usageErrorf("--sigma does not apply to --mechanism %s", c.mech)
		}
		p.Epsilon, rep.Epsilon = c.eps, ptr(c.eps)
	case mc.SigmaFor != nil:
		switch {
		case f.Changed("sigma") && f.Changed("epsilon"):
			return usageErrorf("give either --sigma or --epsilon (with --delta), not both")
		case f.Changed("epsilon"):
			rep.Epsilon, rep.Delta = ptr(c.eps), ptr(c.delta)
			if c.sigma, err = mc.SigmaFor(c.eps, c.delta); err != nil {
				return err
			}
		case !f.Changed("sigma"):
			return usageErrorf("--sigma or --epsilon is required for --mechanism %s", c.mech)
		}
		p.Sigma, rep.Sigma = c.sigma, ptr(c.sigma)
	default:
		if !f.Changed("sigma") || f.Changed("epsilon") {
			also := ""
			if mc.UsesSteps {
				also = " and --steps"
			}
			return usageErrorf("--mechanism %s takes --sigma (%s)%s, not --epsilon", c.mech, mc.ParamDoc, also)
		}
		p.Sigma, rep.Sigma = c.sigma, ptr(c.sigma)
	}
	res, err := mc.RAD(p)
	if err != nil {
		return err
	}
	rep.RAD, rep.Bound, rep.TVBound = res.RAD, res.Bound, res.TVBound
	return c.env.Emit(rep, func(w io.Writer) error {
		if rep.Sigma != nil {
			fmt.Fprintf(w, "sigma %.6g\n", *rep.Sigma)
		}
		_, err := fmt.Fprintf(w, "RAD %.6g: %s\nblack-box Theorem 5.2 bound %.6g\n", rep.RAD, rep.Bound, rep.TVBound)
		return err
	})
}

// riskCalibrateCmd is "tracepriv risk calibrate".
type riskCalibrateCmd struct {
	env      *cli.Env
	mech     string
	gamma    float64
	m, steps int
}

func newRiskCalibrateCmd(env *cli.Env) *cobra.Command {
	c := &riskCalibrateCmd{env: env}
	long, example := help("risk calibrate")
	cmd := &cobra.Command{
		Use:     "calibrate --mechanism " + risk.JoinNames(risk.Mechanisms(), "|", "|") + " --risk R --m M",
		Short:   "Largest epsilon (or smallest sigma) whose RAD stays below a risk",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	fl := cmd.Flags()
	fl.StringVar(&c.mech, "mechanism", "", risk.JoinNames(risk.Mechanisms(), ", ", " or "))
	fl.Float64Var(&c.gamma, "risk", 0, "accepted RAD, in (0, 1)")
	fl.IntVar(&c.m, "m", 0, "number of candidate values (uniform prior)")
	fl.IntVar(&c.steps, "steps", 1, "DP-SGD steps (dpsgd)")
	_ = cmd.MarkFlagRequired("mechanism")
	_ = cmd.MarkFlagRequired("risk")
	_ = cmd.MarkFlagRequired("m")
	return cmd
}

func (c *riskCalibrateCmd) run() error {
	mc, err := lookupMechanism(c.mech, risk.Mechanisms())
	if err != nil {
		return err
	}
	rep := calibrateReport{Mechanism: c.mech, M: c.m, Risk: c.gamma, Bound: mc.CalibrateBound}
	if mc.UsesSteps {
		rep.Steps = c.steps
	}
	v, err := mc.Calibrate(c.gamma, risk.Params{M: c.m, Steps: c.steps})
	if errors.Is(err, risk.ErrUnconstrained) {
		return usageErrorf("risk calibrate: --risk %v: %w; give a smaller risk", c.gamma, err)
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
	return c.env.Emit(rep, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s %.6g: RAD ≤ %g over %d values, %s\n", name, v, c.gamma, c.m, rep.Bound)
		return err
	})
}

// lookupMechanism finds --mechanism in a table of mechanisms.
func lookupMechanism(name string, table []risk.Mechanism) (risk.Mechanism, error) {
	for _, m := range table {
		if m.Name == name {
			return m, nil
		}
	}
	return risk.Mechanism{}, usageErrorf("unknown --mechanism %q (want %s)", name, risk.JoinNames(table, ", ", " or "))
}
