package cli

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// GeoIndFlags are the session configuration flags shared by query and
// sanitize.
type GeoIndFlags struct {
	mechanism, Manager, predictor, origin string
	epsStar, radius, epsilon              float64
	Rate, Accuracy, eta, gamma, pr0       float64
	maxSpeedKmh, grid                     float64
	// flags is the set Add registered on, to tell a flag given as 0 from
	// one left at its default.
	flags *pflag.FlagSet
}

// IsGeoIndConfigFlag reports whether name is one of the configuration
// flags of GeoIndFlags: a query on an existing session refuses them, since
// its configuration is sealed in the state.
func IsGeoIndConfigFlag(name string) bool {
	var g GeoIndFlags
	f := pflag.NewFlagSet("geoind", pflag.ContinueOnError)
	g.Add(f, false)
	return f.Lookup(name) != nil
}

// add registers the flags; planned says whether the command knows its
// queries in advance (sanitize), where the planned manager is the default.
func (g *GeoIndFlags) Add(f *pflag.FlagSet, planned bool) {
	g.flags = f
	f.StringVar(&g.mechanism, "mechanism", string(geoind.MechanismPredictive), "pm (predictive) or im (independent noise)")
	if planned {
		f.StringVar(&g.Manager, "manager", string(geoind.ManagerPlanned), "budget manager: planned (each person's budget spread over their points, covering all of them), fixed-rate (--rate per query) or fixed-utility (--accuracy per query); --rate or --accuracy alone choose their manager")
	} else {
		f.StringVar(&g.Manager, "manager", string(geoind.ManagerFixedRate), "budget manager: fixed-rate (--rate per query) or fixed-utility (--accuracy per query); --rate or --accuracy alone choose their manager")
	}
	f.StringVar(&g.predictor, "predictor", string(geoind.PredictorParrot), "prediction function: parrot or linear")
	f.StringVar(&g.origin, "origin", "", "public origin LAT,LON of the tangent plane and its grid (required): a point chosen without looking at the data, e.g. the city centre")
	f.Float64Var(&g.epsStar, "eps-star", math.Ln10, "privacy level ε* within --radius")
	f.Float64Var(&g.radius, "radius", 100, "protection radius r* in metres (ε = ε*/r*)")
	f.Float64Var(&g.epsilon, "epsilon", 0, "global budget ε per metre (overrides --eps-star/--radius)")
	f.Float64Var(&g.Rate, "rate", 0.033, "fixed-rate: budget per query as a fraction of ε, spent on average (the points it covers depend on how predictable the trace is)")
	f.Float64Var(&g.Accuracy, "accuracy", 3000, "fixed-utility: accuracy α(0.9) in metres")
	f.Float64Var(&g.eta, "eta", 0.5, "η: scale of the predictive accuracy bound, eq. (10)")
	f.Float64Var(&g.gamma, "gamma", 0.8, "γ: test noise / threshold ratio, eq. (11)")
	f.Float64Var(&g.pr0, "pr0", 0.5, "initial prediction-rate estimate")
	f.Float64Var(&g.maxSpeedKmh, "max-speed", 0, "skip the test when max-speed (km/h) × time since the last hard point <= threshold (0: off)")
	f.Float64Var(&g.grid, "grid", geoind.DefaultGrid, "output grid step in metres (> 0; continuous output is refused)")
}

// errNoOrigin explains why the origin is not derived from the data.
var errNoOrigin error = &FlagError{Err: errors.New(`--origin LAT,LON is required: the tangent plane, and with it the output
grid, must be anchored at a public point chosen without looking at the data (an origin
derived from the first point would leak that point's position); use e.g. the centre of
the city, --origin 39.9042,116.4074 for Beijing`)}

// config builds the session configuration from public flags only.
func (g *GeoIndFlags) Config() (geoind.Config, error) {
	if g.origin == "" {
		return geoind.Config{}, errNoOrigin
	}
	p, err := geo.ParseLatLon(g.origin)
	if err != nil {
		return geoind.Config{}, usagef("--origin: %w", err)
	}
	if err := g.checkGiven(); err != nil {
		return geoind.Config{}, err
	}
	eps := g.epsilon
	if eps == 0 {
		if !(g.epsStar > 0) || !(g.radius > 0) || math.IsInf(g.epsStar, 0) || math.IsInf(g.radius, 0) {
			return geoind.Config{}, usagef("--eps-star %g and --radius %g: want both finite and > 0", g.epsStar, g.radius)
		}
		eps = g.epsStar / g.radius
	}
	cfg := geoind.Config{
		Mechanism: geoind.MechanismKind(g.mechanism), Manager: geoind.ManagerKind(g.Manager), Predictor: geoind.PredictorKind(g.predictor),
		Params: geoind.Params{
			Epsilon: eps, Eta: g.eta, Gamma: g.gamma, PR0: g.pr0,
			MaxSpeed: g.maxSpeedKmh / 3.6,
		},
		Rate: g.Rate * eps, Accuracy: g.Accuracy,
		Origin: p, Noise: geoind.PlanarLaplace{Grid: g.grid},
	}
	check := cfg
	if g.Manager == "planned" {
		// Each person's plan is checked with their points once they are
		// read; here the rest of the configuration, as a plan of one.
		cfg.Rate, cfg.Accuracy = 0, 0
		check = cfg
		check.Queries = 1
	}
	if err := check.Validate(); err != nil {
		return geoind.Config{}, g.FlagError(err)
	}
	return cfg, nil
}

// checkGiven refuses what the library would read as "use the default":
// --epsilon, --eta or --gamma given as 0 (an --epsilon 0 released at
// --eps-star/--radius, far from the perfect privacy it asks for), and
// --epsilon beside --eps-star or --radius, which it would override.
func (g *GeoIndFlags) checkGiven() error {
	if g.flags == nil {
		return nil
	}
	for _, name := range []string{"epsilon", "eta", "gamma"} {
		if v, err := g.flags.GetFloat64(name); err == nil && g.flags.Changed(name) && v == 0 {
			return usagef("--%s 0: want a value above 0 (%s)", name, g.flags.Lookup(name).Usage)
		}
	}
	if g.flags.Changed("epsilon") {
		for _, name := range []string{"eps-star", "radius"} {
			if g.flags.Changed(name) {
				return usagef("--epsilon and --%s contradict each other: --epsilon is the budget per metre (ε*/r*); give --epsilon alone, or --eps-star and --radius", name)
			}
		}
	}
	return nil
}

// ChooseManager applies the rule for --manager of sanitize and query:
// --rate alone means fixed-rate and --accuracy alone fixed-utility (as
// before the planned default); with --manager, a flag of another manager
// is refused.
func (g *GeoIndFlags) ChooseManager(f *pflag.FlagSet) error {
	rate, acc := f.Changed("rate"), f.Changed("accuracy")
	if !f.Changed("manager") {
		switch {
		case rate && acc:
			return usagef("--rate and --accuracy belong to different managers (fixed-rate, fixed-utility): give one, or --manager")
		case rate:
			g.Manager = "fixed-rate"
		case acc:
			g.Manager = "fixed-utility"
		}
		return nil
	}
	switch {
	case rate && g.Manager != "fixed-rate":
		return usagef("--rate applies to --manager fixed-rate, not %s", g.Manager)
	case acc && g.Manager != "fixed-utility":
		return usagef("--accuracy applies to --manager fixed-utility, not %s", g.Manager)
	}
	return nil
}

// flagError names the flags behind a configuration error.
func (g *GeoIndFlags) FlagError(err error) error {
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
		flags = fmt.Sprintf("--rate %g with %s", g.Rate, budget)
	case "accuracy":
		flags = fmt.Sprintf("--accuracy %g", g.Accuracy)
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

// Plural is "1 one" or "n many".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// MaxPoints is the most points of one person of plans.
func MaxPoints(plans []geoind.PersonPlan) int {
	n := 0
	for _, p := range plans {
		n = max(n, p.Points)
	}
	return n
}

// plannedDefault is cfg with the default planned manager instead of the
// one the flags chose.
func plannedDefault(cfg geoind.Config) geoind.Config {
	cfg.Manager, cfg.Rate, cfg.Accuracy = "planned", 0, 0
	return cfg
}

// GeoIndHints is what the hints of geoind sanitize are computed from:
// the configuration, the traces as read and as thinned, the person rule
// (which applies to both) and the flags.
type GeoIndHints struct {
	Cfg          geoind.Config
	Read, Traces []*trace.Trace
	Person       func(*trace.Trace) string
	Every        time.Duration
	MaxError     float64
}

// thinningHint says which --every lets the planned manager cover every
// point within --max-error, from the read traces' timestamps.
func thinningHint(hc GeoIndHints) string {
	d, plans, ok := geoind.SuggestThinning(plannedDefault(hc.Cfg), hc.Read, hc.Person, hc.Every, hc.MaxError)
	if !ok {
		return "no thinning is enough: even one point a day per person costs more than this budget allows"
	}
	w := geoind.WorstPlan(plans)
	return fmt.Sprintf("--every %v (up to %d points per person, expected error %s per point)", d, MaxPoints(plans), geoind.Metres(w.ExpectedErrorM))
}

// planError explains a plan the configuration cannot release.
func (g *GeoIndFlags) PlanError(err error, hc GeoIndHints) error {
	var pe *geoind.PlanError
	if !errors.As(err, &pe) || g.Manager != "planned" {
		return g.FlagError(err)
	}
	// Refused before anything was drawn or charged.
	return &RefusedError{Err: fmt.Errorf("%s: one budget ε = %.4g per metre cannot cover %d points: the widest noise the plan may draw is beyond what the tangent plane can represent (%v).\nThin the traces first: %s; or raise the budget (--eps-star, a smaller --radius, or --epsilon)",
		pe.Person, hc.Cfg.Params.Epsilon, pe.Points, pe.Err, thinningHint(hc))}
}

// tooNoisy explains a plan whose expected error exceeds --max-error.
func TooNoisy(w geoind.PersonPlan, hc GeoIndHints) string {
	return fmt.Sprintf("%s: one budget ε = %.4g per metre spread over %d points costs an expected error of %s per point, more than --max-error %g m; nothing was drawn.\nThin the traces first: %s; or raise the budget (--eps-star, a smaller --radius, or --epsilon); or --max-error 0 to release at this error",
		w.Person, hc.Cfg.Params.Epsilon, w.Points, geoind.Metres(w.ExpectedErrorM), hc.MaxError, thinningHint(hc))
}

// coverageHint says what covers every point when a fixed-rate or
// fixed-utility budget ran out: the default planned manager, at the
// current thinning if its plan is within bounds, else with the --every
// that brings it within bounds.
func (g *GeoIndFlags) CoverageHint(hc GeoIndHints) string {
	h := fmt.Sprintf("each query spends about --rate %g of ε (fixed-rate)", g.Rate)
	flags := "--rate"
	if g.Manager == "fixed-utility" {
		h = fmt.Sprintf("each query costs the noise of --accuracy %g m (fixed-utility)", g.Accuracy)
		flags = "--manager fixed-utility --accuracy"
	}
	h += ", and the points it covers depend on how predictable the trace is. To cover every point, drop " + flags
	plans, err := geoind.PlanByPerson(plannedDefault(hc.Cfg), hc.Traces, hc.Person)
	if w := geoind.WorstPlan(plans); err == nil && (hc.MaxError == 0 || w.ExpectedErrorM <= hc.MaxError) {
		return h + fmt.Sprintf(": the default (--manager planned) plans each person's budget over their points and covers all of them, at an expected error of %s per point", geoind.Metres(w.ExpectedErrorM))
	}
	return h + fmt.Sprintf(" and thin the traces: the default (--manager planned) with %s covers all of them", thinningHint(hc))
}

// PartialError explains a fixed-rate or fixed-utility release whose
// budget ran out before some people's last point.
func (g *GeoIndFlags) PartialError(partial []geoind.PersonRelease, people int, hc GeoIndHints) error {
	worst := partial[0]
	for _, p := range partial {
		if p.Covered < worst.Covered {
			worst = p
		}
	}
	covered := worst.CoveredUntil.Sub(worst.First)
	if worst.Released == 0 {
		covered = 0
	}
	return fmt.Errorf(`geoind sanitize: the budget ran out before the last point for %d of %d people; %s got %d of %d points (%.1f %%, the first %v of %v); nothing was written.
One budget ε per person pays for all their points: %s; or pass --allow-partial to write the covered points only`,
		len(partial), people, worst.Person, worst.Released, worst.Points, 100*worst.Covered, covered, worst.Last.Sub(worst.First), g.CoverageHint(hc))
}
