package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/param"
)

// geoindFlags are the session configuration flags shared by query and
// sanitize.
type geoindFlags struct {
	mechanism, manager, predictor, origin string
	epsStar, radius, epsilon              float64
	rate, accuracy, eta, gamma, pr0       float64
	maxSpeedKmh, grid                     float64
}

// isGeoindConfigFlag reports whether name is one of the configuration
// flags of geoindFlags: a query on an existing session refuses them, since
// its configuration is sealed in the state.
func isGeoindConfigFlag(name string) bool {
	var g geoindFlags
	f := pflag.NewFlagSet("geoind", pflag.ContinueOnError)
	g.add(f, false)
	return f.Lookup(name) != nil
}

// add registers the flags; planned says whether the command knows its
// queries in advance (sanitize), where the planned manager is the default.
func (g *geoindFlags) add(f *pflag.FlagSet, planned bool) {
	f.StringVar(&g.mechanism, "mechanism", string(geoind.MechanismPredictive), "pm (predictive) or im (independent noise)")
	if planned {
		f.StringVar(&g.manager, "manager", string(geoind.ManagerPlanned), "budget manager: planned (each person's budget spread over their points, covering all of them), fixed-rate (--rate per query) or fixed-utility (--accuracy per query); --rate or --accuracy alone choose their manager")
	} else {
		f.StringVar(&g.manager, "manager", string(geoind.ManagerFixedRate), "budget manager: fixed-rate or fixed-utility")
	}
	f.StringVar(&g.predictor, "predictor", string(geoind.PredictorParrot), "prediction function: parrot or linear")
	f.StringVar(&g.origin, "origin", "", "public origin LAT,LON of the tangent plane and its grid (required): a point chosen without looking at the data, e.g. the city centre")
	f.Float64Var(&g.epsStar, "eps-star", math.Ln10, "privacy level ε* within --radius")
	f.Float64Var(&g.radius, "radius", 100, "protection radius r* in metres (ε = ε*/r*)")
	f.Float64Var(&g.epsilon, "epsilon", 0, "global budget ε per metre (overrides --eps-star/--radius)")
	f.Float64Var(&g.rate, "rate", 0.033, "fixed-rate: budget per query as a fraction of ε, spent on average (the points it covers depend on how predictable the trace is)")
	f.Float64Var(&g.accuracy, "accuracy", 3000, "fixed-utility: accuracy α(0.9) in metres")
	f.Float64Var(&g.eta, "eta", 0.5, "η: scale of the predictive accuracy bound, eq. (10)")
	f.Float64Var(&g.gamma, "gamma", 0.8, "γ: test noise / threshold ratio, eq. (11)")
	f.Float64Var(&g.pr0, "pr0", 0.5, "initial prediction-rate estimate")
	f.Float64Var(&g.maxSpeedKmh, "max-speed", 0, "skip the test when max-speed (km/h) × time since the last hard point <= threshold (0: off)")
	f.Float64Var(&g.grid, "grid", geoind.DefaultGrid, "output grid step in metres (> 0; continuous output is refused)")
}

// errNoOrigin explains why the origin is not derived from the data.
var errNoOrigin error = &cli.FlagError{Err: errors.New(`--origin LAT,LON is required: the tangent plane, and with it the output
grid, must be anchored at a public point chosen without looking at the data (an origin
derived from the first point would leak that point's position); use e.g. the centre of
the city, --origin 39.9042,116.4074 for Beijing`)}

// config builds the session configuration from public flags only.
func (g *geoindFlags) config() (geoind.Config, error) {
	if g.origin == "" {
		return geoind.Config{}, errNoOrigin
	}
	p, err := geo.ParseLatLon(g.origin)
	if err != nil {
		return geoind.Config{}, fmt.Errorf("--origin: %w", err)
	}
	eps := g.epsilon
	if eps == 0 {
		if !(g.epsStar > 0) || !(g.radius > 0) || math.IsInf(g.epsStar, 0) || math.IsInf(g.radius, 0) {
			return geoind.Config{}, usageErrorf("--eps-star %g and --radius %g: want both finite and > 0", g.epsStar, g.radius)
		}
		eps = g.epsStar / g.radius
	}
	cfg := geoind.Config{
		Mechanism: geoind.MechanismKind(g.mechanism), Manager: geoind.ManagerKind(g.manager), Predictor: geoind.PredictorKind(g.predictor),
		Params: geoind.Params{
			Epsilon: eps, Eta: g.eta, Gamma: g.gamma, PR0: g.pr0,
			MaxSpeed: g.maxSpeedKmh / 3.6,
		},
		Rate: g.rate * eps, Accuracy: g.accuracy,
		Origin: p, Noise: geoind.PlanarLaplace{Grid: g.grid},
	}
	check := cfg
	if g.manager == "planned" {
		// Each person's plan is checked with their points once they are
		// read; here the rest of the configuration, as a plan of one.
		cfg.Rate, cfg.Accuracy = 0, 0
		check = cfg
		check.Queries = 1
	}
	if err := check.Validate(); err != nil {
		return geoind.Config{}, g.flagError(err)
	}
	return cfg, nil
}

// chooseManager applies sanitize's rule for --manager: --rate alone means
// fixed-rate and --accuracy alone fixed-utility (as before the planned
// default); with --manager, a flag of another manager is refused.
func (g *geoindFlags) chooseManager(cmd *cobra.Command) error {
	f := cmd.Flags()
	rate, acc := f.Changed("rate"), f.Changed("accuracy")
	if !f.Changed("manager") {
		switch {
		case rate && acc:
			return usageErrorf("--rate and --accuracy belong to different managers (fixed-rate, fixed-utility): give one, or --manager")
		case rate:
			g.manager = "fixed-rate"
		case acc:
			g.manager = "fixed-utility"
		}
		return nil
	}
	switch {
	case rate && g.manager != "fixed-rate":
		return usageErrorf("--rate applies to --manager fixed-rate, not %s", g.manager)
	case acc && g.manager != "fixed-utility":
		return usageErrorf("--accuracy applies to --manager fixed-utility, not %s", g.manager)
	}
	return nil
}

// flagError names the flags behind a configuration error.
func (g *geoindFlags) flagError(err error) error {
	var pe *param.Error
	if !errors.As(err, &pe) {
		return err
	}
	budget := fmt.Sprintf("--eps-star %.6g --radius %.6g (ε = %.3g per metre)", g.epsStar, g.radius, g.epsStar/g.radius)
	if g.epsilon != 0 {
		budget = fmt.Sprintf("--epsilon %g", g.epsilon)
	}
	var flags string
	switch pe.Name {
	case "epsilon":
		flags = budget
	case "rate":
		flags = fmt.Sprintf("--rate %g with %s", g.rate, budget)
	case "accuracy":
		flags = fmt.Sprintf("--accuracy %g", g.accuracy)
	case "grid":
		flags = fmt.Sprintf("--grid %g", g.grid)
	case "max_speed":
		flags = "--max-speed"
	case "queries":
		// Checked at one point per person (the template): the budget
		// itself is too small.
		flags = budget + " with --manager planned (one point)"
	default:
		flags = "--" + pe.Name
	}
	return fmt.Errorf("%s: %w", flags, err)
}

// defaultEpsPerMetre is the default budget: --eps-star ln 10 within
// --radius 100 m.
const defaultEpsPerMetre = math.Ln10 / 100

func init() { register(newGeoindCmd) }

func newGeoindCmd(env *cli.Env) *cobra.Command {
	long, example := helpMeaning("geoind", geoind.Meaning(defaultEpsPerMetre))
	cmd := &cobra.Command{
		Use:     "geoind",
		Short:   "Geo-indistinguishable location queries (planar Laplace, predictive mechanism)",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newGeoindQuantileCmd(env), newGeoindQueryCmd(env), newGeoindSanitizeCmd(env))
	return cmd
}

// geoindQuantileCmd is "tracepriv geoind quantile".
type geoindQuantileCmd struct {
	env    *cli.Env
	eps, p float64
}

func newGeoindQuantileCmd(env *cli.Env) *cobra.Command {
	c := &geoindQuantileCmd{env: env}
	_, example := help("geoind quantile")
	cmd := &cobra.Command{
		Use:     "quantile --epsilon E --p P",
		Short:   "Radius within which planar Laplace noise stays with probability P",
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	cmd.Flags().Float64Var(&c.eps, "epsilon", 0, "ε per unit of distance (e.g. 0.01 per metre)")
	cmd.Flags().Float64Var(&c.p, "p", 0.9, "probability")
	return cmd
}

func (c *geoindQuantileCmd) run() error {
	eps, p := c.eps, c.p
	if !(eps > 0) || math.IsInf(eps, 1) {
		return usageErrorf("geoind quantile: --epsilon %v: want finite and > 0", eps)
	}
	if !(p >= 0 && p < 1) {
		return usageErrorf("geoind quantile: --p %v: want in [0, 1)", p)
	}
	// Location Guard's alphaDeltaAccuracy.
	r := geoind.NoiseAccuracy(eps, p)
	res := map[string]any{"epsilon": eps, "p": p, "radius": r, "mean": geoind.ExpectedError(eps)}
	return c.env.Emit(res, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "radius %.6g (P = %g, ε = %g; mean error %.6g)\n", r, p, eps, geoind.ExpectedError(eps)); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "what it means (ε per metre): %s\n", geoind.Meaning(eps))
		return err
	})
}
