package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, truthFile, priorFile, certFile, plotFile, mean string
			rf                                                 readFlags
			window, stayMaxPoints                              int
			unguarded, noPlaces                                bool
			stayRadius                                         float64
			stayMin                                            time.Duration
			selectKernels                                      string
		)
		cmd := &cobra.Command{
			Use:   "attack --in SANITISED --truth ORIGINAL [--certificate CERT] [--prior PRIOR.json]",
			Short: "Run the strongest GP reconstruction attack of the prior class on a sanitised trace",
			Long: `Play the Gaussian-process adversary against a release of "tracepriv sanitize",
as strong as the class the certificate covers allows: it knows the mechanism
(the noise covariance, recomputed from the public certificate, default
SANITISED.cert.json, and the released timestamps), chooses the prior of the
certified family (--prior: another family) and its variance that best explain
the release (restricted likelihood; no truth used), estimates the unknown mean
as a linear trend by generalised least squares (--mean), and reconstructs each
person's points jointly by the posterior mean, with an honest posterior
variance that includes the mean's uncertainty. A guard estimated from the
public noise law alone keeps it from doing worse than the release
(--unguarded turns it off).

The report puts the reconstruction beside the release read as it is, at the
secret points: planar RMSE (rmse_m, release_rmse_m) and median, the share
within the certificate's radius (within_radius_fraction), the adversary's own
2-sigma and the coverage of its 95 % ellipses, pooled and per person. The
certified epsilon bounds how far any adversary in the class can move its
beliefs; this is one concrete adversary's outcome. --plot draws original,
release and reconstruction.

Places. A release certified point by point can still give away where a
person stayed: averaging many released points taken while they stood still
cancels noise that is not common to them all. The command finds the stays
of the TRUE trace (Li et al.'s stay-point rule: a run of points within
--stay-radius of its first point lasting --stay-min or more; the truth only
says where to look) and plays the place adversary on each: the generalised
least squares estimate of one fixed position from the stay's released
points under the certificate's noise covariance (stays longer than
--stay-max-points are subsampled evenly). stay_error_m is the median over
the stays of the distance from that estimate to the stay's true centroid:
"the stay's location is recovered to within stay_error_m metres" in half
the stays. Compare it with release_rmse_m, the error of one released point.
stay_plain_mean_error_m is the same median for the plain mean of the
released points (the naive attack); "stays" lists each stay (start and end
index and time, points, duration, both errors, the adversary's own standard
deviation per coordinate, stated_sd_m). stay_error_m is null when the true
trace has no stay.

Model selection. --select-kernels rbf,matern12,matern32,matern52 also
plays an adversary that does not know the prior family: per kernel it fits
the lengthscale (sampling interval to window length) and variance to the
release alone by restricted likelihood under the public noise, keeps the
most likely kernel and reconstructs with it. Each person's model_selection
gives the chosen kernel and lengthscales, its RMSE beside rmse_m and every
candidate's likelihood; model_selection_rmse_m pools the RMSE. It costs
about as much as the main attack per kernel, so it is off by default.

Long runs report progress on stderr (a bar on a terminal, a line every
10 s otherwise; --quiet silences it).`,
			Example: `  tracepriv demo --out demo-output --seed 1
  tracepriv attack --in demo-output/sanitised.plt --truth demo-output/sample.plt
  tracepriv attack --in demo-output/sanitised.plt --truth demo-output/sample.plt --plot attack.svg --json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if in == "" || truthFile == "" {
					return errors.New("attack: --in and --truth are required")
				}
				if certFile == "" {
					certFile = sanitize.CertificatePath(in)
				}
				cert, err := sanitize.ReadCertificateFile(certFile)
				if err != nil {
					return fmt.Errorf("attack: --certificate: %w", err)
				}
				released, relRep, err := rf.read(in)
				if err != nil {
					return fmt.Errorf("attack: --in: %w", err)
				}
				// The original must be read as sanitize read it (the same
				// policy), so that its traces match the certificate.
				truth, truthRep, err := rf.read(truthFile)
				if err != nil {
					return fmt.Errorf("attack: --truth: %w", err)
				}
				reportSkipped(env, relRep)
				reportSkipped(env, truthRep)
				opt := attack.CertOptions{Unguarded: unguarded, Window: window,
					Places: attack.PlaceOptions{Off: noPlaces, MaxPoints: stayMaxPoints,
						Stays: attack.StayOptions{RadiusM: stayRadius, MinDuration: stayMin}}}
				if !(stayRadius > 0) || stayMin <= 0 || stayMaxPoints < 2 {
					return fmt.Errorf("attack: --stay-radius %v, --stay-min %v, --stay-max-points %d: want a positive radius and duration and at least 2 points", stayRadius, stayMin, stayMaxPoints)
				}
				if selectKernels != "" && selectKernels != "none" {
					for _, k := range strings.Split(selectKernels, ",") {
						opt.SelectKernels = append(opt.SelectKernels, strings.TrimSpace(k))
					}
				}
				var ticker *cli.Ticker
				opt.Progress = func(done, total int, detail string) {
					if ticker == nil {
						ticker = env.Ticker(total, "attack")
					}
					ticker.Set(done, detail)
				}
				switch mean {
				case "linear":
				case "constant":
					opt.Mean = attack.MeanConstant
				default:
					return fmt.Errorf("attack: --mean %q: want linear or constant", mean)
				}
				if priorFile != "" {
					if opt.Prior, err = gp.ReadPriorFile(priorFile); err != nil {
						return fmt.Errorf("attack: --prior: %w", err)
					}
				}
				rep, recs, err := attack.FromCertificate(cert, truth, released, opt)
				if err != nil {
					return err
				}
				truthRep.Add(relRep)
				out := struct {
					*attack.CertReport
					trace.InputSummary
				}{rep, truthRep.Summary()}
				var series []viz.Series
				for i := range truth {
					series = append(series,
						viz.Series{Label: "original", Trace: truth[i], Role: viz.RoleOriginal},
						viz.Series{Label: "released", Trace: released[i], Role: viz.RoleReleased},
						viz.Series{Label: "GP reconstruction", Trace: recs[i], Role: viz.RoleReconstruction})
				}
				if plotFile != "" {
					p, err := viz.Map(series, viz.MapOptions{Title: "GP posterior-mean attack"})
					if err != nil {
						return err
					}
					if err := viz.Save(p, plotFile, 0, 0); err != nil {
						return err
					}
				}
				return env.Emit(out, func(w io.Writer) error {
					for _, p := range rep.Persons {
						a := p.Adversary.East
						fmt.Fprintf(w, "person %q: %d points, %d secret points, certified epsilon %.4g", p.UID, p.Points, p.Secrets, p.EpsilonCertified)
						if p.Windows > 1 {
							fmt.Fprintf(w, "; attacked in %d windows (one attack of all points could do better)", p.Windows)
						}
						fmt.Fprintln(w)
						fmt.Fprintf(w, "  adversary (east): %s, lengthscale %.4g s, variance %.4g m^2 (%s), %s mean\n", a.Kernel, a.Lengthscale, a.Variance, a.Choice, a.Mean)
						fmt.Fprintf(w, "  error at secret points: reconstruction RMSE %.1f m (median %.1f), release read as is %.1f m (median %.1f)\n",
							p.ReconstructedRMSE, p.ReconstructedMedian, p.ReleasedRMSE, p.ReleasedMedian)
						fmt.Fprintf(w, "  within r = %g m: reconstruction %.1f %%, release %.1f %%; adversary's 2-sigma %.1f m, its 95 %% ellipses cover %.1f %%\n",
							p.Radius, 100*p.WithinRadius, 100*p.ReleaseWithinRadius, p.Posterior2Sigma, 100*p.Coverage95)
						if s := p.Selection; s != nil {
							fmt.Fprintf(w, "  model selection (prior family unknown to it): chose %s, lengthscale %.4g s east, %.4g s north; RMSE %.1f m (median %.1f)\n",
								s.Kernel, s.East.Lengthscale, s.North.Lengthscale, s.RMSE, s.Median)
						}
					}
					if rep.StayRule != nil {
						if rep.StayErrorM == nil {
							fmt.Fprintf(w, "places: no stay of %s or more within %g m in the true trace\n", time.Duration(rep.StayRule.MinDurationS*float64(time.Second)), rep.StayRule.RadiusM)
						} else {
							fmt.Fprintf(w, "places: %d stays of %s or more in the true trace; the stay's location is recovered to within %.1f m (median over stays; plain mean of the released points: %.1f m), against %.1f m RMS per released point\n",
								len(rep.Stays), time.Duration(rep.StayRule.MinDurationS*float64(time.Second)), *rep.StayErrorM, *rep.StayPlainMeanErrorM, rep.ReleaseRMSE)
							for _, s := range rep.Stays {
								sub := ""
								if s.PointsUsed < s.Points {
									sub = fmt.Sprintf(", %d used", s.PointsUsed)
								}
								fmt.Fprintf(w, "  stay %s-%s (%s, %d points%s): recovered to within %.1f m (stated SD %.1f m per coordinate), plain mean %.1f m\n",
									s.StartTime.Format(time.DateTime), s.EndTime.Format(time.TimeOnly), time.Duration(s.DurationS*float64(time.Second)).Round(time.Second), s.Points, sub, s.ErrorM, s.StatedSDM, s.PlainMeanErrorM)
							}
						}
					}
					if len(rep.Persons) > 1 {
						fmt.Fprintf(w, "all %d secret points: reconstruction RMSE %.1f m, release %.1f m; within r: %.1f %%\n", rep.SecretPoints, rep.RMSE, rep.ReleaseRMSE, 100*rep.WithinRadius)
					}
					return nil
				})
			},
		}
		f := cmd.Flags()
		f.StringVar(&in, "in", "", "sanitised trace")
		f.StringVar(&truthFile, "truth", "", "original trace (same timestamps)")
		f.StringVar(&priorFile, "prior", "", "the adversary's prior family (default: the certificate's)")
		f.StringVar(&mean, "mean", "linear", "mean the adversary estimates: linear (trend) or constant")
		f.IntVar(&window, "window", attack.DefaultWindow, "most points attacked at once (each likelihood costs O(n^3)); longer people are attacked window by window")
		f.BoolVar(&unguarded, "unguarded", false, "report the posterior mean as it is, without the truth-free guard")
		f.Float64Var(&stayRadius, "stay-radius", attack.DefaultStayRadiusM, "stay rule: metres from a stay's first point")
		f.DurationVar(&stayMin, "stay-min", attack.DefaultStayMinDuration, "stay rule: shortest stay")
		f.IntVar(&stayMaxPoints, "stay-max-points", attack.DefaultPlaceMaxPoints, "most points of one stay the place adversary uses (longer stays are subsampled evenly)")
		f.BoolVar(&noPlaces, "no-places", false, "skip the place attack on stays")
		f.StringVar(&selectKernels, "select-kernels", "", "also run the model-selection adversary over these kernels (e.g. rbf,matern12,matern32,matern52)")
		rf.add(cmd)
		f.StringVar(&certFile, "certificate", "", "certificate of the release (default SANITISED.cert.json)")
		f.StringVar(&plotFile, "plot", "", "draw original, release and reconstruction (.svg, .png or .pdf)")
		return cmd
	})
}
