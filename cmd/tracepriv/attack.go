package main

import (
	"errors"
	"fmt"
	"io"

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
			window                                             int
			unguarded                                          bool
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
release and reconstruction.`,
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
				opt := attack.CertOptions{Unguarded: unguarded, Window: window}
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
		rf.add(cmd)
		f.StringVar(&certFile, "certificate", "", "certificate of the release (default SANITISED.cert.json)")
		f.StringVar(&plotFile, "plot", "", "draw original, release and reconstruction (.svg, .png or .pdf)")
		return cmd
	})
}
