package prior

import (
	"math"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
)

// HullRatio returns an upper bound on sup_w s(w) / H(w), where s is the
// unit-variance spectral density of the kernel named kernel at
// lengthscale l and H the upper envelope of the unit-variance densities of
// every member of the set (RBF and Matérn kernels; others are left out).
// At most 1 means that s is dominated by the members' hull: any noise whose
// density dominates every member's (as cip.Envelope's does) dominates s
// too, so a points certificate against the set holds against this prior
// as against a member. It is +Inf when the set has no member with a tail
// at least as heavy as s's.
//
// For the RBF and Matérn kernels the density at w is largest over l at
// l = 1/w and falls on either side, so each kernel's part of H is its
// member at clamp(1/w, lo, hi). H decreases with w (a maximum of
// decreasing functions), so on a logarithmic grid s(w_i) / H(w_{i+1})
// bounds the ratio on [w_i, w_{i+1}], and beyond the grid the ratio to one
// member with a heavier or equal tail decreases (as in cip.EdgeLossFactor).
func (s FamilySet) HullRatio(kernel string, l float64) (float64, error) {
	k, err := gp.NewKernel(kernel, 1, l, 0)
	if err != nil {
		return 0, err
	}
	sp, ok := k.(gp.Spectral)
	nuP, ok2 := gp.Smoothness(k)
	if !ok || !ok2 {
		return 0, param.Invalid("kernel", kernel, "has no spectral density here")
	}
	type part struct {
		nu, lo, hi float64
		name       string
	}
	var parts []part
	lmin, lmax := l, l
	for _, f := range s.Kernels {
		m, err := gp.NewKernel(f.Kernel, 1, f.LengthscaleMin, 0)
		if err != nil {
			continue
		}
		nu, ok := gp.Smoothness(m)
		if _, sp := m.(gp.Spectral); !ok || !sp {
			continue
		}
		parts = append(parts, part{nu, f.LengthscaleMin, f.LengthscaleMax, f.Kernel})
		lmin, lmax = math.Min(lmin, f.LengthscaleMin), math.Max(lmax, f.LengthscaleMax)
	}
	if len(parts) == 0 {
		return math.Inf(1), nil
	}
	density := func(name string, l, w float64) float64 {
		m, _ := gp.NewKernel(name, 1, l, 0)
		return m.(gp.Spectral).SpectralDensity(w)
	}
	hull := func(w float64) float64 {
		h := 0.0
		for _, p := range parts {
			h = math.Max(h, density(p.name, math.Min(math.Max(1/w, p.lo), p.hi), w))
		}
		return h
	}
	const rho = 1.002
	w := 1e-4 / lmax
	wTop := math.Max(1e4/lmin, 10/l)
	sup := sp.SpectralDensity(0) / hull(w)
	for w < wTop {
		next := w * rho
		sup = math.Max(sup, sp.SpectralDensity(w)/hull(next))
		w = next
	}
	// Beyond w (>= 1/lo of every part, where each part's hull member is at
	// its lo): s(v) <= s(w) (1 + a/w^2)^p (w/v)^(2p) for a Matérn s (a =
	// 2 nu / l^2, p = nu + 1/2) and a member's density >= its value at w
	// times (w/v)^(2 p_m), so with p >= p_m the ratio is at most its bound
	// at w; an RBF s falls faster than any power once w^2 >= 2 p_m / l^2.
	factor := 1.0
	if !math.IsInf(nuP, 1) {
		factor = math.Pow(1+2*nuP/(l*l)/(w*w), nuP+0.5)
	}
	tail := math.Inf(1)
	for _, p := range parts {
		if p.nu > nuP || math.IsInf(p.nu, 1) {
			continue
		}
		if d := density(p.name, p.lo, w); d > 0 {
			tail = math.Min(tail, sp.SpectralDensity(w)*factor/d)
		}
	}
	return math.Max(sup, tail) * (1 + 1e-9), nil
}
