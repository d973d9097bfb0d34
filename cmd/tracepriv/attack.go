package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

// attackReport is the JSON of "attack": one report per trace.
type attackReport struct {
	Traces []attackTrace `json:"traces"`
}

type attackTrace struct {
	UID  string `json:"uid,omitempty"`
	Name string `json:"name,omitempty"`
	*attack.Report
	// EpsilonCertified is the certificate's epsilon_max, for reading the
	// attack against the guarantee.
	EpsilonCertified float64 `json:"epsilon_certified"`
	AdversaryPrior   string  `json:"adversary_prior"`
}

// readCertificates reads a sanitize certificate file: one trace's
// certificate, or a multi-trace file.
func readCertificates(path string) ([]*sanitize.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var multi struct {
		Traces []*sanitize.Certificate `json:"traces"`
	}
	if err := json.Unmarshal(b, &multi); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(multi.Traces) > 0 {
		return multi.Traces, nil
	}
	var one sanitize.Certificate
	if err := json.Unmarshal(b, &one); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if one.Version != sanitize.CertificateVersion || one.Prior == nil {
		return nil, fmt.Errorf("%s: not a tracepriv sanitize certificate (version %d)", path, one.Version)
	}
	return []*sanitize.Certificate{&one}, nil
}

func init() {
	register(func(env *cli.Env) *cobra.Command {
		var in, truthFile, priorFile, certFile, plotFile string
		cmd := &cobra.Command{
			Use:   "attack --in SANITISED --truth ORIGINAL [--prior PRIOR.json] [--certificate CERT]",
			Short: "Run the GP posterior-mean reconstruction attack on a sanitised trace",
			Long: `Play the adversary of Meehan & Chaudhuri against a release of "tracepriv
sanitize": knowing the mechanism (its noise covariance, recomputed from the
public certificate, default SANITISED.cert.json) and a GP prior (--prior;
default the certificate's), it reconstructs each point by the posterior mean
with a GLS estimate of the unknown mean, in local metres. The report compares
the release and the reconstruction with the original at the secret points:
RMSE and median planar error, the share reconstructed within the certificate's
radius, and the adversary's own posterior 2-sigma. --plot draws original,
release and reconstruction.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				if in == "" || truthFile == "" {
					return errors.New("attack: --in and --truth are required")
				}
				if certFile == "" {
					certFile = in + ".cert.json"
				}
				certs, err := readCertificates(certFile)
				if err != nil {
					return fmt.Errorf("attack: --certificate: %w", err)
				}
				released, _, err := trace.ReadFile(in, trace.ReadOptions{})
				if err != nil {
					return fmt.Errorf("attack: %w", err)
				}
				truth, _, err := trace.ReadFile(truthFile, trace.ReadOptions{})
				if err != nil {
					return fmt.Errorf("attack: %w", err)
				}
				if len(released) != len(truth) || len(released) != len(certs) {
					return fmt.Errorf("attack: %s has %d traces, %s %d and %s %d certificates", in, len(released), truthFile, len(truth), certFile, len(certs))
				}
				var adv *gp.Prior
				if priorFile != "" {
					if adv, err = gp.ReadPriorFile(priorFile); err != nil {
						return fmt.Errorf("attack: --prior: %w", err)
					}
				}
				var rep attackReport
				var series []viz.Series
				for k, c := range certs {
					at, rec, err := attackOne(truth[k], released[k], c, adv)
					if err != nil {
						return fmt.Errorf("attack: trace %d: %w", k+1, err)
					}
					rep.Traces = append(rep.Traces, *at)
					series = append(series,
						viz.Series{Label: "original", Trace: truth[k]},
						viz.Series{Label: "released", Trace: released[k]},
						viz.Series{Label: "GP reconstruction", Trace: rec})
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
				return env.Emit(rep, func(w io.Writer) error {
					for _, t := range rep.Traces {
						fmt.Fprintf(w, "%s %s: %d points, %d secret points, certified epsilon %.4g; adversary prior: %s\n", t.UID, t.Name, t.Points, t.Secrets, t.EpsilonCertified, t.AdversaryPrior)
						fmt.Fprintf(w, "  error at secret points: release RMSE %.1f m (median %.1f), reconstruction RMSE %.1f m (median %.1f)\n",
							t.ReleasedRMSE, t.ReleasedMedian, t.ReconstructedRMSE, t.ReconstructedMedian)
						fmt.Fprintf(w, "  reconstructed within r = %g m: %.1f %%; adversary's posterior 2-sigma %.1f m\n", t.Radius, 100*t.WithinRadius, t.Posterior2Sigma)
					}
					return nil
				})
			},
		}
		f := cmd.Flags()
		f.StringVar(&in, "in", "", "sanitised trace")
		f.StringVar(&truthFile, "truth", "", "original trace (same timestamps)")
		f.StringVar(&priorFile, "prior", "", "the adversary's prior (default: the mechanism's, from the certificate)")
		f.StringVar(&certFile, "certificate", "", "certificate of the release (default SANITISED.cert.json)")
		f.StringVar(&plotFile, "plot", "", "draw original, release and reconstruction (.svg, .png or .pdf)")
		return cmd
	})
}

// attackOne recomputes the mechanism from its certificate and runs the
// reconstruction on one trace.
func attackOne(truth, released *trace.Trace, c *sanitize.Certificate, adv *gp.Prior) (*attackTrace, *trace.Trace, error) {
	n := truth.Len()
	if released.Len() != n || c.Points != n {
		return nil, nil, fmt.Errorf("original %d points, release %d, certificate %d", n, released.Len(), c.Points)
	}
	for i := range n {
		if !truth.Points[i].Time.Equal(released.Points[i].Time) {
			return nil, nil, fmt.Errorf("point %d: original time %v, release %v", i, truth.Points[i].Time, released.Points[i].Time)
		}
	}
	ts, err := gp.Seconds(truth.Times())
	if err != nil {
		return nil, nil, err
	}
	secrets := make([]cip.Secret, len(c.Secrets))
	var points []int
	for i, s := range c.Secrets {
		secrets[i] = cip.Secret{Indices: s.Indices}
		points = append(points, s.Indices...)
	}
	d, err := sanitize.Design(ts, secrets, sanitize.Options{Prior: c.Prior, Epsilon: c.EpsilonTarget, Lambda: c.Lambda, Radius: c.RadiusM})
	if err != nil {
		return nil, nil, err
	}
	sigma, name := d.Sigma, "mechanism's (certificate)"
	if adv != nil {
		k, err := adv.KernelFunc()
		if err != nil {
			return nil, nil, err
		}
		sigma, name = gp.Gram(k, ts), fmt.Sprintf("%s, variance %g m^2, lengthscale %g s", adv.Kernel, adv.Variance, adv.Lengthscale)
	}
	geoPts := func(t *trace.Trace) []geo.Point {
		out := make([]geo.Point, t.Len())
		for i, p := range t.Points {
			out[i] = p.Geo()
		}
		return out
	}
	tp, rp := attack.Project(c.Origin, geoPts(truth)), attack.Project(c.Origin, geoPts(released))
	r, rec, err := attack.Run(sigma, d.SigmaG, tp, rp, points, c.RadiusM)
	if err != nil {
		return nil, nil, err
	}
	enu := geo.NewENU(c.Origin)
	rt := &trace.Trace{UID: truth.UID, Name: "reconstruction"}
	for i, p := range truth.Points {
		q := enu.Inverse(rec.East[i], rec.North[i])
		rt.Points = append(rt.Points, trace.Point{Time: p.Time, Lat: q.Lat, Lon: q.Lon})
	}
	return &attackTrace{UID: truth.UID, Name: truth.Name, Report: r, EpsilonCertified: c.EpsilonMax, AdversaryPrior: name}, rt, nil
}
