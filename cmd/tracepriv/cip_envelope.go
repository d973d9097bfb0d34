package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/cip"
	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/prior"
	"github.com/tracepriv/tracepriv/sanitize"
	"github.com/tracepriv/tracepriv/viz"
)

// envelopeReport is the JSON of "cip envelope".
type envelopeReport struct {
	Family        prior.FamilySet       `json:"prior_family"`
	Components    []sanitize.KernelTerm `json:"noise_kernel"`
	Overhead      float64               `json:"overhead"`
	IdealOverhead float64               `json:"ideal_overhead"`
	Proportional  bool                  `json:"proportional"`
	Check         cip.EnvelopeCheck     `json:"check"`
	Plot          string                `json:"plot,omitempty"`
}

// cipEnvelopeCmd is "tracepriv cip envelope".
type cipEnvelopeCmd struct {
	env                         *cli.Env
	priorFile, plotFile, kernel string
	lmin, lmax, period          float64
	stateSpace                  bool
}

func newCIPEnvelopeCmd(env *cli.Env) *cobra.Command {
	c := &cipEnvelopeCmd{env: env}
	long, example := help("cip envelope")
	cmd := &cobra.Command{
		Use:     "envelope (--prior PRIOR.json | --kernel K --lengthscale-min S --lengthscale-max S) [--plot F]",
		Short:   "Show the noise kernel that dominates every prior of a family (the robust design of sanitize)",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.priorFile, "prior", "", "prior family file (tracepriv fit writes one)")
	f.StringVar(&c.kernel, "kernel", "", "family kernel: rbf, matern32 or matern52")
	f.Float64Var(&c.lmin, "lengthscale-min", 0, "smallest lengthscale of the family (s)")
	f.Float64Var(&c.lmax, "lengthscale-max", 0, "largest lengthscale of the family (s)")
	f.Float64Var(&c.period, "period", 0, "period of a periodic kernel (s)")
	f.BoolVar(&c.stateSpace, "state-space", false, "Matérn components even for a single lengthscale")
	f.StringVar(&c.plotFile, "plot", "", "draw the densities (.svg, .png or .pdf)")
	return cmd
}

func (c *cipEnvelopeCmd) run() error {
	if err := cli.CheckFigure("--plot", c.plotFile); err != nil {
		return fmt.Errorf("cip envelope: %w", err)
	}
	var fam prior.FamilySet
	if c.priorFile != "" {
		p, err := prior.ReadFile(c.priorFile)
		if err != nil {
			return fmt.Errorf("cip envelope: --prior: %w", err)
		}
		fam = p.Families()
	} else {
		if c.kernel == "" || c.lmin == 0 || c.lmax == 0 {
			return usageErrorf("cip envelope: give --prior, or --kernel, --lengthscale-min and --lengthscale-max")
		}
		fam = prior.Family{Kernel: c.kernel, LengthscaleMin: c.lmin, LengthscaleMax: c.lmax, Period: c.period}.Set()
	}
	e, err := cip.NewEnvelope(fam, &cip.EnvelopeOptions{StateSpace: c.stateSpace})
	if err != nil {
		return fmt.Errorf("cip envelope: %w", err)
	}
	ideal, err := cip.IdealOverhead(fam)
	if err != nil && !fam.Single() {
		return fmt.Errorf("cip envelope: %w", err)
	}
	rep := &envelopeReport{Family: fam, Overhead: e.Overhead, IdealOverhead: ideal, Proportional: e.Proportional, Check: e.Check, Plot: c.plotFile}
	for _, k := range e.Components {
		rep.Components = append(rep.Components, sanitize.KernelTermOf(k))
	}
	if c.plotFile != "" {
		if err := plotEnvelope(c.plotFile, e); err != nil {
			return fmt.Errorf("cip envelope: --plot: %w", err)
		}
	}
	return c.env.Emit(rep, rep.writeText)
}

func (r *envelopeReport) writeText(w io.Writer) error {
	fmt.Fprintf(w, "family: %v\n", r.Family)
	if r.Proportional {
		_, err := fmt.Fprintln(w, "single lengthscale: the noise is the prior's own kernel (overhead 1, exact)")
		return err
	}
	fmt.Fprintf(w, "noise kernel (weights per unit of the single-lengthscale noise variance):\n")
	for _, t := range r.Components {
		fmt.Fprintf(w, "  %-9s lengthscale %8.4g s  weight %.6g\n", t.Kernel, t.Lengthscale, t.Weight)
	}
	k := r.Check
	fmt.Fprintf(w, "overhead %.4f (RMS %.4f); ideal %.4f; verified on %d frequencies in [%.3g, %.3g] rad/s, tail from %.3g (%s)\n",
		r.Overhead, math.Sqrt(r.Overhead), r.IdealOverhead, k.GridPoints, k.OmegaMin, k.OmegaMax, k.TailFrom, k.TailComponent)
	if r.Plot != "" {
		fmt.Fprintf(w, "wrote %s\n", r.Plot)
	}
	return nil
}

// plotEnvelope draws the members' spectral densities at the family's ends
// and middle, and the envelope noise density, on log-log axes.
func plotEnvelope(path string, e *cip.Envelope) error {
	fs := e.Family
	a, b := fs.LengthscaleRange()
	lo, hi := 1e-2/b, 5/a
	var lines []viz.Line
	for _, f := range fs.Kernels {
		for _, l := range []float64{f.LengthscaleMin, math.Sqrt(f.LengthscaleMin * f.LengthscaleMax), f.LengthscaleMax} {
			k, err := f.Member(1, l)
			if err != nil {
				return err
			}
			sp, ok := k.(gp.Spectral)
			if !ok {
				return fmt.Errorf("a %s kernel has no spectral density to draw", f.Kernel)
			}
			lines = append(lines, viz.Line{Label: fmt.Sprintf("prior %s, lengthscale %.3g s", f.Kernel, l), XY: viz.XYs(densityXY(sp.SpectralDensity, lo, hi)), Dashed: true})
		}
	}
	lines = append(lines, viz.Line{Label: fmt.Sprintf("noise envelope (%.3gx variance)", e.Overhead), XY: viz.XYs(densityXY(e.Density, lo, hi))})
	p, err := viz.Chart(lines, viz.ChartOptions{
		Title: fmt.Sprintf("Spectral envelope of the family %s", fs), XLabel: "angular frequency (rad/s)", YLabel: "spectral density (per unit variance)",
		LogX: true, LogY: true, LegendAuto: true,
	})
	if err != nil {
		return err
	}
	return viz.Save(p, path, 0, 0)
}

// densityXY samples d on a log grid over [lo, hi], where it is above
// 1e-12 d(lo) (a log axis cannot show zero).
func densityXY(d func(float64) float64, lo, hi float64) (ws, vs []float64) {
	for w := lo; w <= hi; w *= 1.02 {
		if v := d(w); v > 1e-12*d(lo) {
			ws, vs = append(ws, w), append(vs, v)
		}
	}
	return ws, vs
}
