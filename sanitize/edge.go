package sanitize

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracepriv/tracepriv/cip"
)

// Edge is a point's certified epsilon against one standard kernel just
// outside the certificate's prior family (Certificate.Edge).
type Edge struct {
	Kernel       string  `json:"kernel"`
	LengthscaleS float64 `json:"lengthscale_s"`
	// Epsilon is a proven upper bound on the loss of one point displaced
	// by up to radius_m, at the certificate's lambda, against this kernel
	// at any variance, worst over the persons.
	Epsilon float64 `json:"epsilon"`
}

// edgeBoundText says how Certificate.Edge is computed.
const edgeBoundText = "edge: for each standard kernel (rbf, matern12, matern32, matern52) at lengthscales just outside prior_family " +
	"(below each kernel's range by 1.25, then halving down to the fixes' mean spacing; above it 1.25, 2 and 10 times its top; " +
	"a kernel not in the family from that spacing doubling up to the family's longest lengthscale), the epsilon of one point " +
	"displaced by up to radius_m, at any variance, worst over the persons: a proven upper bound by spectral domination of that kernel " +
	"by the released noise, c = sup_w s(w)/D(w) over the noise density D including the route component (cip.EdgeLossFactor; docs/fit.md), " +
	"epsilon = lambda/2 r^2 c; a kernel whose spectral tail is heavier than every noise component's has no such bound and is left out. " +
	"These adversaries are not covered by epsilon_max: the entry says what the release promises against them."

// edges states the certificate's edge: the worst over the persons of each
// standard kernel's point epsilon just outside the family. Designs whose
// noise is not a sum of kernels (e3) state none.
func (c *Certificate) edges() error {
	if c.Design != DesignEnvelope && c.Design != DesignProportional || len(c.Persons) == 0 {
		return nil
	}
	// The fixes' spacing: the least mean spacing of any trace of any
	// person (timestamps are public).
	spacing := math.Inf(1)
	for _, p := range c.Persons {
		for _, t := range p.Traces {
			if t.Points > 1 {
				spacing = math.Min(spacing, t.End.Sub(t.Start).Seconds()/float64(t.Points-1))
			}
		}
	}
	if math.IsInf(spacing, 1) {
		spacing = 1
	}
	ks := cip.EdgeKernels(c.PriorFamily, spacing)
	worst := make([]float64, len(ks))
	type key struct{ scale, route float64 }
	done := map[key]bool{}
	for _, p := range c.Persons {
		if done[key{p.NoiseScaleM2, p.RouteNoiseM2}] {
			continue
		}
		done[key{p.NoiseScaleM2, p.RouteNoiseM2}] = true
		noise, err := c.NoiseKernels(p)
		if err != nil {
			return err
		}
		lfs, err := cip.EdgeLossFactors(noise, ks)
		if err != nil {
			return fmt.Errorf("edge: %w", err)
		}
		for i, lf := range lfs {
			worst[i] = math.Max(worst[i], cip.Epsilon(lf, c.Lambda, c.RadiusM, 1))
		}
	}
	c.Edge = c.Edge[:0]
	for i, k := range ks {
		if math.IsInf(worst[i], 1) {
			continue
		}
		c.Edge = append(c.Edge, Edge{Kernel: k.Kernel, LengthscaleS: k.LengthscaleS, Epsilon: worst[i]})
	}
	c.EdgeBound = edgeBoundText
	return nil
}

// FamilyLine names the certificate's family in one short line, for the
// text output, the legend and the page: its kernels and lengthscale range
// and, when the prior states it, the share of held-out windows it covers
// ("against Matérn 1/2, 3/2, 5/2 priors 30 s–8.3 d, 95 % of held-out
// windows").
func (c *Certificate) FamilyLine() string { return c.PriorFamily.Line() }

// EdgeSummary says in a line what Edge states: each standard kernel's
// point epsilon just below the family's range (for a kernel outside the
// family, just below the family's shortest lengthscale) and the worst
// entry; "" when the certificate states no edge.
func (c *Certificate) EdgeSummary() string {
	if len(c.Edge) == 0 {
		return ""
	}
	lo, _ := c.PriorFamily.LengthscaleRange()
	var parts []string
	worst := c.Edge[0]
	for _, k := range cip.EdgeStandardKernels {
		edge := lo
		for _, f := range c.PriorFamily.Kernels {
			if f.Kernel == k {
				edge = f.LengthscaleMin
			}
		}
		var near *Edge
		for i, e := range c.Edge {
			if e.Kernel == k && e.LengthscaleS < edge && (near == nil || e.LengthscaleS > near.LengthscaleS) {
				near = &c.Edge[i]
			}
		}
		if near != nil {
			parts = append(parts, fmt.Sprintf("%s at %.3g s %.3g", near.Kernel, near.LengthscaleS, near.Epsilon))
		}
	}
	for _, e := range c.Edge {
		if e.Epsilon > worst.Epsilon {
			worst = e
		}
	}
	return fmt.Sprintf("a point's epsilon just below the family: %s; worst stated %.3g (%s at %.3g s); see edge in the certificate",
		strings.Join(parts, ", "), worst.Epsilon, worst.Kernel, worst.LengthscaleS)
}
