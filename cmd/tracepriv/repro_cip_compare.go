package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/internal/repro"
	"github.com/tracepriv/tracepriv/internal/sample"
	"github.com/tracepriv/tracepriv/noise"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/trace"
)

func init() { registerRepro(reproCIPCompareCmd) }

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
deviation. Truths are drawn from the prior with mean zero, so the strongest
adversary knows the prior and the mean: it reconstructs by the exact
posterior mean.

Real traces: windows (4-5.3 min, at most 50 points, as tracepriv fit cuts
them) of GeoLife user --user (000, held out of the bundled prior's corpus)
with --data, or of the bundled synthetic sample without it (labelled so),
every point a secret; the common noise is what the optimal design needs for
--epsilon at (--lambda, --radius metres) under the prior (--prior, default
the bundled one fitted on users 001-007) at its nominal lengthscale. The
adversary there is the one of the prior's public class, as tracepriv attack
plays it: lengthscale in the family's range and variance at least the
prior's, chosen by restricted likelihood of the release; a linear trend
estimated by GLS; the release guard on.

Every row has the exact (E1) epsilon of the Gaussian mechanisms and its ratio
to the optimal design's; over 200 noise draws per mechanism, the RMSE and
share within r of the adversary's reconstruction and of the release read as
it is, the adversary's stated 2-sigma and the coverage of its 95 % intervals.
The attack of a row is the better of the two (attack_rmse, attack_reads): a
reconstruction worse than the release is marked, and the release itself is
then the attack. Planar Laplace has no CIP epsilon (it is not
Gaussian); its geo-indistinguishability level epsilon*r is reported instead.`,
		Example: `  tracepriv repro cip-compare --leff 2.5 --windows 2 --out cc-output
  tracepriv repro cip-compare --data GEOLIFE_DIR --seed 1 --out repro-output/cip-compare   # the documented run, minutes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			var ls []float64
			for _, f := range strings.Split(leffs, ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || !(v > 0) {
					return usageErrorf("repro cip-compare: --leff: %q is not a positive number", f)
				}
				ls = append(ls, v)
			}
			settings := repro.CIPPaperSettings(ls)
			var pr *prior.Prior
			var err error
			if priorFile != "" {
				pr, err = prior.ReadFile(priorFile)
			} else {
				pr, err = prior.Read(bytes.NewReader(sample.Prior))
			}
			if err != nil {
				return fmt.Errorf("repro cip-compare: prior: %w", err)
			}
			var traces []*trace.Trace
			label := "GeoLife"
			if data == "" {
				label = "synthetic sample"
				// The bundled (synthetic) sample trace.
				r, err := trace.NewReader(bytes.NewReader(sample.PLT), trace.PLT, trace.ReadOptions{UID: sample.UID, Name: sample.Name})
				if err == nil {
					traces, err = trace.ReadAll(r)
				}
				if err != nil {
					return fmt.Errorf("repro cip-compare: bundled sample: %w", err)
				}
			} else if windows > 0 {
				files, _, err := trace.Files(filepath.Join(data, user))
				if err != nil {
					return fmt.Errorf("repro cip-compare: --data: %w", err)
				}
				if _, err := trace.ReadFiles(files, trace.ReadOptions{}, func(_ string, ts []*trace.Trace) { traces = append(traces, ts...) }); err != nil {
					return fmt.Errorf("repro cip-compare: %w", err)
				}
			}
			geo, err := repro.CIPTraceSettings(label, traces, pr, windows, eps, lambda, radius)
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
			rows, err := repro.CIPCompareAll(settings, source, func(done, total int) { bar.Set(done) })
			bar.Finish()
			if err != nil {
				return fmt.Errorf("repro cip-compare: %w", err)
			}
			out := repro.CIPCompareReport{Randomness: noise.Describe(src), Prior: pr, Windows: len(geo), Data: label, Rows: rows}
			if outDir != "" {
				if err := repro.WriteCIPCompare(outDir, &out, ls); err != nil {
					return fmt.Errorf("repro cip-compare: %w", err)
				}
			}
			out.Seconds = time.Since(start).Seconds()
			return env.Emit(out, func(w io.Writer) error { return compareText(w, &out) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "GeoLife root directory (users as subdirectories); empty: the bundled synthetic sample trace")
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

func compareText(w io.Writer, out *repro.CIPCompareReport) error {
	num := func(v *repro.Num) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(float64(*v), 'g', 4, 64)
	}
	last := ""
	for _, r := range out.Rows {
		if r.Setting != last {
			fmt.Fprintf(w, "%s (MSE %.4g per dimension)\n  adversary: %s\n", r.Setting, r.MSE, r.Adversary)
			fmt.Fprintf(w, "  %-36s %10s %10s %8s %10s %10s %10s %17s %7s\n", "mechanism", "loss", "epsilon", "x opt", "post 2sd",
				"reconstr.", "release", "within r rec/rel", "cover")
			last = r.Setting
		}
		mech := r.Mechanism
		if r.GeoIndEpsilonR != nil {
			mech += fmt.Sprintf(" (eps*r %.3g)", *r.GeoIndEpsilonR)
		}
		// A reconstruction worse than the release is not the attack: the
		// adversary can always read the release as it is.
		mark := ""
		if r.AttackReads == "release" {
			mark = "  reconstruction worse than the release: the attack reads the release"
		}
		fmt.Fprintf(w, "  %-36s %10s %10s %8s %10.4g %10.4g %10.4g %7.1f%% %7.1f%% %6.1f%%%s\n", mech, num(r.LossFactor), num(r.Epsilon), num(r.RatioToOptimal),
			r.Posterior2Sigma, r.ReconstructionRMSE, r.ReleaseRMSE, 100*r.ReconstructionWithinR, 100*r.ReleaseWithinR, 100*r.Coverage95, mark)
	}
	fmt.Fprintf(w, "randomness %s; %.1f s\n", out.Randomness, out.Seconds)
	for _, f := range out.Files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	return nil
}
