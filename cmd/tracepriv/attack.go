package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var (
			in, truthFile, priorFile, plotFile, mean string
			certFiles                                []string
			rf                                       readFlags
			window, denseWindow, stayMaxPoints       int
			unguarded, noPlaces                      bool
			stayRadius                               float64
			stayMin                                  time.Duration
			selectKernels                            string
		)
		cmd := &cobra.Command{
			Use:   "attack --in SANITISED --truth ORIGINAL [--certificate CERT] [--prior PRIOR.json]",
			Short: "Run the strongest GP reconstruction attack of the prior class on a sanitised trace",
			Long: `Play the Gaussian-process adversary against a release of "tracepriv sanitize",
a file or a directory (a corpus release), or one file of a corpus release,
as strong as the class the certificate covers allows: it knows the mechanism
(the noise covariance, recomputed from the public certificate and the
released timestamps), chooses the prior of the certified family (--prior:
another family) and its variance that best explain
the release (restricted likelihood; no truth used), estimates the unknown mean
as a linear trend by generalised least squares (--mean), and reconstructs each
person's points jointly by the posterior mean, with an honest posterior
variance that includes the mean's uncertainty. A guard estimated from the
public noise law alone keeps it from doing worse than the release
(--unguarded turns it off).

Inputs. --in and --truth are files or directories: a release of one file
with its original, or the output directory of a corpus release (sanitize
--in DIR --out OUT) with the input directory. The certificate is found
without --certificate: SANITISED.cert.json next to a file, or the
certificates listed in the manifest.json of a corpus release, for the
whole directory or for one of its files. A file of a corpus release is
attacked on its own points (the person's certificate covers all their
files; the noise law of a subset is its marginal): the report gives
points and certified_points. Released and original traces are paired by
their timestamps, so --truth may be the whole original directory.

Time. When the prior family and the noise are Matérn kernels (the
bundled prior, sanitize's envelope) every person is attacked at once in
linear time by Kalman filtering and smoothing of their state-space form,
with the same posterior as dense kriging (path "state space"). Other
kernels (RBF, periodic) or an e3 release take the dense path, O(n^3) per
likelihood: up to --dense-window points exactly, beyond that the prior is
fitted on blocks and each point kriged from a local window of its
neighbours (path "dense, local windows"), an approximation of the
adversary: an attack is a measurement of what one adversary recovers,
never a bound, and a weaker attack measures less. --window N attacks each
person in independent windows of N points instead (the old behaviour).
Each person is attacked, and errors measured, in the tangent plane at the
centre of their released points (docs/attack.md).

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
the lengthscale (sampling interval to the person's time span) and variance to the
release alone by restricted likelihood under the public noise, keeps the
most likely kernel and reconstructs with it. Each person's model_selection
gives the chosen kernel and lengthscales, its RMSE beside rmse_m and every
candidate's likelihood; model_selection_rmse_m pools the RMSE. It costs
about as much as the main attack per kernel, so it is off by default.

Long runs report progress on stderr (a bar on a terminal, a line every
10 s otherwise; --quiet and --json silence it).`,
			Example: `  tracepriv demo --out demo-output --seed 1
  tracepriv attack --in demo-output/sanitised.plt --truth demo-output/sample.plt
  # a corpus release: the whole directory, or one of its files
  tracepriv sanitize --in internal/sample --out sample-released --prior internal/sample/prior.json --epsilon 1 --lambda 2 --radius 100
  tracepriv attack --in sample-released --truth internal/sample
  tracepriv attack --in sample-released/synth-1/commute.plt --truth internal/sample
  tracepriv attack --in demo-output/sanitised.plt --truth demo-output/sample.plt --plot attack.svg --json`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if in == "" || truthFile == "" {
					return usageErrorf("attack: --in and --truth are required")
				}
				var err error
				if len(certFiles) == 0 {
					if certFiles, err = findCertificates(in); err != nil {
						return fmt.Errorf("attack: %w", err)
					}
				}
				var certs []*sanitize.Certificate
				for _, f := range certFiles {
					cert, err := sanitize.ReadCertificateFile(f)
					if err != nil {
						return fmt.Errorf("attack: --certificate: %w", err)
					}
					certs = append(certs, cert)
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
				if truth, err = pairTraces(truth, released); err != nil {
					return fmt.Errorf("attack: --truth %s: %w", truthFile, err)
				}
				reportSkipped(env, relRep)
				reportSkipped(env, truthRep)
				opt := attack.CertOptions{Unguarded: unguarded, Window: window, DenseWindow: denseWindow,
					Places: attack.PlaceOptions{Off: noPlaces, MaxPoints: stayMaxPoints,
						Stays: attack.StayOptions{RadiusM: stayRadius, MinDuration: stayMin}}}
				if !(stayRadius > 0) || stayMin <= 0 || stayMaxPoints < 2 {
					return usageErrorf("attack: --stay-radius %v, --stay-min %v, --stay-max-points %d: want a positive radius and duration and at least 2 points", stayRadius, stayMin, stayMaxPoints)
				}
				if selectKernels != "" && selectKernels != "none" {
					for _, k := range strings.Split(selectKernels, ",") {
						opt.SelectKernels = append(opt.SelectKernels, strings.TrimSpace(k))
					}
				}
				if !env.JSON && !env.Quiet {
					var ticker *cli.Ticker
					opt.Progress = func(done, total int, detail string) {
						if ticker == nil {
							ticker = env.Ticker(total, "attack")
						}
						ticker.Set(done, detail)
					}
				}
				switch mean {
				case "linear":
				case "constant":
					opt.Mean = attack.MeanConstant
				default:
					return usageErrorf("attack: --mean %q: want linear or constant", mean)
				}
				if priorFile != "" {
					if opt.Prior, err = prior.ReadFile(priorFile); err != nil {
						return fmt.Errorf("attack: --prior: %w", err)
					}
				}
				rep, recs, err := attack.FromCertificates(certs, truth, released, opt)
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
						if p.Points < p.CertifiedPoints {
							fmt.Fprintf(w, " (the files given hold %d of the person's %d certified points)", p.Points, p.CertifiedPoints)
						}
						if p.Windows > 1 {
							fmt.Fprintf(w, "; attacked in %d windows (one attack of all points could do better)", p.Windows)
						}
						fmt.Fprintln(w)
						if a.Path == attack.PathOnePoint {
							fmt.Fprintf(w, "  adversary: %s\n", a.MeanNote)
						} else {
							fmt.Fprintf(w, "  adversary (east): %s, lengthscale %.4g s, variance %.4g m^2 (%s), %s mean; %s path\n", a.Kernel, a.Lengthscale, a.Variance, a.Choice, a.Mean, a.Path)
							if a.MeanNote != "" {
								fmt.Fprintf(w, "  (%s)\n", a.MeanNote)
							}
						}
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
		f.IntVar(&window, "window", 0, "if positive, attack each person in independent windows of this many points (default: all of a person's points at once)")
		f.IntVar(&denseWindow, "dense-window", attack.DefaultDenseWindow, "most points the dense path (RBF or periodic kernels, e3 releases) factorises at once; beyond it, local windows of half as many points")
		f.BoolVar(&unguarded, "unguarded", false, "report the posterior mean as it is, without the truth-free guard")
		f.Float64Var(&stayRadius, "stay-radius", attack.DefaultStayRadiusM, "stay rule: metres from a stay's first point")
		f.DurationVar(&stayMin, "stay-min", attack.DefaultStayMinDuration, "stay rule: shortest stay")
		f.IntVar(&stayMaxPoints, "stay-max-points", attack.DefaultPlaceMaxPoints, "most points of one stay the place adversary uses (longer stays are subsampled evenly)")
		f.BoolVar(&noPlaces, "no-places", false, "skip the place attack on stays")
		f.StringVar(&selectKernels, "select-kernels", "", "also run the model-selection adversary over these kernels (e.g. rbf,matern12,matern32,matern52)")
		rf.add(cmd)
		f.StringSliceVar(&certFiles, "certificate", nil, "certificate of the release (default: SANITISED.cert.json, or the certificates listed in a corpus release's manifest.json); repeat or comma-separate for several")
		f.StringVar(&plotFile, "plot", "", "draw original, release and reconstruction (.svg, .png or .pdf)")
		return cmd
	})
}

// findCertificates finds the certificates of a release without
// --certificate: SANITISED.cert.json next to a file; for a corpus
// release (a directory with manifest.json, or a file under one) the
// certificates the manifest lists for it.
func findCertificates(in string) ([]string, error) {
	st, err := os.Stat(in)
	if err != nil {
		return nil, fmt.Errorf("--in: %w", err)
	}
	if !st.IsDir() {
		if c := sanitize.CertificatePath(in); isRegularFile(c) {
			return []string{c}, nil
		}
	}
	// A corpus release: the manifest in the directory or above the file.
	abs, err := filepath.Abs(in)
	if err != nil {
		return nil, err
	}
	root := abs
	if !st.IsDir() {
		root = filepath.Dir(abs)
	}
	for !isRegularFile(filepath.Join(root, sanitize.ManifestName)) {
		up := filepath.Dir(root)
		if up == root {
			break
		}
		root = up
	}
	manifest := filepath.Join(root, sanitize.ManifestName)
	if !isRegularFile(manifest) {
		if st.IsDir() {
			return nil, fmt.Errorf("--in %s: a directory without %s: not the output of a corpus release; give its certificates with --certificate", in, sanitize.ManifestName)
		}
		return nil, fmt.Errorf("--certificate: neither %s nor a corpus release's %s above %s: give the release's certificate with --certificate", sanitize.CertificatePath(in), sanitize.ManifestName, in)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	var m sanitize.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	var out []string
	seen := map[string]bool{}
	for _, p := range m.Persons {
		covers := rel == "."
		for _, f := range p.Files {
			f = filepath.ToSlash(f)
			if f == rel || strings.HasPrefix(f, rel+"/") {
				covers = true
			}
		}
		if covers && p.Certificate != "" && !seen[p.Certificate] {
			seen[p.Certificate] = true
			out = append(out, filepath.Join(root, filepath.FromSlash(p.Certificate)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--in %s: %s lists no person released in it; give the release's certificate with --certificate", in, manifest)
	}
	return out, nil
}

func isRegularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// pairTraces returns the original of every released trace, in the order
// of released: truth itself when it pairs up in order, otherwise the
// trace of truth with the same timestamps (so that --truth may be a whole
// original directory for one released file).
func pairTraces(truth, released []*trace.Trace) ([]*trace.Trace, error) {
	same := func(a, b *trace.Trace) bool {
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Points {
			if !a.Points[i].Time.Equal(b.Points[i].Time) {
				return false
			}
		}
		return true
	}
	if len(truth) == len(released) {
		ok := true
		for i := range truth {
			ok = ok && same(truth[i], released[i])
		}
		if ok {
			return truth, nil
		}
	}
	type key struct {
		n          int
		start, end int64
	}
	keyOf := func(t *trace.Trace) key {
		if t.Len() == 0 {
			return key{}
		}
		return key{t.Len(), t.Points[0].Time.UnixNano(), t.Points[t.Len()-1].Time.UnixNano()}
	}
	by := map[key][]int{}
	for i, t := range truth {
		by[keyOf(t)] = append(by[keyOf(t)], i)
	}
	used := make([]bool, len(truth))
	out := make([]*trace.Trace, len(released))
	for i, r := range released {
		for _, j := range by[keyOf(r)] {
			if !used[j] && same(truth[j], r) {
				used[j], out[i] = true, truth[j]
				break
			}
		}
		if out[i] == nil {
			desc := "no points"
			if r.Len() > 0 {
				desc = fmt.Sprintf("%d points from %s", r.Len(), r.Points[0].Time.Format(time.RFC3339))
			}
			return nil, fmt.Errorf("no original trace has the timestamps of released trace %d (%s %q, %s): give the input the release was made from", i+1, r.UID, r.Name, desc)
		}
	}
	return out, nil
}
