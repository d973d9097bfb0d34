package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/budget"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/noise"
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
	g.add(f)
	return f.Lookup(name) != nil
}

func (g *geoindFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.mechanism, "mechanism", "pm", "pm (predictive) or im (independent noise)")
	f.StringVar(&g.manager, "manager", "fixed-rate", "budget manager: fixed-rate or fixed-utility")
	f.StringVar(&g.predictor, "predictor", "parrot", "prediction function: parrot or linear")
	f.StringVar(&g.origin, "origin", "", "public origin LAT,LON of the tangent plane and its grid (required): a point chosen without looking at the data, e.g. the city centre")
	f.Float64Var(&g.epsStar, "eps-star", math.Ln10, "privacy level ε* within --radius")
	f.Float64Var(&g.radius, "radius", 100, "protection radius r* in metres (ε = ε*/r*)")
	f.Float64Var(&g.epsilon, "epsilon", 0, "global budget ε per metre (overrides --eps-star/--radius)")
	f.Float64Var(&g.rate, "rate", 0.033, "fixed-rate: budget per query as a fraction of ε (about 1/N covers N queries)")
	f.Float64Var(&g.accuracy, "accuracy", 3000, "fixed-utility: accuracy α(0.9) in metres")
	f.Float64Var(&g.eta, "eta", 0.5, "η: scale of the predictive accuracy bound, eq. (10)")
	f.Float64Var(&g.gamma, "gamma", 0.8, "γ: test noise / threshold ratio, eq. (11)")
	f.Float64Var(&g.pr0, "pr0", 0.5, "initial prediction-rate estimate")
	f.Float64Var(&g.maxSpeedKmh, "max-speed", 0, "skip the test when max-speed (km/h) × time since the last hard point <= threshold (0: off)")
	f.Float64Var(&g.grid, "grid", geoind.DefaultGrid, "output grid step in metres (> 0; continuous output is refused)")
}

// errNoOrigin explains why the origin is not derived from the data.
var errNoOrigin = errors.New(`--origin LAT,LON is required: the tangent plane, and with it the output
grid, must be anchored at a public point chosen without looking at the data (an origin
derived from the first point would leak that point's position); use e.g. the centre of
the city, --origin 39.9042,116.4074 for Beijing`)

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
			return geoind.Config{}, fmt.Errorf("--eps-star %g and --radius %g: want both finite and > 0", g.epsStar, g.radius)
		}
		eps = g.epsStar / g.radius
	}
	cfg := geoind.Config{
		Mechanism: g.mechanism, Manager: g.manager, Predictor: g.predictor,
		Params: geoind.Params{
			Epsilon: eps, Eta: g.eta, Gamma: g.gamma, PR0: g.pr0,
			MaxSpeed: g.maxSpeedKmh / 3.6,
		},
		Rate: g.rate * eps, Accuracy: g.accuracy,
		Origin: p, Noise: geoind.PlanarLaplace{Grid: g.grid},
	}
	if err := cfg.Validate(); err != nil {
		return geoind.Config{}, g.flagError(err)
	}
	return cfg, nil
}

// flagError names the flags behind a configuration error.
func (g *geoindFlags) flagError(err error) error {
	var pe *geoind.ParamError
	if !errors.As(err, &pe) {
		return err
	}
	budget := fmt.Sprintf("--eps-star %g --radius %g (ε = %.3g per metre)", g.epsStar, g.radius, g.epsStar/g.radius)
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
	return time.Time{}, fmt.Errorf("--time %q: want RFC 3339 (2008-10-24T02:09:59Z) or Unix seconds", s)
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

Noise is added on a tangent plane anchored at a public --origin and released
on its --grid (1 m), so that releases depend on a location only through its
grid cell. Noise wider than the plane can represent (1,000 km at probability
1 - 1e-9) is refused before anything is drawn.`,
			Example: `  tracepriv geoind quantile --epsilon 0.023 --p 0.9
  tracepriv geoind query --state session.json --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185
  tracepriv geoind sanitize --in internal/sample/geolife-000-20081024020959.plt --out released.csv --origin 39.9042,116.4074 --rate 0.0035`,
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
				return fmt.Errorf("geoind quantile: --epsilon %v: want finite and > 0", eps)
			}
			if !(p >= 0 && p < 1) {
				return fmt.Errorf("geoind quantile: --p %v: want in [0, 1)", p)
			}
			// Location Guard's alphaDeltaAccuracy.
			r := geoind.NoiseAccuracy(eps, p)
			res := map[string]any{"epsilon": eps, "p": p, "radius": r, "mean": geoind.ExpectedError(eps)}
			return env.Emit(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "radius %.6g (P = %g, ε = %g; mean error %.6g)\n", r, p, eps, geoind.ExpectedError(eps))
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

A person's budget across sessions: with --ledger FILE --budget B --uid U,
each session (one budget ε per metre) is charged ε to person U in FILE
when it starts, before its first point is released, and once only (its
later queries are covered by its own budget). A session at a new --state
path, or a --new-budget start, is a new session of the same person: it is
charged too, and refused when U's geoind spending would exceed B, so a new
state path does not give a person a fresh budget (docs/ledger.md).`,
		Example: `  tracepriv geoind query --state me.json --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185 --time 2008-10-24T02:10:00Z
  tracepriv geoind query --state me.json --lat 39.9842 --lon 116.3186 --time 2008-10-24T02:11:00Z --json
  tracepriv geoind query --state me.json --new-budget --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185
  tracepriv geoind query --state phone2.json --uid 000 --ledger budget.json --budget 0.1 --origin 39.9042,116.4074 --lat 39.9841 --lon 116.3185`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			latSet, lonOK = cmd.Flags().Changed("lat"), cmd.Flags().Changed("lon")
			if state == "" || !latSet || !lonOK {
				return errors.New("geoind query: --state, --lat and --lon are required")
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
			if led.path != "" && uid == "" {
				return errors.New("geoind query: --ledger needs --uid, the person the session belongs to: the ledger is kept per person, so that a new --state does not start a fresh budget")
			}
			lf, err := led.open(cmd, "geoind query")
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
			var pending string
			if err == nil && lf != nil {
				pending, err = chargeSession(env, lf, led, sf, cfg, uid, state)
				if err != nil {
					return err
				}
			}
			if err == nil {
				rep, err = sf.Query(cfg, p, t, env.Source())
			}
			if err == nil && pending != "" {
				// Tie the charge to the session now that it has an id.
				if st, lerr := geoind.ReadState(state); lerr == nil && st.Seal != nil {
					if lerr := lf.SetRelease(pending, sessionRelease(st.Seal.ID)); lerr != nil && !env.Quiet {
						fmt.Fprintf(env.Stderr, "tracepriv: ledger: %v (the session stays charged; its next query charges it again)\n", lerr)
					}
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
				_, err := fmt.Fprintf(w, "%.6f,%.6f  step %d, %s; spent %.4g of %.4g (%.1f%%)\n",
					rep.Lat, rep.Lon, rep.Step, kind, rep.Spent, rep.Budget, 100*rep.Spent/rep.Budget)
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
	f.StringVar(&uid, "uid", "", "the person (user id) the session belongs to; required with --ledger")
	led.add(f, "geo-indistinguishability ε per metre")
	g.add(f)
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
	Randomness string                 `json:"randomness"`
	Config     geoind.Config          `json:"config"`
	People     []geoind.PersonRelease `json:"people"`
}

func geoindSanitizeCmd(env *cli.Env) *cobra.Command {
	var (
		g            geoindFlags
		in, out      string
		certFile     string
		rf           readFlags
		allowPartial bool
		force        bool
		led          ledgerFlags
	)
	cmd := &cobra.Command{
		Use:   "sanitize --in TRACE|DIR --out TRACE --origin LAT,LON",
		Short: "Run IM or PM over every point of each person's traces, one budget per person",
		Long: `Treat every point of the input as a location query and write the reported
locations with the original (public) timestamps.

Each person gets one session and one budget ε, shared by all their traces in
time order: the traces of one uid (a CSV uid column, a GPX uid extension, a
GeoLife user directory such as Data/000 of the GeoLife download), or, for
traces without a uid, all the traces of one input file (the segments of a
GPX track). --in may be a file or a directory, searched recursively for trace
files (.plt, .csv, .geojson, .json, .gpx).

Dirty rows are repaired or skipped as docs/input.md says, and files that
cannot be read are skipped; both are reported on stderr and in --json
(skipped_rows, skipped_files). --strict stops at the first instead.

When a person's budget runs out before their last point, nothing is written
and the command fails, saying how much was covered and which flag changes
it (--rate: about 0.9/N covers N points; --accuracy for fixed-utility), unless
--allow-partial is given, in which case the covered points are written and
the JSON summary reports the coverage per person.

The released traces and a JSON certificate (--certificate, default
OUT.cert.json: the guarantee, the configuration, each person's spending and
coverage, the randomness) are written together or not at all; neither may be
an input, and an existing file is replaced only with --force.

With --ledger FILE --budget B, each person (by uid) is charged the session
budget ε per metre in FILE before the release is written, and a release
that would take anyone's geoind spending over B is refused before any noise
is drawn (docs/ledger.md). A run that writes nothing (a budget that ran out
without --allow-partial) is not charged.`,
		Example: `  tracepriv geoind sanitize --in internal/sample/geolife-000-20081024020959.plt --out sample.csv \
      --origin 39.9042,116.4074 --rate 0.0035
  tracepriv geoind sanitize --in demo-output --out released-pm.csv --origin 39.9042,116.4074 \
      --mechanism pm --manager fixed-utility --accuracy 3000 --allow-partial --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in == "" || out == "" {
				return errors.New("geoind sanitize: --in and --out are required")
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
			lf, err := led.open(cmd, "geoind sanitize")
			if err != nil {
				return err
			}
			if lf != nil {
				defer lf.Close()
			}
			var traces []*trace.Trace
			fileOf := map[*trace.Trace]string{}
			rep, err := rf.readEach([]string{in}, func(f string, ts []*trace.Trace) {
				for _, tr := range ts {
					fileOf[tr] = f
				}
				traces = append(traces, ts...)
			})
			if err != nil {
				return fmt.Errorf("geoind sanitize: --in: %w", err)
			}
			reportSkipped(env, rep)
			person := geoind.PersonByUIDOrFile(func(tr *trace.Trace) string { return fileOf[tr] })
			charge := led.request(budget.GeoInd, "tracepriv geoind sanitize", out)
			if lf != nil {
				// Each person's session spends at most its budget ε;
				// refuse before any noise is drawn.
				uids, err := uidsOf(traces)
				if err != nil {
					return fmt.Errorf("geoind sanitize: --ledger: %s: %w", in, err)
				}
				for _, u := range uids {
					charge.Epsilon[u] = cfg.Params.Epsilon
				}
				if err := lf.Check(charge); err != nil {
					return ledgerError("geoind sanitize", err)
				}
			}
			src := env.Source()
			outs, people, err := geoind.SanitizeByPerson(cfg, traces, person, src)
			if err != nil {
				return fmt.Errorf("geoind sanitize: %s: %w", in, err)
			}
			res := sanitizeOutput{Out: out, Files: rep.Files, Skipped: rep.Skipped, Deduplicated: rep.Deduplicated,
				InputSummary: rep.Summary(), Randomness: noise.Describe(src), Config: cfg, People: people}
			var partial []geoind.PersonRelease
			for _, p := range people {
				if !p.Complete {
					partial = append(partial, p)
				}
			}
			res.Complete = len(partial) == 0
			released := 0
			for _, p := range people {
				released += p.Released
			}
			var failure error
			switch {
			case released == 0:
				failure = fmt.Errorf("geoind sanitize: %s: no point released; %s", in, g.coverageHint(people))
			case len(partial) > 0 && !allowPartial:
				failure = g.partialError(partial, len(people))
			default:
				if err := checkFinite("--out", out, outs); err != nil {
					return fmt.Errorf("geoind sanitize: %w", err)
				}
				outFmt, _ := trace.FormatFromPath(out) // checked above
				if lf != nil {
					if err := lf.Charge(charge); err != nil {
						return ledgerError("geoind sanitize", err)
					}
					reportCharge(env, lf, charge)
				}
				files := geoind.Files{Traces: out, Format: outFmt, Certificate: certFile}
				if err := files.Write(outs, geoind.NewCertificate(cfg, people, src)); err != nil {
					return fmt.Errorf("geoind sanitize: nothing written: %w%s", err, chargeStays(lf))
				}
				res.Written, res.Certificate = true, certFile
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
	rf.add(cmd)
	f.BoolVar(&allowPartial, "allow-partial", false, "write the covered points when a person's budget runs out before their last point")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	led.add(f, "geo-indistinguishability ε per metre")
	g.add(f)
	return cmd
}

func sanitizeText(w io.Writer, res sanitizeOutput) error {
	if res.SkippedRows > 0 || len(res.SkippedFiles) > 0 {
		fmt.Fprintf(w, "input: %d files; %d rows skipped or merged, %d files unreadable (see stderr)\n", res.Files, res.SkippedRows, len(res.SkippedFiles))
	}
	for _, p := range res.People {
		span := p.Last.Sub(p.First)
		covered := time.Duration(0)
		if p.Released > 0 {
			covered = p.CoveredUntil.Sub(p.First)
		}
		fmt.Fprintf(w, "%s: released %d of %d points (%.1f %%; %v of %v covered) in %d trace(s), %d hard, %d skipped; spent %.4g of ε %.4g\n",
			p.Person, p.Released, p.Points, 100*p.Covered, covered, span, len(p.Traces), p.Hard, p.Skipped, p.Spent, p.Budget)
	}
	if res.Written {
		_, err := fmt.Fprintf(w, "wrote %s and its certificate %s (randomness: %s)\n", res.Out, res.Certificate, res.Randomness)
		return err
	}
	_, err := fmt.Fprintln(w, "nothing written")
	return err
}

// coverageHint says which flags give a person more points.
func (g *geoindFlags) coverageHint(people []geoind.PersonRelease) string {
	most := 0
	for _, p := range people {
		most = max(most, p.Points)
	}
	if g.manager == "fixed-utility" {
		return fmt.Sprintf("each query costs the noise of --accuracy %g m (fixed-utility): raise it to cover more points with more noise each, or raise the budget (--eps-star/--radius or --epsilon)", g.accuracy)
	}
	// The predictive mechanism's spending per query varies with its
	// predictions (up to about 5 % over --rate on GeoLife traces), so the
	// suggestion keeps a 10 % margin rather than 1/N.
	r := 0.9 / float64(most)
	h := fmt.Sprintf("each query spends about --rate %g of ε (fixed-rate)", g.rate)
	try := *g
	try.rate = r
	if _, err := try.config(); err != nil {
		return h + fmt.Sprintf("; covering %d points with this budget (--rate %.2g) would take noise wider than the tangent plane can represent: raise the budget (--eps-star, or a smaller --radius) or release fewer points", most, r)
	}
	return h + fmt.Sprintf(": lower it, e.g. --rate %.2g for %d points, to cover more points with more noise each", r, most)
}

func (g *geoindFlags) partialError(partial []geoind.PersonRelease, people int) error {
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
		len(partial), people, worst.Person, worst.Released, worst.Points, 100*worst.Covered, covered, worst.Last.Sub(worst.First), g.coverageHint(partial))
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
		return "", fmt.Errorf("geoind query: --uid %s: the session at %s is charged to person %q in %s; give that person's uid", uid, state, other[0], lf.Path())
	}
	charge.Release = release
	charge.Epsilon[uid] = st.Config.Params.Epsilon
	if err := lf.Charge(charge); err != nil {
		return "", ledgerError("geoind query", err)
	}
	reportCharge(env, lf, charge)
	return "", nil
}
