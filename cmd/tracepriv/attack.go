package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/attack"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/trace"
	"github.com/tracepriv/tracepriv/viz"
)

func init() { register(newAttackCmd) }

// attackCmd is "tracepriv attack".
type attackCmd struct {
	env                                      *cli.Env
	in, truthFile, priorFile, plotFile, mean string
	certFiles                                []string
	rf                                       cli.ReadFlags
	window, denseWindow, stayMaxPoints       int
	unguarded, noPlaces                      bool
	stayRadius                               float64
	stayMin                                  time.Duration
	selectKernels                            string
}

func newAttackCmd(env *cli.Env) *cobra.Command {
	c := &attackCmd{env: env}
	long, example := help("attack")
	cmd := &cobra.Command{
		Use:     "attack --in SANITISED --truth ORIGINAL [--certificate CERT] [--prior PRIOR.json]",
		Short:   "Run the strongest GP reconstruction attack of the prior class on a sanitised trace",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.in, "in", "", "sanitised trace")
	f.StringVar(&c.truthFile, "truth", "", "original trace (same timestamps)")
	f.StringVar(&c.priorFile, "prior", "", "the adversary's prior family (default: the certificate's)")
	f.StringVar(&c.mean, "mean", "linear", "mean the adversary estimates: linear (trend) or constant")
	f.IntVar(&c.window, "window", 0, "if positive, attack each person in independent windows of this many points (default: all of a person's points at once)")
	f.IntVar(&c.denseWindow, "dense-window", attack.DefaultDenseWindow, "most points the dense path (RBF or periodic kernels, e3 releases) factorises at once; beyond it, local windows of half as many points")
	f.BoolVar(&c.unguarded, "unguarded", false, "report the posterior mean as it is, without the truth-free guard")
	f.Float64Var(&c.stayRadius, "stay-radius", attack.DefaultStayRadiusM, "stay rule: metres from a stay's first point")
	f.DurationVar(&c.stayMin, "stay-min", attack.DefaultStayMinDuration, "stay rule: shortest stay")
	f.IntVar(&c.stayMaxPoints, "stay-max-points", attack.DefaultPlaceMaxPoints, "most points of one stay the place adversary uses (longer stays are subsampled evenly)")
	f.BoolVar(&c.noPlaces, "no-places", false, "skip the place attack on stays")
	f.StringVar(&c.selectKernels, "select-kernels", "", "also run the model-selection adversary over these kernels (e.g. rbf,matern12,matern32,matern52)")
	c.rf.Add(cmd)
	f.StringSliceVar(&c.certFiles, "certificate", nil, "certificate of the release (default: SANITISED.cert.json, or the certificates listed in a corpus release's manifest.json); repeat or comma-separate for several")
	f.StringVar(&c.plotFile, "plot", "", "draw original, release and reconstruction (.svg, .png or .pdf)")
	return cmd
}

func (c *attackCmd) run() error {
	if c.in == "" || c.truthFile == "" {
		return usageErrorf("attack: --in and --truth are required")
	}
	if err := cli.CheckFigure("--plot", c.plotFile); err != nil {
		return fmt.Errorf("attack: %w", err)
	}
	if err := (attack.CertOptions{Window: c.window, DenseWindow: c.denseWindow}).Check(); err != nil {
		err, _ = param.AsFlag(err, map[string]string{"dense_window": "dense-window"})
		return usageErrorf("attack: %w", err)
	}
	certs, err := c.certificates()
	if err != nil {
		return fmt.Errorf("attack: %w", err)
	}
	released, relRep, err := c.rf.Read(c.in)
	if err != nil {
		return fmt.Errorf("attack: --in: %w", err)
	}
	// The original must be read as sanitize read it (the same policy), so
	// that its traces match the certificate.
	truth, truthRep, err := c.rf.Read(c.truthFile)
	if err != nil {
		return fmt.Errorf("attack: --truth: %w", err)
	}
	if truth, err = attack.PairTraces(truth, released); err != nil {
		// The original is named on the command line: the fix is --truth.
		return usageErrorf("attack: --truth %s: %w", c.truthFile, err)
	}
	c.env.ReportSkipped(relRep)
	c.env.ReportSkipped(truthRep)
	opt, err := c.options()
	if err != nil {
		return err
	}
	rep, recs, err := attack.FromCertificates(certs, truth, released, opt)
	if err != nil {
		return err
	}
	truthRep.Add(relRep)
	if c.plotFile != "" {
		var series []viz.Series
		for i := range truth {
			series = append(series,
				viz.Series{Label: "original", Trace: truth[i], Role: viz.RoleOriginal},
				viz.Series{Label: "released", Trace: released[i], Role: viz.RoleReleased},
				viz.Series{Label: "GP reconstruction", Trace: recs[i], Role: viz.RoleReconstruction})
		}
		p, err := viz.Map(series, viz.MapOptions{Title: "GP posterior-mean attack"})
		if err != nil {
			return err
		}
		if err := viz.Save(p, c.plotFile, 0, 0); err != nil {
			return err
		}
	}
	out := struct {
		*attack.CertReport
		trace.InputSummary
	}{rep, truthRep.Summary()}
	return c.env.Emit(out, rep.WriteText)
}

// certificates reads --certificate, or the certificates found beside --in
// (sanitize.FindCertificates).
func (c *attackCmd) certificates() ([]*sanitize.Certificate, error) {
	files := c.certFiles
	if len(files) == 0 {
		var err error
		files, err = sanitize.FindCertificates(c.in)
		if errors.Is(err, sanitize.ErrNoCertificate) {
			return nil, fmt.Errorf("%w; give the release's certificates with --certificate", err)
		} else if err != nil {
			return nil, fmt.Errorf("--in: %w", err)
		}
	}
	var certs []*sanitize.Certificate
	for _, f := range files {
		cert, err := sanitize.ReadCertificateFile(f)
		if err != nil {
			return nil, fmt.Errorf("--certificate: %w", err)
		}
		certs = append(certs, cert)
	}
	return certs, nil
}

// options are the flags' attack.CertOptions.
func (c *attackCmd) options() (attack.CertOptions, error) {
	opt := attack.CertOptions{Unguarded: c.unguarded, Window: c.window, DenseWindow: c.denseWindow,
		Places: attack.PlaceOptions{Off: c.noPlaces, MaxPoints: c.stayMaxPoints,
			Stays: attack.StayOptions{RadiusM: c.stayRadius, MinDuration: c.stayMin}}}
	if !(c.stayRadius > 0) || c.stayMin <= 0 || c.stayMaxPoints < 2 {
		return opt, usageErrorf("attack: --stay-radius %v, --stay-min %v, --stay-max-points %d: want a positive radius and duration and at least 2 points", c.stayRadius, c.stayMin, c.stayMaxPoints)
	}
	if c.selectKernels != "" && c.selectKernels != "none" {
		for _, k := range strings.Split(c.selectKernels, ",") {
			opt.SelectKernels = append(opt.SelectKernels, strings.TrimSpace(k))
		}
	}
	if !c.env.JSON && !c.env.Quiet {
		var ticker *cli.Ticker
		opt.Progress = func(done, total int, detail string) {
			if ticker == nil {
				ticker = c.env.Ticker(total, "attack")
			}
			ticker.Set(done, detail)
		}
	}
	switch c.mean {
	case "linear":
	case "constant":
		opt.Mean = attack.MeanConstant
	default:
		return opt, usageErrorf("attack: --mean %q: want linear or constant", c.mean)
	}
	if c.priorFile != "" {
		var err error
		if opt.Prior, err = prior.ReadFile(c.priorFile); err != nil {
			return opt, fmt.Errorf("attack: --prior: %w", err)
		}
	}
	return opt, nil
}
