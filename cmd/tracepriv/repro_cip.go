package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/internal/cli"
	"github.com/tracepriv/tracepriv/repro"
)

func init() { registerRepro(newReproCIPCmd) }

// reproCIPCmd is "tracepriv repro cip": the panels of Figure 2 of Meehan
// and Chaudhuri (repro.RunCIPPanels), their redrawing, or the sensitivity
// study of the misspecified panels (repro.RunCIPSensitivities).
type reproCIPCmd struct {
	env                          *cli.Env
	figure, out, leffDir, python string
	optimal, replot, sensitivity bool
	nugget                       float64
}

func newReproCIPCmd(env *cli.Env) *cobra.Command {
	c := &reproCIPCmd{env: env}
	long, example := help("repro cip")
	cmd := &cobra.Command{
		Use:     "cip --figure 2a|...|2h|all [--out DIR]",
		Short:   "Figure 2 of Meehan & Chaudhuri (AISTATS 2021): SDP mechanisms vs Approach C",
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.figure, "figure", "", "panel 2a..2h, a comma-separated list, or all")
	f.StringVar(&c.out, "out", "repro-output/cip", "directory for fig2X.json/.svg/.png (empty: write nothing)")
	f.StringVar(&c.leffDir, "leff-data", "", "directory with the paper's fitted l_eff CSVs (l_eff_x.csv, l_eff_y.csv, l_eff_temp.csv) to compute the band from (default: their recorded quartiles)")
	f.BoolVar(&c.optimal, "optimal", false, "also score tracepriv's optimal design at equal noise")
	f.BoolVar(&c.replot, "replot", false, "redraw the plots from the fig2X.json (with --sensitivity: fig2X-sensitivity.json) files already in --out, without computing")
	f.Float64Var(&c.nugget, "adversary-nugget", repro.DefaultAdversaryNugget, "2d/2h: nugget of the adversaries' priors, relative to the prior variance (0: none; the posterior is then not determined in double precision)")
	f.BoolVar(&c.sensitivity, "sensitivity", false, "2d/2h: run the nugget and design sensitivity study instead of the panel")
	f.StringVar(&c.python, "python", "", "--sensitivity: Python with mpmath for the 80-digit values (default: python3 on PATH, then /usr/bin/python3; without one the study is float64 only)")
	_ = cmd.MarkFlagRequired("figure")
	return cmd
}

func (c *reproCIPCmd) run() error {
	figs, err := repro.ParseCIPFigures(c.figure)
	if err != nil {
		return fmt.Errorf("repro cip: --figure: %w", err)
	}
	if !(c.nugget >= 0) || math.IsInf(c.nugget, 1) {
		return usageErrorf("repro cip: --adversary-nugget %v: want a finite number >= 0 (0: none)", c.nugget)
	}
	if c.replot && c.out == "" {
		return usageErrorf("repro cip: --replot needs --out DIR")
	}
	bars := &stageBars{env: c.env}
	defer bars.finish()
	if c.sensitivity {
		res, err := repro.RunCIPSensitivities(figs, repro.CIPSensitivitiesOptions{
			All: c.figure == "all", Out: c.out, Replot: c.replot, Python: c.python,
			Progress: bars.progress, Note: c.note,
		})
		switch {
		case errors.Is(err, repro.ErrNotMisspecified):
			return usageErrorf("repro cip: --sensitivity: %w", err)
		case err != nil && c.replot:
			return fmt.Errorf("repro cip: --replot: %w", err)
		case err != nil:
			return fmt.Errorf("repro cip: --sensitivity: %w", err)
		}
		return c.env.Emit(oneOrMany("sensitivity", res), res.WriteText)
	}
	if c.replot {
		res, err := repro.ReplotCIPPanels(c.out, figs)
		if err != nil {
			return fmt.Errorf("repro cip: --replot: %w", err)
		}
		return c.env.Emit(map[string]any{"figures": res}, res.WriteText)
	}
	bands := repro.RecordedLEffBands()
	if c.leffDir != "" {
		if bands, err = repro.LoadLEffBands(c.leffDir); err != nil {
			return fmt.Errorf("repro cip: --leff-data: %w", err)
		}
	}
	nugget := c.nugget
	if nugget == 0 { // the flag's 0 is none; the library's is its default
		nugget = repro.NoNugget
	}
	res, err := repro.RunCIPPanels(figs, repro.CIPPanelsOptions{
		Optimal: c.optimal, AdversaryNugget: nugget, Bands: bands, Out: c.out, Progress: bars.progress,
	})
	if err != nil {
		return fmt.Errorf("repro cip: %w", err)
	}
	return c.env.Emit(oneOrMany("figures", res), res.WriteText)
}

// note tells the user on stderr what a long study does and wrote.
func (c *reproCIPCmd) note(msg string) {
	if !c.env.Quiet {
		fmt.Fprintf(c.env.Stderr, "tracepriv: %s\n", msg)
	}
}

// oneOrMany is the --json shape of a list of results: the result itself
// when there is one, else {key: [...]}.
func oneOrMany[T any](key string, v []T) any {
	if len(v) == 1 {
		return v[0]
	}
	return map[string]any{key: v}
}
