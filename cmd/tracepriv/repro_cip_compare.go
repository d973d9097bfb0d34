package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/plotter"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/reprocip"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() { registerRepro(reproCIPCompareCmd) }

type cipCompareOutput struct {
	Randomness string                `json:"randomness"`
	Prior      *gp.Prior             `json:"geolife_prior"`
	Windows    int                   `json:"geolife_windows"`
	Rows       []reprocip.CompareRow `json:"rows"`
	Seconds    float64               `json:"seconds"`
	Files      []string              `json:"files,omitempty"`
}

func reproCIPCompareCmd(env *cli.Env) *cobra.Command {
	var (
		data, priorFile, outDir, leffs, user string
		windows                              int
		eps, lambda, radius                  float64
	)
	cmd := &cobra.Command{
		Use:   "cip-compare [--data DIR] [--out DIR]",
		Short: "Compare CIP mechanisms at equal MSE: paper SDPs, optimal, independent Gaussian, planar Laplace",
		Long: `Compare, at equal total noise (MSE), the paper's SDP_A (basic secret) or
Multiple Secrets (all basic secrets), tracepriv's optimal designs ((E2),
(E3)), independent Gaussian noise, and (on real traces) planar Laplace noise.

Paper settings: RBF on indices, n = 50, unit variance, at each --leff: the
basic secret {24} at total noise 1, and all 50 basic secrets at the total noise
Multiple Secrets chooses; epsilons at lambda 2 and r = 1 prior standard
deviation. Truths are simulated from the prior.

Real traces: windows (4-5.3 min, at most 50 points, as tracepriv fit cuts
them) of GeoLife user --user (000, held out of the bundled prior's corpus),
every point a secret; the common noise is what the optimal design needs for
--epsilon at (--lambda, --radius metres) under the prior (--prior, default
the bundled one fitted on users 001-007). The attacker there uses the prior's
kernel at the window's own variance (the design prior's variance is a
conservative low quantile, too small for a good reconstruction).

Every row has the exact (E1) epsilon of the Gaussian mechanisms and its ratio
to the optimal design's, the GP adversary's posterior 2-sigma at the secrets,
and the RMSE (and share within r) of the posterior-mean reconstruction over
200 noise draws per mechanism. Planar Laplace has no CIP epsilon (it is not
Gaussian); its geo-indistinguishability level epsilon*r is reported instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			var ls []float64
			for _, f := range strings.Split(leffs, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || !(v > 0) {
					return fmt.Errorf("repro cip-compare: --leff: %q is not a positive number", f)
				}
				ls = append(ls, v)
			}
			settings := reprocip.PaperSettings(ls)
			var pr *gp.Prior
			var err error
			if priorFile != "" {
				pr, err = gp.ReadPriorFile(priorFile)
			} else {
				pr, err = gp.ReadPrior(bytes.NewReader(sample.Prior))
			}
			if err != nil {
				return fmt.Errorf("repro cip-compare: prior: %w", err)
			}
			geo, err := geolifeSettings(filepath.Join(data, user), pr, windows, eps, lambda, radius)
			if err != nil {
				return fmt.Errorf("repro cip-compare: %w", err)
			}
			settings = append(settings, geo...)
			// One seeded stream per setting (a seeded source is not safe for
			// concurrent use); crypto/rand is shared.
			src := env.Source()
			source := func(i int) noise.Source {
				if env.SeedSet {
					return noise.Seeded(env.Seed + uint64(i) + 1)
				}
				return src
			}
			bar := env.Progress(len(settings), "cip-compare")
			rows, err := reprocip.CompareAll(settings, source, func(done, total int) { bar.Set(done) })
			bar.Finish()
			if err != nil {
				return fmt.Errorf("repro cip-compare: %w", err)
			}
			out := cipCompareOutput{Randomness: noise.Describe(src), Prior: pr, Windows: len(geo), Rows: rows}
			if outDir != "" {
				if err := writeCompare(outDir, &out, ls); err != nil {
					return fmt.Errorf("repro cip-compare: %w", err)
				}
			}
			out.Seconds = time.Since(start).Seconds()
			return env.Emit(out, func(w io.Writer) error { return compareText(w, &out) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", filepath.Join("..", "shared", "data", "geolife"), "GeoLife root directory (users as subdirectories)")
	f.StringVar(&user, "user", "000", "GeoLife user whose windows are sanitised (keep it out of the prior's corpus)")
	f.StringVar(&priorFile, "prior", "", "prior for the real traces (default: the bundled prior fitted on users 001-007)")
	f.IntVar(&windows, "windows", 6, "number of GeoLife windows, evenly spread over the user's windows")
	f.StringVar(&leffs, "leff", "1,2.5,6.1,10", "l_eff values of the paper settings")
	f.Float64Var(&eps, "epsilon", 1, "target epsilon of the optimal design on the real traces")
	f.Float64Var(&lambda, "lambda", 2, "Rényi order on the real traces")
	f.Float64Var(&radius, "radius", 100, "radius r in metres on the real traces")
	f.StringVar(&outDir, "out", "repro-output/cip-compare", "directory for compare.json and the plots (empty: write nothing)")
	return cmd
}

// geolifeSettings cuts the user's traces into fitting windows and returns
// n of them, evenly spread, as every-point settings under the prior.
func geolifeSettings(dir string, pr *gp.Prior, n int, eps, lambda, radius float64) ([]reprocip.CompareSetting, error) {
	if n <= 0 {
		return nil, nil
	}
	files, err := pltFiles(dir)
	if err != nil {
		return nil, err
	}
	var traces []*trace.Trace
	for _, f := range files {
		ts, _, err := trace.ReadFile(f, trace.ReadOptions{})
		if err != nil {
			return nil, err
		}
		traces = append(traces, ts...)
	}
	ws, _, err := prior.Windows(traces, prior.Options{})
	if err != nil {
		return nil, err
	}
	if len(ws) < n {
		return nil, fmt.Errorf("%s: %d windows, asked for %d", dir, len(ws), n)
	}
	k, err := pr.KernelFunc()
	if err != nil {
		return nil, err
	}
	var out []reprocip.CompareSetting
	for j := range n {
		w := ws[j*len(ws)/n]
		truth := attack.Planar{East: w.East, North: w.North}
		// The attacker's prior: the design's kernel at the window's own
		// spread (pooled variance of the de-meaned coordinates).
		v := 0.0
		for i := range w.East {
			v += (w.East[i]*w.East[i] + w.North[i]*w.North[i]) / float64(2*len(w.East))
		}
		ak := *pr
		ak.Variance = v
		advK, err := ak.KernelFunc()
		if err != nil {
			return nil, fmt.Errorf("window %d: %w", j+1, err)
		}
		out = append(out, reprocip.CompareSetting{
			Adversary: gp.Gram(advK, w.T),
			Name:      fmt.Sprintf("GeoLife %s window %d (%s, %d points)", filepath.Base(dir), j+1, traces[w.Trace].Name, len(w.T)),
			Sigma:     gp.Gram(k, w.T), Secrets: cip.EveryPoint(len(w.T)), Lambda: lambda, R: radius,
			Truth: &truth, TargetEpsilon: eps,
		})
	}
	return out, nil
}

func compareText(w io.Writer, out *cipCompareOutput) error {
	num := func(v *reprocip.Num) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(float64(*v), 'g', 4, 64)
	}
	last := ""
	for _, r := range out.Rows {
		if r.Setting != last {
			fmt.Fprintf(w, "%s (MSE %.4g per dimension)\n", r.Setting, r.MSE)
			fmt.Fprintf(w, "  %-36s %10s %10s %8s %10s %10s %8s\n", "mechanism", "loss", "epsilon", "x opt", "post 2sd", "attack", "within r")
			last = r.Setting
		}
		mech := r.Mechanism
		if r.GeoIndEpsilonR != nil {
			mech += fmt.Sprintf(" (eps*r %.3g)", *r.GeoIndEpsilonR)
		}
		fmt.Fprintf(w, "  %-36s %10s %10s %8s %10.4g %10.4g %7.1f%%\n", mech, num(r.LossFactor), num(r.Epsilon), num(r.RatioToOptimal),
			r.Posterior2Sigma, r.AttackRMSE, 100*r.AttackWithinR)
	}
	fmt.Fprintf(w, "randomness %s; %.1f s\n", out.Randomness, out.Seconds)
	for _, f := range out.Files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	return nil
}

// writeCompare writes compare.json and two plots: epsilon against l_eff
// on the paper settings, and the attack RMSE per GeoLife window.
func writeCompare(dir string, out *cipCompareOutput, leffs []float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	mechs := []string{reprocip.MechOptimal, reprocip.MechPaperSDPA, reprocip.MechPaperMultiple, reprocip.MechIndependent, reprocip.MechConcentrated, reprocip.MechPlanarLaplace}
	plotBy := func(name, title, xl, yl string, logY bool, keep func(reprocip.CompareRow) (x, y float64, ok bool)) error {
		var lines []viz.Line
		for _, m := range mechs {
			var xy plotter.XYs
			for _, r := range out.Rows {
				if r.Mechanism != m {
					continue
				}
				if x, y, ok := keep(r); ok && !math.IsInf(y, 0) && (!logY || y > 0) {
					xy = append(xy, plotter.XY{X: x, Y: y})
				}
			}
			if len(xy) > 0 {
				lines = append(lines, viz.Line{Label: m, XY: xy, Points: true, Dashed: m == reprocip.MechOptimal})
			}
		}
		if len(lines) == 0 {
			return nil
		}
		p, err := viz.Chart(lines, viz.ChartOptions{Title: title, XLabel: xl, YLabel: yl, LogY: logY})
		if err != nil {
			return err
		}
		for _, ext := range []string{".svg", ".png"} {
			path := filepath.Join(dir, name+ext)
			if err := viz.Save(p, path, 0, 0); err != nil {
				return err
			}
			out.Files = append(out.Files, path)
		}
		return nil
	}
	leffOf := func(setting string) (float64, bool) {
		for _, l := range leffs {
			if strings.Contains(setting, fmt.Sprintf("l_eff %.3g,", l)) {
				return l, true
			}
		}
		return 0, false
	}
	for _, part := range []struct{ name, tag, title string }{
		{"paper_basic_epsilon", "basic {24}", "basic secret {24}, total noise 1: epsilon (lambda 2, r = 1 sd)"},
		{"paper_all_epsilon", "all basic", "all 50 basic secrets, Multiple Secrets' noise: worst epsilon"},
	} {
		err := plotBy(part.name, part.title, "prior dependence l_eff (samples)", "epsilon (lower = more private)", true,
			func(r reprocip.CompareRow) (float64, float64, bool) {
				l, ok := leffOf(r.Setting)
				if !ok || !strings.Contains(r.Setting, part.tag) || r.Epsilon == nil {
					return 0, 0, false
				}
				return l, float64(*r.Epsilon), true
			})
		if err != nil {
			return err
		}
	}
	win := map[string]float64{}
	err := plotBy("geolife_attack", "GeoLife windows, every point a secret: reconstruction RMSE at equal MSE", "window", "attack RMSE (m, higher = more private)", false,
		func(r reprocip.CompareRow) (float64, float64, bool) {
			if !strings.HasPrefix(r.Setting, "GeoLife") {
				return 0, 0, false
			}
			if _, ok := win[r.Setting]; !ok {
				win[r.Setting] = float64(len(win) + 1)
			}
			return win[r.Setting], r.AttackRMSE, true
		})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "compare.json")
	out.Files = append(out.Files, path)
	return cli.WriteJSONFile(path, out)
}
