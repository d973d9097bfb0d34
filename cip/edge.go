package cip

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/prior"
)

// EdgeLossFactor returns a proven upper bound on the (E1) loss factor of a
// basic secret (one point) against an adversary whose prior is the kernel
// named kernel at lengthscale l, of any variance, when the released noise
// is the stationary sum of noise (kernels in square metres, each
// gp.Spectral: the certificate's noise kernels). It is how a certificate
// states the loss against the standard kernels just outside its family
// (docs/fit.md, "Held-out coverage and the family's edge").
//
// The bound is spectral domination, as the envelope's for members: with
// s_l the unit-variance density of the adversary's kernel and D the
// noise's, c = sup_w s_l(w) / D(w) gives c D - s_l >= 0, so by Bochner's
// theorem the noise covariance dominates R_l / c at any timestamps (R_l the
// unit-variance Gram matrix), and the loss of a point, lambda_max(R_l[i,i]^-1)
// times c, is at most c for every variance. The supremum is bounded, not
// estimated: on a logarithmic frequency grid w_0 < ... < w_n both densities
// decrease, so s_l(w_i) / D(w_{i+1}) bounds the ratio on [w_i, w_{i+1}]
// (s_l(0) / D(w_0) on [0, w_0]); beyond w_n an analytic bound against the
// noise's component with the heaviest tail holds (edgeTail). The result is
// +Inf when no noise component's tail is at least as heavy as the
// adversary's (domination then fails at high frequencies).
func EdgeLossFactor(noise []gp.Kernel, kernel string, l float64) (float64, error) {
	out, err := EdgeLossFactors(noise, []EdgeKernel{{Kernel: kernel, LengthscaleS: l}})
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

// EdgeLossFactors is EdgeLossFactor for several adversaries at once: the
// noise density is evaluated once on a grid spanning them all. Results are
// remembered (a pure function of its arguments, compared by exact value),
// since every certificate of one family and target asks the same question.
func EdgeLossFactors(noise []gp.Kernel, edges []EdgeKernel) ([]float64, error) {
	var key strings.Builder
	for _, k := range noise {
		fmt.Fprintf(&key, "%T%v;", k, k)
	}
	for _, e := range edges {
		fmt.Fprintf(&key, "%s@%v;", e.Kernel, e.LengthscaleS)
	}
	edgeMemo.Lock()
	out, ok := edgeMemo.m[key.String()]
	edgeMemo.Unlock()
	if ok {
		return slices.Clone(out), nil
	}
	out, err := edgeLossFactors(noise, edges)
	if err != nil {
		return nil, err
	}
	edgeMemo.Lock()
	if len(edgeMemo.m) >= 256 {
		clear(edgeMemo.m) // bounded: a corpus of people with many spans
	}
	edgeMemo.m[key.String()] = slices.Clone(out)
	edgeMemo.Unlock()
	return out, nil
}

// edgeMemo remembers EdgeLossFactors' answers.
var edgeMemo = struct {
	sync.Mutex
	m map[string][]float64
}{m: map[string][]float64{}}

func edgeLossFactors(noise []gp.Kernel, edges []EdgeKernel) ([]float64, error) {
	if len(noise) == 0 {
		return nil, param.Invalid("noise", "[]", "no noise kernel")
	}
	sp := make([]gp.Spectral, len(noise))
	lmin, lmax := math.Inf(1), 0.0
	for i, c := range noise {
		s, ok := c.(gp.Spectral)
		if !ok {
			return nil, param.Invalid("noise", fmt.Sprintf("%T", c), "has no spectral density")
		}
		if _, ok := gp.Smoothness(c); !ok {
			return nil, param.Invalid("noise", fmt.Sprintf("%T", c), "is not an RBF or Matérn kernel")
		}
		sp[i] = s
		lc := lengthscaleOf(c)
		lmin, lmax = math.Min(lmin, lc), math.Max(lmax, lc)
	}
	ks := make([]gp.Kernel, len(edges))
	lshort := math.Inf(1)
	for i, e := range edges {
		l := e.LengthscaleS
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, param.Positive(fmt.Sprintf("edges[%d].LengthscaleS", i), l)
		}
		k, err := gp.NewKernel(e.Kernel, 1, l, 0)
		if err != nil {
			return nil, param.Wrap(fmt.Sprintf("edges[%d].Kernel", i), e.Kernel, err)
		}
		if _, ok := k.(gp.Spectral); !ok {
			return nil, param.Invalid(fmt.Sprintf("edges[%d].Kernel", i), e.Kernel, "has no spectral density")
		}
		if _, ok := gp.Smoothness(k); !ok {
			return nil, param.Invalid(fmt.Sprintf("edges[%d].Kernel", i), e.Kernel, "is not an RBF or Matérn kernel")
		}
		ks[i] = k
		lmin, lmax, lshort = math.Min(lmin, l), math.Max(lmax, l), math.Min(lshort, l)
	}
	d := func(w float64) float64 {
		s := 0.0
		for _, c := range sp {
			s += c.SpectralDensity(w)
		}
		return s
	}
	// The grid spans the kernels' scales by far on both sides; its top is
	// also past every RBF's turning point sqrt(2 p)/l (edgeTail).
	const rho = 1.002
	w := 1e-4 / lmax
	wTop := math.Max(1e4/lmin, 10/lshort)
	sup := make([]float64, len(ks))
	dw := d(w)
	for i, k := range ks {
		sup[i] = k.(gp.Spectral).SpectralDensity(0) / dw
	}
	for w < wTop {
		next := w * rho
		dn := d(next)
		for i, k := range ks {
			sup[i] = math.Max(sup[i], k.(gp.Spectral).SpectralDensity(w)/dn)
		}
		w = next
	}
	for i, k := range ks {
		// A relative margin for the rounding of the density evaluations.
		sup[i] = math.Max(sup[i], edgeTail(k, noise, w)) * (1 + 1e-9)
	}
	return sup, nil
}

// edgeTail bounds s_e(w) / D(w) for w >= W (W > 0) by the best single
// component j of the noise (D >= s_j). Writing s(w) = s(W) ((a + W^2) /
// (a + w^2))^p for a Matérn kernel (a = lambda^2, p = nu + 1/2), for
// w >= W: s_e(w) <= s_e(W) (1 + a_e/W^2)^p_e (W/w)^(2 p_e) and
// s_j(w) >= s_j(W) (W/w)^(2 p_j), so when p_e >= p_j the ratio is at most
// s_e(W) / s_j(W) (1 + a_e/W^2)^p_e. For an RBF adversary, s_e(w) / s_e(W)
// = exp(-l^2 (w^2 - W^2) / 2), and exp(-l^2 u / 2) u^p_j decreases for
// u >= 2 p_j / l^2 <= W^2, so the ratio is at most s_e(W) / s_j(W).
func edgeTail(e gp.Kernel, noise []gp.Kernel, wTop float64) float64 {
	nuE, _ := gp.Smoothness(e)
	le := lengthscaleOf(e)
	se := e.(gp.Spectral).SpectralDensity(wTop)
	factor := 1.0
	if !math.IsInf(nuE, 1) {
		a := 2 * nuE / (le * le)
		factor = math.Pow(1+a/(wTop*wTop), nuE+0.5)
	}
	best := math.Inf(1)
	for _, c := range noise {
		nuC, _ := gp.Smoothness(c)
		if nuC > nuE || math.IsInf(nuC, 1) {
			continue // a lighter tail (or an RBF) does not bound it
		}
		if math.IsInf(nuE, 1) && 2*(nuC+0.5)/(le*le) > wTop*wTop {
			continue // unreachable: the grid ends past the turning point
		}
		sc := c.(gp.Spectral).SpectralDensity(wTop)
		if sc > 0 {
			best = math.Min(best, se/sc*factor)
		}
	}
	return best
}

// EdgeKernel is a standard kernel at one lengthscale just outside a
// family: an adversary a certificate states its loss against (EdgeKernels).
type EdgeKernel struct {
	Kernel       string  `json:"kernel"`
	LengthscaleS float64 `json:"lengthscale_s"`
}

// EdgeStandardKernels are the kernels a certificate states its edge
// against: the RBF and the Matérn kernels fit compares.
var EdgeStandardKernels = []string{gp.KernelRBF, gp.KernelMatern12, gp.KernelMatern32, gp.KernelMatern52}

// EdgeKernels lists the standard kernels just outside the family f, down
// to spacing (seconds, the fixes' spacing; shorter lengthscales describe no
// dependence the trace can show): for a kernel of the family with range
// [lo, hi], lo/1.25, then lo/2, lo/4, ... while above spacing, and spacing
// itself, and above the range hi 1.25, 2 hi and 10 hi; for a kernel not in
// the family, spacing 2^k up to the family's longest lengthscale, and that
// lengthscale.
func EdgeKernels(f prior.FamilySet, spacing float64) []EdgeKernel {
	spacing = math.Max(spacing, 1)
	_, top := f.LengthscaleRange()
	var out []EdgeKernel
	for _, k := range EdgeStandardKernels {
		var fam *prior.Family
		for i := range f.Kernels {
			if f.Kernels[i].Kernel == k {
				fam = &f.Kernels[i]
			}
		}
		if fam == nil {
			l := spacing
			for ; l < top; l *= 2 {
				out = append(out, EdgeKernel{k, l})
			}
			out = append(out, EdgeKernel{k, top})
			continue
		}
		lo, hi := fam.LengthscaleMin, fam.LengthscaleMax
		var below []float64
		if l := lo / 1.25; l > spacing {
			below = append(below, l)
		}
		for l := lo / 2; l > spacing; l /= 2 {
			below = append(below, l)
		}
		if spacing < lo {
			below = append(below, spacing)
		}
		for i := len(below) - 1; i >= 0; i-- {
			out = append(out, EdgeKernel{k, below[i]})
		}
		for _, m := range []float64{1.25, 2, 10} {
			out = append(out, EdgeKernel{k, hi * m})
		}
	}
	return out
}
