package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/tracepriv/tracepriv/geoind"
	"github.com/tracepriv/tracepriv/internal/cli"
)

// defaultEpsPerMetre is the default budget: --eps-star ln 10 within
// --radius 100 m.
const defaultEpsPerMetre = math.Ln10 / 100

func init() { register(newGeoindCmd) }

func newGeoindCmd(env *cli.Env) *cobra.Command {
	long, example := helpMeaning("geoind", geoind.Meaning(defaultEpsPerMetre))
	cmd := &cobra.Command{
		Use:     "geoind",
		Short:   "Geo-indistinguishable location queries (planar Laplace, predictive mechanism)",
		Long:    long,
		Example: example,
	}
	cmd.AddCommand(newGeoindQuantileCmd(env), newGeoindQueryCmd(env), newGeoindSanitizeCmd(env))
	return cmd
}

// geoindQuantileCmd is "tracepriv geoind quantile".
type geoindQuantileCmd struct {
	env    *cli.Env
	eps, p float64
}

func newGeoindQuantileCmd(env *cli.Env) *cobra.Command {
	c := &geoindQuantileCmd{env: env}
	_, example := help("geoind quantile")
	cmd := &cobra.Command{
		Use:     "quantile --epsilon E --p P",
		Short:   "Radius within which planar Laplace noise stays with probability P",
		Example: example,
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return c.run() },
	}
	cmd.Flags().Float64Var(&c.eps, "epsilon", 0, "ε per unit of distance (e.g. 0.01 per metre)")
	cmd.Flags().Float64Var(&c.p, "p", 0.9, "probability")
	return cmd
}

func (c *geoindQuantileCmd) run() error {
	eps, p := c.eps, c.p
	if !(eps > 0) || math.IsInf(eps, 1) {
		return usageErrorf("geoind quantile: --epsilon %v: want finite and > 0", eps)
	}
	if !(p >= 0 && p < 1) {
		return usageErrorf("geoind quantile: --p %v: want in [0, 1)", p)
	}
	// Location Guard's alphaDeltaAccuracy.
	r := geoind.NoiseAccuracy(eps, p)
	res := map[string]any{"epsilon": eps, "p": p, "radius": r, "mean": geoind.ExpectedError(eps)}
	return c.env.Emit(res, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "radius %.6g (P = %g, ε = %g; mean error %.6g)\n", r, p, eps, geoind.ExpectedError(eps)); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "what it means (ε per metre): %s\n", geoind.Meaning(eps))
		return err
	})
}
