package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
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

func (g *geoindFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.mechanism, "mechanism", "pm", "pm (predictive) or im (independent noise)")
	f.StringVar(&g.manager, "manager", "fixed-rate", "budget manager: fixed-rate or fixed-utility")
	f.StringVar(&g.predictor, "predictor", "parrot", "prediction function: parrot or linear")
	f.StringVar(&g.origin, "origin", "", "public origin LAT,LON of the tangent plane; pass one for a strict guarantee (default: centre of the 1° cell of the first point, which depends on that point)")
	f.Float64Var(&g.epsStar, "eps-star", math.Ln10, "privacy level ε* within --radius")
	f.Float64Var(&g.radius, "radius", 100, "protection radius r* in metres (ε = ε*/r*)")
	f.Float64Var(&g.epsilon, "epsilon", 0, "global budget ε per metre (overrides --eps-star/--radius)")
	f.Float64Var(&g.rate, "rate", 0.033, "fixed-rate: budget per query as a fraction of ε")
	f.Float64Var(&g.accuracy, "accuracy", 3000, "fixed-utility: accuracy α(0.9) in metres")
	f.Float64Var(&g.eta, "eta", 0.5, "η: scale of the predictive accuracy bound, eq. (10)")
	f.Float64Var(&g.gamma, "gamma", 0.8, "γ: test noise / threshold ratio, eq. (11)")
	f.Float64Var(&g.pr0, "pr0", 0.5, "initial prediction-rate estimate")
	f.Float64Var(&g.maxSpeedKmh, "max-speed", 0, "skip the test when max-speed (km/h) × time since the last hard point <= threshold (0: off)")
	f.Float64Var(&g.grid, "grid", 1, "output grid step in metres (0: continuous coordinates)")
}

func (g *geoindFlags) config(first geo.Point) (geoind.Config, error) {
	eps := g.epsilon
	if eps == 0 {
		if !(g.epsStar > 0) || !(g.radius > 0) {
			return geoind.Config{}, fmt.Errorf("geoind: --eps-star and --radius must be > 0")
		}
		eps = g.epsStar / g.radius
	}
	origin := geoind.LatLon{Lat: math.Floor(first.Lat) + 0.5, Lon: math.Floor(first.Lon) + 0.5}
	if g.origin != "" {
		p, err := parseLatLon(g.origin)
		if err != nil {
			return geoind.Config{}, fmt.Errorf("--origin: %w", err)
		}
		origin = geoind.LatLon{Lat: p.Lat, Lon: p.Lon}
	}
	return geoind.Config{
		Mechanism: g.mechanism, Manager: g.manager, Predictor: g.predictor,
		Params: geoind.Params{
			Epsilon: eps, Eta: g.eta, Gamma: g.gamma, PR0: g.pr0,
			MaxSpeed: g.maxSpeedKmh / 3.6,
		},
		Rate: g.rate * eps, Accuracy: g.accuracy,
		Origin: origin, Noise: geoind.PlanarLaplace{Grid: g.grid},
	}, nil
}

func parseLatLon(s string) (geo.Point, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return geo.Point{}, fmt.Errorf("%q: want LAT,LON", s)
	}
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
	lon, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	if err := errors.Join(err1, err2); err != nil {
		return geo.Point{}, fmt.Errorf("%q: %w", s, err)
	}
	p := geo.Point{Lat: lat, Lon: lon}
	return p, p.Validate()
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
--radius (default ln 10 within 100 m).`,
		}
		cmd.AddCommand(geoindQuantileCmd(env), geoindQueryCmd(env), geoindSanitizeCmd(env))
		return cmd
	})
}

func geoindQuantileCmd(env *cli.Env) *cobra.Command {
	var eps, p float64
	cmd := &cobra.Command{
		Use:   "quantile --epsilon E --p P",
		Short: "Radius within which planar Laplace noise stays with probability P",
		Args:  cobra.NoArgs,
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
		lat, lon      float64
		latSet, lonOK bool
	)
	cmd := &cobra.Command{
		Use:   "query --state FILE --lat LAT --lon LON [--time T]",
		Short: "Report one location through a persistent session",
		Long: `Sanitise one location query and report it. The session (run so far, budget
spent, configuration) lives in the JSON --state file: it is created with the
configuration flags on first use and updated atomically before the point is
printed, so a crash can over-count the budget but never roll it back.
Configuration flags are only accepted when the state file is created.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			latSet, lonOK = cmd.Flags().Changed("lat"), cmd.Flags().Changed("lon")
			if state == "" || !latSet || !lonOK {
				return errors.New("geoind query: --state, --lat and --lon are required")
			}
			p := geo.Point{Lat: lat, Lon: lon}
			if err := p.Validate(); err != nil {
				return fmt.Errorf("geoind query: %w", err)
			}
			t, err := parseQueryTime(tstr)
			if err != nil {
				return err
			}
			cfg, err := g.config(p)
			if err != nil {
				return err
			}
			if _, err := geoind.ReadState(state); err == nil {
				var changed []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					switch f.Name {
					case "state", "lat", "lon", "time", "json", "seed", "quiet":
					default:
						changed = append(changed, "--"+f.Name)
					}
				})
				if len(changed) > 0 {
					return fmt.Errorf("geoind query: %s: the session exists; its configuration cannot be changed (%s)", state, strings.Join(changed, ", "))
				}
			}
			rep, err := geoind.QueryFile(state, &cfg, p, t, env.Source())
			if geoind.IsExhausted(err) {
				return fmt.Errorf("geoind query: %s: %w (nothing released)", state, err)
			}
			if err != nil {
				return err
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
	g.add(f)
	return cmd
}

func geoindSanitizeCmd(env *cli.Env) *cobra.Command {
	var (
		g       geoindFlags
		in, out string
		lenient bool
	)
	cmd := &cobra.Command{
		Use:   "sanitize --in TRACE --out TRACE [--mechanism im|pm]",
		Short: "Run IM or PM over every point of each trace",
		Long: `Treat every point of each input trace as a location query and write the
reported locations with the original (public) timestamps. Each trace gets its
own session and budget; points after the budget is exhausted are not
released and are counted in the summary. Use --rate 1/N for N points.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in == "" || out == "" {
				return errors.New("geoind sanitize: --in and --out are required")
			}
			traces, _, err := trace.ReadFile(in, trace.ReadOptions{Lenient: lenient})
			if err != nil {
				return err
			}
			src := env.Source()
			type sum struct {
				UID, Name      string
				Points, Output int
				Hard, Skipped  int
				Spent, Budget  float64
				PredictionRate float64
			}
			var sums []sum
			var outs []*trace.Trace
			bar := env.Progress(len(traces), "sanitize")
			for _, tr := range traces {
				bar.Add(1)
				if tr.Len() == 0 {
					continue
				}
				cfg, err := g.config(tr.Points[0].Geo())
				if err != nil {
					return err
				}
				s, err := geoind.NewSession(cfg, src)
				if err != nil {
					return err
				}
				o := &trace.Trace{UID: tr.UID, Name: tr.Name}
				for i, p := range tr.Points {
					rep, err := s.Query(p.Geo(), p.Time)
					if geoind.IsExhausted(err) {
						break
					}
					if err != nil {
						return fmt.Errorf("%s: trace %s point %d: %w", in, tr.Name, i, err)
					}
					o.Points = append(o.Points, trace.Point{Time: p.Time, Lat: rep.Lat, Lon: rep.Lon, Alt: math.NaN()})
				}
				st := s.State()
				rs := st.Run.Stats()
				sums = append(sums, sum{tr.UID, tr.Name, tr.Len(), o.Len(), rs.Hard, rs.Skipped, st.Spent, cfg.Params.Epsilon, rs.PredictionRate})
				if o.Len() > 0 {
					outs = append(outs, o)
				}
			}
			bar.Finish()
			if len(outs) == 0 {
				return fmt.Errorf("geoind sanitize: %s: no point released", in)
			}
			if err := trace.WriteFile(out, outs, ""); err != nil {
				return err
			}
			res := map[string]any{"out": out, "traces": sums}
			return env.Emit(res, func(w io.Writer) error {
				for _, s := range sums {
					fmt.Fprintf(w, "%s %s: released %d of %d points (%d hard, %d skipped), spent %.3g of %.3g\n",
						s.UID, s.Name, s.Output, s.Points, s.Hard, s.Skipped, s.Spent, s.Budget)
				}
				_, err := fmt.Fprintf(w, "wrote %s\n", out)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "input trace file (CSV, GeoJSON, GPX or PLT)")
	f.StringVar(&out, "out", "", "output trace file (format from extension)")
	f.BoolVar(&lenient, "lenient", false, "skip malformed input rows (reported) instead of failing")
	g.add(f)
	return cmd
}
