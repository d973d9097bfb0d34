package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/corpus"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
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

// parseQueryTime accepts RFC 3339 or Unix seconds.
func parseQueryTime(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if sec, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(sec) && !math.IsInf(sec, 0) {
		return time.Unix(0, int64(sec*1e9)).UTC(), nil
	}
	return time.Time{}, usageErrorf("--time %q: want RFC 3339 (2008-10-24T02:09:59Z) or Unix seconds", s)
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		cmd := &cobra.Command{
			Use:   "geoind",
			Short: "Geo-indistinguishable location queries (planar Laplace, predictive mechanism)",
			Long: `Geo-indistinguishability for apps that report a location many times a day:
the planar Laplace mechanism and the predictive mechanism of Chatzikokolakis,
Palamidessi and Stronati (a private test reuses a past release when it is
still close enough, saving budget). ε is per metre: --eps-star within
--radius (default ln 10 within 100 m).

` + cli.Wrap("What ε per metre means, at the default: "+geoind.Meaning(math.Ln10/100)+
				". A session's budget covers all its queries; the commands say it for the ε they use.", cli.HelpWidth) + `

Noise is added on a tangent plane anchored at a public --origin and released
on its --grid (1 m), so that releases depend on a location only through its
grid cell. Noise wider than the plane can represent (1,000 km at probability
1 - 1e-9) is refused before anything is drawn.`,
			Example: `  tracepriv geoind quantile --epsilon 0.023 --p 0.9
  tracepriv geoind query --state session.json --uid 000 --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185
  tracepriv geoind sanitize --in internal/sample/synth-1/commute.plt --out released.csv --origin 39.9042,116.4074 --every 60s`,
		}
		cmd.AddCommand(geoindQuantileCmd(env), geoindQueryCmd(env), geoindSanitizeCmd(env))
		return cmd
	})
}

func geoindQuantileCmd(env *cli.Env) *cobra.Command {
	var eps, p float64
	cmd := &cobra.Command{
		Use:     "quantile --epsilon E --p P",
		Short:   "Radius within which planar Laplace noise stays with probability P",
		Example: "  tracepriv geoind quantile --epsilon 0.023 --p 0.9 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(eps > 0) || math.IsInf(eps, 1) {
				return usageErrorf("geoind quantile: --epsilon %v: want finite and > 0", eps)
			}
			if !(p >= 0 && p < 1) {
				return usageErrorf("geoind quantile: --p %v: want in [0, 1)", p)
			}
			// Location Guard's alphaDeltaAccuracy.
			r := geoind.NoiseAccuracy(eps, p)
			res := map[string]any{"epsilon": eps, "p": p, "radius": r, "mean": geoind.ExpectedError(eps)}
			return env.Emit(res, func(w io.Writer) error {
				if _, err := fmt.Fprintf(w, "radius %.6g (P = %g, ε = %g; mean error %.6g)\n", r, p, eps, geoind.ExpectedError(eps)); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "what it means (ε per metre): %s\n", geoind.Meaning(eps))
				return err
			})
		},
	}
	cmd.Flags().Float64Var(&eps, "epsilon", 0, "ε per unit of distance (e.g. 0.01 per metre)")
	cmd.Flags().Float64Var(&p, "p", 0.9, "probability")
	return cmd
}

func geoindQueryCmd(env *cli.Env) *cobra.Command {
	var (
		g             geoindFlags
		state, tstr   string
		keyDir, uid   string
		newBudget     bool
		led           ledgerFlags
		lat, lon      float64
		latSet, lonOK bool
	)
	cmd := &cobra.Command{
		Use:   "query --state FILE --lat LAT --lon LON [--time T]",
		Short: "Report one location through a persistent, sealed session",
		Long: `Sanitise one location query and report it. The session (run so far, budget
spent, configuration) lives in the JSON --state file: it is created with the
configuration flags (--origin required) on first use, and afterwards its
configuration cannot change.

` + cli.Wrap("What the session's budget means, at the default --eps-star ln 10 --radius 100: "+geoind.Meaning(math.Ln10/100)+
			", over all the session's queries together.", cli.HelpWidth) + `

The state is sealed with an HMAC key kept in --key-dir (default
$XDG_CONFIG_HOME/tracepriv/geoind or the platform's equivalent; created with
mode 0600 on first use; never written into the state), which also keeps a
record of each state's last write. An edited state, an older copy put back,
a state copied to another path, or a deleted state whose record shows
releases are refused: a deleted state gives a fresh budget only with
--new-budget, and that new start is recorded. This stops accidents and
casual tampering by anyone who cannot write the key directory, not someone
who can (see "go doc tracepriv/geoind.StateFile").

The new state and its record are written durably before the point is
printed, so a crash can over-count the budget but never roll it back. An
existing --state that is not a session state (a trace, say) is never
replaced, not even with --new-budget.
Concurrent queries on one state wait for each other.

A person's one budget: every private session is charged to person --uid U
(required) in the ledger (by default the user configuration directory's
tracepriv/ledger.json; --ledger FILE names another, --no-ledger records
nothing and a seeded run is not charged) when it starts, before its first
point is released, and once only (its later queries are covered by its own
budget ε). The charge is in the ledger's one currency, which CIP releases
share: ε (r + √2 grid) at the account's radius r, or λ times its square over
2 if smaller (docs/ledger.md). A session at a new --state path, or a
--new-budget start, is a new session of the same person: it is charged too,
and refused when U's spending would exceed their budget (--budget B sets
it, once; it holds from then on), so a new state path never gives a person
a fresh budget. A session that does not start is not charged.`,
		Example: `  tracepriv geoind query --state me.json --uid 000 --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185 --time 2008-10-24T02:10:00Z
  tracepriv geoind query --state me.json --uid 000 --lat 39.9842 --lon 116.3186 --time 2008-10-24T02:11:00Z --json
  tracepriv geoind query --state me.json --uid 000 --new-budget --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185
  tracepriv geoind query --state phone2.json --uid 000 --ledger budget.json --budget 3 --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			latSet, lonOK = cmd.Flags().Changed("lat"), cmd.Flags().Changed("lon")
			if state == "" || !latSet || !lonOK {
				return usageErrorf("geoind query: --state, --lat and --lon are required")
			}
			if g.manager == "planned" {
				return usageErrorf("geoind query: --manager planned needs every query in advance (geoind sanitize plans over a trace's points); a session takes --manager fixed-rate or fixed-utility")
			}
			p := geo.Point{Lat: lat, Lon: lon}
			if err := p.Validate(); err != nil {
				return fmt.Errorf("geoind query: --lat/--lon: %w", err)
			}
			t, err := parseQueryTime(tstr)
			if err != nil {
				return err
			}
			if err := checkStatePath(state); err != nil {
				return fmt.Errorf("geoind query: %w", err)
			}
			lf, _, err := led.open(env, cmd, "geoind query")
			if err != nil {
				return err
			}
			if lf != nil {
				defer lf.Close()
			}
			sf := geoind.StateFile{Path: state, KeyDir: keyDir, NewBudget: newBudget}
			var (
				cfg *geoind.Config
				rep geoind.Report
			)
			if _, serr := os.Stat(state); serr != nil || newBudget {
				c, cerr := g.config()
				switch {
				case cerr == nil:
					cfg = &c
				case !newBudget:
					// A deleted state is reported as such, not as a
					// configuration missing for a new one.
					if _, err = sf.Load(); !errors.Is(err, geoind.ErrStateMissing) {
						return fmt.Errorf("geoind query: %s: starting a session: %w", state, cerr)
					}
				default:
					return fmt.Errorf("geoind query: %s: starting a session: %w", state, cerr)
				}
			} else {
				var changed []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					if isGeoindConfigFlag(f.Name) {
						changed = append(changed, "--"+f.Name)
					}
				})
				if len(changed) > 0 {
					return fmt.Errorf("geoind query: %s: the session exists; its configuration cannot be changed (%s)", state, strings.Join(changed, ", "))
				}
			}
			var pending, before string
			if err == nil && lf != nil {
				if uid == "" {
					return usageErrorf("geoind query: --uid U is required: every private query is charged to its person in the ledger %s, so that a new --state does not start a fresh budget; give the person's uid, or --no-ledger to release without recording it", lf.Path())
				}
				if st, lerr := geoind.ReadState(state); lerr == nil && st.Seal != nil {
					before = st.Seal.ID
				}
				pending, err = chargeSession(env, lf, led, sf, cfg, uid, state)
				if err != nil {
					return err
				}
			}
			if err == nil {
				rep, err = sf.Query(cfg, p, t, env.Source())
			}
			if pending != "" {
				// Tie the charge to the session now that it has an id; a
				// session that did not start (no new state landed)
				// released nothing, and its charge is undone.
				st, lerr := geoind.ReadState(state)
				switch {
				case lerr == nil && st.Seal != nil && st.Seal.ID != before:
					lerr = lf.SetRelease(pending, sessionRelease(st.Seal.ID))
				case err != nil:
					lerr = lf.Undo(pending)
				default:
					lerr = nil // the charge stays pending: an upper bound
				}
				if lerr != nil && !env.Quiet {
					fmt.Fprintf(env.Stderr, "tracepriv: ledger: %v (the session stays charged; its next query charges it again)\n", lerr)
				}
			}
			switch {
			case geoind.IsExhausted(err):
				return fmt.Errorf("geoind query: %s: %w (nothing released)", state, err)
			case errors.Is(err, geoind.ErrStateMissing):
				return fmt.Errorf("geoind query: %w.\nTo start a new budget for this person anyway (the privacy losses of both budgets add up), repeat with --new-budget and the configuration flags", err)
			case errors.Is(err, geoind.ErrStateModified), errors.Is(err, geoind.ErrStateRolledBack), errors.Is(err, geoind.ErrStateUnknown):
				return fmt.Errorf("geoind query: %w.\nNothing was released. If the state is lost for good, --new-budget starts a fresh one (recorded); --key-dir selects the key directory", err)
			case err != nil:
				return fmt.Errorf("geoind query: %w", err)
			}
			if newBudget && !env.Quiet {
				if h, err := sf.History(); err == nil && len(h) > 1 {
					spent := 0.0
					for _, s := range h[1:] {
						spent += s.ReplacedSpent
					}
					fmt.Fprintf(env.Stderr, "tracepriv: started a new budget at %s; %d earlier session(s) there spent %.4g in total, which adds to this one's\n", state, len(h)-1, spent)
				}
			}
			return env.Emit(rep, func(w io.Writer) error {
				kind := "hard (fresh noise)"
				switch {
				case rep.Mode == geoind.ModePredict:
					kind = "predicted (test skipped)"
				case !rep.Hard:
					kind = "easy (prediction reused)"
				}
				if _, err := fmt.Fprintf(w, "%.6f,%.6f  step %d, %s; spent %.4g of %.4g (%.1f%%)\n",
					rep.Lat, rep.Lon, rep.Step, kind, rep.Spent, rep.Budget, 100*rep.Spent/rep.Budget); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "what the session's budget means: %s\n", geoind.Meaning(rep.Budget))
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "session state file (JSON), created if missing")
	f.Float64Var(&lat, "lat", 0, "latitude of the secret location")
	f.Float64Var(&lon, "lon", 0, "longitude of the secret location")
	f.StringVar(&tstr, "time", "", "query time, RFC 3339 or Unix seconds (default: now)")
	f.StringVar(&keyDir, "key-dir", "", "directory of the state key and records (default: the user config directory's tracepriv/geoind)")
	f.BoolVar(&newBudget, "new-budget", false, "start a fresh budget even where the record knows an earlier session at --state (deleted or replaced); recorded")
	f.StringVar(&uid, "uid", "", "the person (user id) the session belongs to and is charged to; required unless --no-ledger or --seed")
	led.add(f)
	g.add(f, false)
	return cmd
}

// sanitizeOutput is the --json result of geoind sanitize.
type sanitizeOutput struct {
	Out string `json:"out"`
	// Certificate is the certificate file written beside Out.
	Certificate string `json:"certificate,omitempty"`
	Written     bool   `json:"written"`
	Complete    bool   `json:"complete"`
	Files       int    `json:"files"`
	// Skipped and Deduplicated count the input rows the readers skipped
	// and merged (exact repeats); skipped_rows is their sum.
	Skipped      int `json:"skipped_records"`
	Deduplicated int `json:"deduplicated"`
	trace.InputSummary
	// Every is the thinning period (--every), empty without thinning.
	Every string `json:"every,omitempty"`
	// PointsRead counts the points read, PointsIn those left after
	// thinning (the queries the mechanism answers), PointsReleased those
	// released.
	PointsRead     int `json:"points_read"`
	PointsIn       int `json:"points_in"`
	PointsReleased int `json:"points_released"`
	// ExpectedErrorM and AccuracyM are the people's expected_error_m and
	// accuracy_m averaged over the points they cover: the error the
	// release cost, in metres per point, by the accuracy functions;
	// ExpectedErrorKind says ExpectedErrorM is an upper bound on the mean.
	ExpectedErrorM    float64       `json:"expected_error_m"`
	ExpectedErrorKind string        `json:"expected_error_kind,omitempty"`
	AccuracyM         float64       `json:"accuracy_m"`
	Randomness        string        `json:"randomness"`
	Config            geoind.Config `json:"config"`
	// Plans is each person's plan, made before anything was drawn.
	Plans  []geoind.PersonPlan    `json:"plans"`
	People []geoind.PersonRelease `json:"people"`
}

// maxErrorDefault is --max-error's default: a plan whose noise is
// expected to move each point more than 10 km is refused unless asked for.
const maxErrorDefault = 10000

func geoindSanitizeCmd(env *cli.Env) *cobra.Command {
	var (
		g            geoindFlags
		in, out      string
		certFile     string
		rf           readFlags
		allowPartial bool
		force        bool
		led          ledgerFlags
		every        time.Duration
		maxError     float64
	)
	cmd := &cobra.Command{
		Use:   "sanitize --in TRACE|DIR --out TRACE --origin LAT,LON [--every D]",
		Short: "Run IM or PM over every point of each person's traces, one budget per person",
		Long: `Treat every point of the input as a location query and write the reported
locations with the original (public) timestamps.

` + cli.Wrap("What each person's budget means, at the default --eps-star ln 10 --radius 100: "+geoind.Meaning(math.Ln10/100)+
			", for their whole release.", cli.HelpWidth) + `

Each person gets one session and one budget ε, shared by all their traces in
time order: the traces of one uid (a CSV uid column, a GPX uid extension, a
GeoLife user directory such as Data/000 of the GeoLife download), or, for
traces without a uid, all the traces of one input file (the segments of a
GPX track). --in may be a file or a directory, searched recursively for trace
files (.plt, .csv, .geojson, .json, .gpx).

--every D thins each trace first (trace.Thin): the first fix, then each fix
at least D after the last one kept; the others are not released. Which fixes
are kept depends on the timestamps alone, which are public, so thinning
reveals nothing and the guarantee also holds over all the input's fixes. A 1
Hz logger records 3,600 points an hour; no useful budget covers them all,
--every 60s keeps 60.

By default (--manager planned) each person's budget is planned over the
points released (after thinning), and every one of them is covered: each
step spends the budget left spread over the points left, keeping a reserve
for every later point. Before anything is drawn the plan's expected error
per point (the mean distance 2/ε_N of a point's fresh noise) is reported,
and a plan over --max-error (default 10 km) or one whose noise the tangent
plane cannot represent is refused, with the --every that brings it within
bounds. After the release, expected_error_m (expected_error_kind
upper_bound: a proven upper bound on the mean error, from the run's public
decisions, whatever the prediction a test accepted; a person standing
still does better) and accuracy_m (the 90 % radius) report the error the
run's decisions cost.

With --rate (fixed-rate: the paper's Fig. 7) or --accuracy (fixed-utility,
Fig. 6) the spending per point follows the data's predictability, and a
person's budget can run out before their last point: then nothing is written
and the command fails, saying how much was covered and what covers every
point, unless --allow-partial is given, in which case the covered points are
written and the JSON summary reports the coverage per person.

Dirty rows are repaired or skipped as docs/input.md says, and files that
cannot be read are skipped; both are reported on stderr and in --json
(skipped_rows, skipped_files). --strict stops at the first instead.

The released traces and a JSON certificate (--certificate, default
OUT.cert.json: the guarantee, the configuration, the thinning, each person's
spending and coverage, the randomness) are written together or not at all;
neither may be an input, and an existing file is replaced only with --force.

Every private release is charged to each person (by uid) in the ledger (by
default the user configuration directory's tracepriv/ledger.json; --ledger
FILE names another; --no-ledger records nothing; a seeded run is not
charged): the session budget ε, in the ledger's one currency shared with CIP
releases (ε (r + √2 grid) at the account's radius r, or λ times its square
over 2 if smaller; docs/ledger.md), checked before any noise is drawn and
refused past the person's budget (--budget B sets it once; it holds from
then on). Thinning changes which points a run releases, never what it is
charged. A run that writes nothing (a budget that ran out without
--allow-partial) is not charged.`,
		Example: `  tracepriv geoind sanitize --in internal/sample/synth-1/commute.plt --out released-1min.csv --origin 39.9042,116.4074 --every 60s
  tracepriv geoind sanitize --in internal/sample/synth-1/commute.plt --out sample.csv \
      --origin 39.9042,116.4074 --every 30s --rate 0.02 --allow-partial
  tracepriv geoind sanitize --in demo-output --out released-pm.csv --origin 39.9042,116.4074 \
      --mechanism pm --manager fixed-utility --accuracy 3000 --allow-partial --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in == "" || out == "" {
				return usageErrorf("geoind sanitize: --in and --out are required")
			}
			if every < 0 {
				return usageErrorf("geoind sanitize: --every %v: want a positive Go duration such as 60s or 5m (0: keep every point)", every)
			}
			if !(maxError >= 0) || math.IsInf(maxError, 1) {
				return usageErrorf("geoind sanitize: --max-error %v: want metres >= 0 (0: no limit)", maxError)
			}
			if err := g.chooseManager(cmd); err != nil {
				return fmt.Errorf("geoind sanitize: %w", err)
			}
			cfg, err := g.config()
			if err != nil {
				return fmt.Errorf("geoind sanitize: %w", err)
			}
			if _, err := trace.FormatFromPath(out); err != nil {
				return fmt.Errorf("geoind sanitize: --out: %w", err)
			}
			if certFile == "" {
				certFile = sanitize.CertificatePath(out)
			}
			if err := checkOutputs([]string{in}, force, map[string]string{"--out": out, "--certificate": certFile}); err != nil {
				return fmt.Errorf("geoind sanitize: %w", err)
			}
			lf, ledgerName, err := led.open(env, cmd, "geoind sanitize")
			if err != nil {
				return err
			}
			if lf != nil {
				defer lf.Close()
			}
			var read []*trace.Trace
			fileOf := map[*trace.Trace]string{}
			rep, err := rf.readEach([]string{in}, func(f string, ts []*trace.Trace) {
				for _, tr := range ts {
					fileOf[tr] = f
				}
				read = append(read, ts...)
			})
			if err != nil {
				return fmt.Errorf("geoind sanitize: --in: %w", err)
			}
			reportSkipped(env, rep)
			// One uid found in two folders of a corpus is one person, with
			// one budget (as sanitize releases it).
			if alias := corpus.JoinTraces(read, func(tr *trace.Trace) string { return fileOf[tr] }, rep.Merged); len(alias) > 0 && !env.Quiet {
				for _, from := range slices.Sorted(maps.Keys(alias)) {
					fmt.Fprintf(env.Stderr, "tracepriv: persons %q and %q hold the same uid, so they are one person, released as %q\n", from, alias[from], alias[from])
				}
			}
			person := geoind.PersonByUIDOrFile(func(tr *trace.Trace) string { return fileOf[tr] })
			traces := thinTraces(read, every, fileOf)
			res := sanitizeOutput{Out: out, Files: rep.Files, Skipped: rep.Skipped, Deduplicated: rep.Deduplicated,
				InputSummary: rep.Summary(), PointsRead: countPoints(read), PointsIn: countPoints(traces), Config: cfg}
			if every > 0 {
				res.Every = every.String()
				if !env.Quiet {
					fmt.Fprintf(env.Stderr, "tracepriv: thinned to one fix per %v: %d of %d points kept\n", every, res.PointsIn, res.PointsRead)
				}
			}
			hc := hintContext{cfg: cfg, read: read, traces: traces, person: person, every: every, maxError: maxError}
			plans, err := geoind.PlanByPerson(cfg, traces, person)
			res.Plans = plans
			if err != nil {
				return fmt.Errorf("geoind sanitize: %s: %w", in, g.planError(err, hc))
			}
			if w := geoind.WorstPlan(plans); g.manager == "planned" && maxError > 0 && w.ExpectedErrorM > maxError {
				return fmt.Errorf("geoind sanitize: %s: %s", in, tooNoisy(w, hc))
			}
			if !env.Quiet {
				w := geoind.WorstPlan(plans)
				fmt.Fprintf(env.Stderr, "tracepriv: plan (%s): %s, up to %d points each; expected error of fresh noise up to %s per point (%s, at the prior prediction rate)\n",
					cfg.Manager, plural(len(plans), "person", "people"), maxPoints(plans), metres(w.ExpectedErrorM), w.Person)
			}
			// The admission policy (budget.Admission): each person's
			// session spends at most its budget ε; refuse before any
			// noise is drawn, charge it immediately before drawing,
			// settle it when the files land, undo it when they do not.
			charge := led.request(budget.GeoInd, "tracepriv geoind sanitize", out)
			charge.GridM = cfg.Noise.Grid
			var adm *budget.Admission
			target := map[string]float64{}
			if lf != nil {
				adm = budget.NewAdmission(lf, charge)
				uids, err := uidsOf(traces)
				if err != nil {
					return fmt.Errorf("geoind sanitize: --ledger: %s: %w", in, err)
				}
				for _, u := range uids {
					target[u] = cfg.Params.Epsilon
				}
			}
			if err := adm.Check(target); err != nil {
				return ledgerError("geoind sanitize", err)
			}
			if err := adm.Charge("", target); err != nil {
				return ledgerError("geoind sanitize", err)
			}
			src := env.Source()
			outs, people, err := geoind.SanitizeByPerson(cfg, traces, person, src)
			if err != nil {
				return fmt.Errorf("geoind sanitize: %s: %w%s", in, err, undoCharge(adm))
			}
			res.Randomness, res.People = noise.Describe(src), people
			var partial []geoind.PersonRelease
			weight := 0
			for _, p := range people {
				if !p.Complete {
					partial = append(partial, p)
				}
				res.PointsReleased += p.Released
				w := p.Released - p.Skipped // the points whose errors are averaged
				res.ExpectedErrorM += float64(w) * p.ExpectedErrorM
				res.AccuracyM += float64(w) * p.AccuracyM
				weight += w
			}
			if weight > 0 {
				res.ExpectedErrorKind = geoind.ErrorUpperBound
				res.ExpectedErrorM /= float64(weight)
				res.AccuracyM /= float64(weight)
			}
			res.Complete = len(partial) == 0
			var failure error
			switch {
			case res.PointsReleased == 0:
				failure = fmt.Errorf("geoind sanitize: %s: no point released; %s%s", in, g.coverageHint(hc), undoCharge(adm))
			case len(partial) > 0 && !allowPartial:
				failure = fmt.Errorf("%w%s", g.partialError(partial, len(people), hc), undoCharge(adm))
			default:
				if err := checkFinite("--out", out, outs); err != nil {
					return fmt.Errorf("geoind sanitize: %w%s", err, undoCharge(adm))
				}
				outFmt, _ := trace.FormatFromPath(out) // checked above
				cert := geoind.NewCertificate(cfg, people, src)
				cert.ThinEvery, cert.Ledger = res.Every, ledgerName
				files := geoind.Files{Traces: out, Format: outFmt, Certificate: certFile}
				if err := files.Write(outs, cert); err != nil {
					return fmt.Errorf("geoind sanitize: nothing written: %w%s", err, undoCharge(adm))
				}
				res.Written, res.Certificate = true, certFile
				// Landed: the session budget stays charged (settled).
				if err := adm.Settle("", nil); err != nil {
					return fmt.Errorf("geoind sanitize: the release was written, but settling its charge failed (it stays, pending): %w", err)
				}
				if adm != nil {
					charge.Epsilon = target
					reportCharge(env, lf, charge)
				}
			}
			if err := env.Emit(res, func(w io.Writer) error { return sanitizeText(w, res) }); err != nil {
				return err
			}
			return failure
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "input trace file (CSV, GeoJSON, GPX or PLT) or directory of them")
	f.StringVar(&out, "out", "", "output trace file (format from extension)")
	f.StringVar(&certFile, "certificate", "", "certificate file (default OUT.cert.json)")
	f.DurationVar(&every, "every", 0, "thin each trace to one fix per period first (e.g. 60s, 5m): the first fix, then each fix at least this long after the last one kept; 0 keeps every fix")
	f.Float64Var(&maxError, "max-error", maxErrorDefault, "refuse a planned release whose expected error exceeds this many metres per point (0: no limit)")
	rf.add(cmd)
	rf.addCorpus(f, "each person has one budget")
	f.BoolVar(&allowPartial, "allow-partial", false, "fixed-rate, fixed-utility: write the covered points when a person's budget runs out before their last point")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	led.add(f)
	g.add(f, true)
	return cmd
}

// thinTraces thins every trace to one fix per period every (trace.Thin;
// 0 keeps them all) and records each thinned trace's file in fileOf.
func thinTraces(traces []*trace.Trace, every time.Duration, fileOf map[*trace.Trace]string) []*trace.Trace {
	if every <= 0 {
		return traces
	}
	out := make([]*trace.Trace, len(traces))
	for i, t := range traces {
		out[i] = t.Thin(every)
		fileOf[out[i]] = fileOf[t]
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func countPoints(traces []*trace.Trace) int {
	n := 0
	for _, t := range traces {
		n += t.Len()
	}
	return n
}

func maxPoints(plans []geoind.PersonPlan) int {
	n := 0
	for _, p := range plans {
		n = max(n, p.Points)
	}
	return n
}

// metres formats a distance for people: metres below 10 km, else km.
func metres(m float64) string {
	if m < 10000 {
		return fmt.Sprintf("%.0f m", m)
	}
	return fmt.Sprintf("%.1f km", m/1000)
}

func sanitizeText(w io.Writer, res sanitizeOutput) error {
	if res.SkippedRows > 0 || len(res.SkippedFiles) > 0 {
		fmt.Fprintf(w, "input: %d files; %d rows skipped or merged, %d files unreadable (see stderr)\n", res.Files, res.SkippedRows, len(res.SkippedFiles))
	}
	if res.Every != "" {
		fmt.Fprintf(w, "thinned to one fix per %s: %d of %d points\n", res.Every, res.PointsIn, res.PointsRead)
	}
	for _, p := range res.People {
		span := p.Last.Sub(p.First)
		covered := time.Duration(0)
		if p.Released > 0 {
			covered = p.CoveredUntil.Sub(p.First)
		}
		fmt.Fprintf(w, "%s: released %d of %d points (%.1f %%; %v of %v covered) in %d trace(s), %d hard, %d skipped; spent %.4g of ε %.4g",
			p.Person, p.Released, p.Points, 100*p.Covered, covered, span, len(p.Traces), p.Hard, p.Skipped, p.Spent, p.Budget)
		if p.ExpectedErrorM > 0 {
			fmt.Fprintf(w, "; expected error at most %s per point (a proven bound on the mean, from the public decisions, worst case over the predictions; 90 %% within %s)", metres(p.ExpectedErrorM), metres(p.AccuracyM))
		}
		fmt.Fprintln(w)
	}
	if len(res.People) > 0 {
		fmt.Fprintf(w, "what each person's budget means: %s\n", geoind.Meaning(res.People[0].Budget))
	}
	if res.Written {
		_, err := fmt.Fprintf(w, "wrote %d points to %s and its certificate %s (randomness: %s)\n", res.PointsReleased, res.Out, res.Certificate, res.Randomness)
		return err
	}
	_, err := fmt.Fprintln(w, "nothing written")
	return err
}

// plannedDefault is cfg with the default planned manager instead of the
// one the flags chose.
func plannedDefault(cfg geoind.Config) geoind.Config {
	cfg.Manager, cfg.Rate, cfg.Accuracy = "planned", 0, 0
	return cfg
}

// hintContext is what the hints of geoind sanitize are computed from:
// the configuration, the traces as read and as thinned, the person rule
// (which applies to both) and the flags.
type hintContext struct {
	cfg          geoind.Config
	read, traces []*trace.Trace
	person       func(*trace.Trace) string
	every        time.Duration
	maxError     float64
}

// thinningHint says which --every lets the planned manager cover every
// point within --max-error, from the read traces' timestamps.
func thinningHint(hc hintContext) string {
	d, plans, ok := geoind.SuggestThinning(plannedDefault(hc.cfg), hc.read, hc.person, hc.every, hc.maxError)
	if !ok {
		return "no thinning is enough: even one point a day per person costs more than this budget allows"
	}
	w := geoind.WorstPlan(plans)
	return fmt.Sprintf("--every %v (up to %d points per person, expected error %s per point)", d, maxPoints(plans), metres(w.ExpectedErrorM))
}

// planError explains a plan the configuration cannot release.
func (g *geoindFlags) planError(err error, hc hintContext) error {
	var pe *geoind.PlanError
	if !errors.As(err, &pe) || g.manager != "planned" {
		return g.flagError(err)
	}
	return fmt.Errorf("%s: one budget ε = %.4g per metre cannot cover %d points: the widest noise the plan may draw is beyond what the tangent plane can represent (%v).\nThin the traces first: %s; or raise the budget (--eps-star, a smaller --radius, or --epsilon)",
		pe.Person, hc.cfg.Params.Epsilon, pe.Points, pe.Err, thinningHint(hc))
}

// tooNoisy explains a plan whose expected error exceeds --max-error.
func tooNoisy(w geoind.PersonPlan, hc hintContext) string {
	return fmt.Sprintf("%s: one budget ε = %.4g per metre spread over %d points costs an expected error of %s per point, more than --max-error %g m; nothing was drawn.\nThin the traces first: %s; or raise the budget (--eps-star, a smaller --radius, or --epsilon); or --max-error 0 to release at this error",
		w.Person, hc.cfg.Params.Epsilon, w.Points, metres(w.ExpectedErrorM), hc.maxError, thinningHint(hc))
}

// coverageHint says what covers every point when a fixed-rate or
// fixed-utility budget ran out: the default planned manager, at the
// current thinning if its plan is within bounds, else with the --every
// that brings it within bounds.
func (g *geoindFlags) coverageHint(hc hintContext) string {
	h := fmt.Sprintf("each query spends about --rate %g of ε (fixed-rate)", g.rate)
	flags := "--rate"
	if g.manager == "fixed-utility" {
		h = fmt.Sprintf("each query costs the noise of --accuracy %g m (fixed-utility)", g.accuracy)
		flags = "--manager fixed-utility --accuracy"
	}
	h += ", and the points it covers depend on how predictable the trace is. To cover every point, drop " + flags
	plans, err := geoind.PlanByPerson(plannedDefault(hc.cfg), hc.traces, hc.person)
	if w := geoind.WorstPlan(plans); err == nil && (hc.maxError == 0 || w.ExpectedErrorM <= hc.maxError) {
		return h + fmt.Sprintf(": the default (--manager planned) plans each person's budget over their points and covers all of them, at an expected error of %s per point", metres(w.ExpectedErrorM))
	}
	return h + fmt.Sprintf(" and thin the traces: the default (--manager planned) with %s covers all of them", thinningHint(hc))
}

func (g *geoindFlags) partialError(partial []geoind.PersonRelease, people int, hc hintContext) error {
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
		len(partial), people, worst.Person, worst.Released, worst.Points, 100*worst.Covered, covered, worst.Last.Sub(worst.First), g.coverageHint(hc))
}

// checkStatePath refuses a --state that query would lose or cannot use: a
// directory, a path whose directory does not exist, or an existing file
// that is not a session state (query, and with --new-budget replaces, only
// states).
func checkStatePath(state string) error {
	if err := checkOut("--state", state); err != nil {
		return err
	}
	if _, err := os.Stat(state); err != nil {
		return nil // a new session
	}
	if _, err := geoind.ReadState(state); err != nil {
		return fmt.Errorf("--state %s exists and is not a session state written by geoind query (%v); give the session's state file or a new path (move the file away if it is a damaged state)", state, err)
	}
	return nil
}

// sessionRelease is the ledger's release key of a geoind session.
func sessionRelease(id string) string { return "geoind session " + id }

// chargeSession charges the session a query runs in, once, before the
// query releases anything: a session that will start (cfg non-nil: no
// state, or --new-budget) is charged its budget ε as pending, keyed by a
// key that the caller replaces with the session's id once it exists (the
// returned key); an existing session is charged only if the ledger has no
// charge for it (it was started without --ledger, or its start's key was
// never replaced). A session charged to another person is refused.
func chargeSession(env *cli.Env, lf *budget.File, led ledgerFlags, sf geoind.StateFile, cfg *geoind.Config, uid, state string) (string, error) {
	charge := led.request(budget.GeoInd, "tracepriv geoind query", state)
	if cfg != nil {
		if _, err := os.Stat(state); err != nil && !sf.NewBudget {
			// A deleted state is refused by Query; charge nothing for it.
			if _, lerr := sf.Load(); errors.Is(lerr, geoind.ErrStateMissing) {
				return "", nil
			}
		}
		nonce := make([]byte, 8)
		if _, err := rand.Read(nonce); err != nil {
			return "", err
		}
		charge.Release = "geoind session starting " + hex.EncodeToString(nonce)
		charge.Pending = true
		charge.Epsilon[uid] = cfg.Params.Epsilon
		charge.GridM = cfg.Noise.Grid
		if err := lf.Charge(charge); err != nil {
			return "", ledgerError("geoind query", err)
		}
		reportCharge(env, lf, charge)
		return charge.Release, nil
	}
	st, err := sf.Load()
	if err != nil {
		return "", nil // Query reports it
	}
	release := sessionRelease(st.Seal.ID)
	if lf.Ledger().Charged(uid, budget.GeoInd, release) {
		return "", nil
	}
	if other := lf.Ledger().ChargedUIDs(budget.GeoInd, release); len(other) > 0 {
		return "", usageErrorf("geoind query: --uid %s: the session at %s is charged to person %q in %s; give that person's uid", uid, state, other[0], lf.Path())
	}
	charge.Release = release
	charge.Epsilon[uid] = st.Config.Params.Epsilon
	charge.GridM = st.Config.Noise.Grid
	if err := lf.Charge(charge); err != nil {
		return "", ledgerError("geoind query", err)
	}
	reportCharge(env, lf, charge)
	return "", nil
}
