package cip

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/prior"
)

// Places and routes: secrets a person fears beyond single moments.
//
// A place secret is a contiguous window S of a trace (a stay, a trip) moved
// rigidly: the hypotheses are X_S = x_S and X_S = x_S + delta 1_S with
// |delta| <= r in the plane. By (E1) its loss factor is
//
//	L_S = 1' At_S' (Ct_S + SigmaG)^-1 At_S 1 = v' (Ct_S + SigmaG)^-1 v,  v = At_S 1 = [1_S; A 1_S],
//
// and eps = lambda/2 r^2 L_S (the coordinates, each with noise of this law,
// split r^2). Two
// bounds make it certifiable in linear time, from the timestamps alone:
//
//   - Against a member l of the family whose lengthscale is at least the
//     window's duration T, with noise SigmaG >= alpha R_l (a spectral
//     envelope; R_l the unit-variance Gram matrix), monotonicity of (E1) and
//     the proportional closed form give L_S <= 1' R_l[S,S]^-1 1 / alpha. The
//     quadratic form is the least squared RKHS norm of a function equal to 1
//     at the window's times, so it is at most the norm of the least
//     extension of the constant 1 on [0, T] to the real line, whatever the
//     sampling: PlaceNorm. For the Matérn kernels this is closed form
//     (Matérn 1/2: 1 + T/(2l); 3/2: 1 + sqrt(3) T/(4l); 5/2: 9/8 + 3 sqrt(5)
//     T/(16l)); at T <= l it is at most PlaceFactor. The RBF kernel's RKHS
//     contains no non-zero constant on an interval (Steinwart, Hush and
//     Scovel 2006): 1' R[S,S]^-1 1 grows without bound as the window is
//     sampled more densely, and is ill-posed in double precision at GPS
//     rates, so no finite bound of this form exists for RBF members.
//   - Against an adversary who believes the person stood still over the
//     window (the rest of the trace independent of it), L_S = 1'
//     SigmaG[S,S]^-1 1. Noise with a common component beta k_route, k_route
//     the Matérn 1/2 kernel of a very long public lengthscale L, gives
//     L_S <= RouteFactor(times of S)/beta <= RouteFactor(all times)/beta,
//     for any window, any duration and any prior: the same bound as the
//     route below.
//
// The route secret is the whole trace (all of a person's points) moved
// rigidly. Then Ct = 0 and At = I, so L = 1' SigmaG^-1 1 exactly, for every
// prior: no adversary model enters. With the common component,
// L <= 1' (beta K_route)^-1 1 = RouteFactor(ts)/beta, the Matérn 1/2 Gram
// matrix's precision being tridiagonal with 1' K^-1 1 = 1 + sum_i
// tanh((t_{i+1} - t_i)/(2L)).

// RouteLengthscale is the lengthscale, in seconds, of the route noise
// component (a Matérn 1/2 kernel): about 31.7 years, so that a person's
// whole record moves as one (RouteFactor stays within 1 + span/(2L)). It is
// public and fixed.
const RouteLengthscale = 1e9

// RouteKernel returns the unit-variance route noise kernel.
func RouteKernel() gp.Kernel { return gp.Matern12{Variance: 1, Lengthscale: RouteLengthscale} }

// RouteFactor returns 1' K^-1 1 for K the unit-variance route kernel's Gram
// matrix at the sorted timestamps ts (seconds), 1 + sum of
// tanh(gap/(2 RouteLengthscale)), rounded up by a relative 1e-12 (far above
// the rounding of the sum). Repeated times count once.
func RouteFactor(ts []float64) float64 {
	s := 1.0
	for i := 1; i < len(ts); i++ {
		if d := ts[i] - ts[i-1]; d > 0 {
			s += math.Tanh(d / (2 * RouteLengthscale))
		}
	}
	return s * (1 + 1e-12)
}

// PlaceNorm returns the squared RKHS norm of the least extension of the
// constant 1 on an interval of x lengthscales to the real line, for a
// unit-variance Matérn kernel of the named family: the supremum of
// 1' R[S,S]^-1 1 over every finite set S of times in the interval. ok is
// false for kernels with no finite value (RBF: constants are not in its
// RKHS on an interval) or no closed form here (Matérn 7/2, periodic).
//
// Derivation (one half-line; the interval contributes its interior): for
// Matérn nu = p + 1/2 the RKHS norm is (1/2 pi) int |f^(w)|^2 / S(w) dw, a
// quadratic form in f, ..., f^(p+1) by Plancherel; the least extension
// beyond the interval's end, with f = 1 and f^(j) = 0 (j <= p) there,
// solves (D^2 - lam^2)^(p+1) f = 0 and decays: f = e^(-u) times the degree-p
// Taylor polynomial of e^u (u = lam s). Integrating gives 1/2 per side for
// p = 0 and 1, 9/16 for p = 2; the interior gives lam T / S(0) times the
// normalisation, lam T/2, lam T/4 and 3 lam T/16.
func PlaceNorm(kernel string, x float64) (v float64, ok bool) {
	switch kernel {
	case gp.KernelMatern12:
		return 1 + x/2, true
	case gp.KernelMatern32:
		return 1 + math.Sqrt(3)*x/4, true
	case gp.KernelMatern52:
		return 9.0/8 + 3*math.Sqrt(5)*x/16, true
	}
	return math.Inf(1), false
}

// PlaceFactor returns the largest PlaceNorm at one lengthscale over the
// family's kernels that have one, rounded up by a relative 1e-12: under
// noise SigmaG >= alpha R_l for every member, every window of duration at
// most l moved rigidly has loss factor at most PlaceFactor/alpha against
// member l. uncovered names the kernels of the family for which no such
// bound exists (see PlaceNorm), with the reason.
func PlaceFactor(f prior.FamilySet) (factor float64, uncovered []string) {
	for _, k := range f.Kernels {
		v, ok := PlaceNorm(k.Kernel, 1)
		if !ok {
			uncovered = append(uncovered, fmt.Sprintf("%s: a window moved rigidly has no finite bound against %s members conditioned on the window "+
				"(constants are not in the %s RKHS on an interval, so the loss grows without bound as the window is sampled more densely, and it is ill-posed in double precision)",
				k.Kernel, k.Kernel, k.Kernel))
			continue
		}
		factor = math.Max(factor, v)
	}
	return factor * (1 + 1e-12), uncovered
}

// PlaceFactor returns the factor F with which noise alpha k_D bounds the
// loss of every window moved rigidly, against every member of the family
// at least as long as the window, by F/alpha: the largest PlaceNorm(k, 1)
// over its kernels k, each divided by the factor the envelope dominates
// that kernel's members by (MemberScales). uncovered is as for the
// package-level PlaceFactor.
func (e *Envelope) PlaceFactor() (factor float64, uncovered []string) {
	for i, k := range e.Family.Kernels {
		v, ok := PlaceNorm(k.Kernel, 1)
		if !ok {
			_, unc := PlaceFactor(prior.FamilySet{Kernels: []prior.Family{k}})
			uncovered = append(uncovered, unc...)
			continue
		}
		c := 1.0
		if i < len(e.MemberScales) {
			c = e.MemberScales[i]
		}
		factor = math.Max(factor, v/c)
	}
	return factor * (1 + 1e-12), uncovered
}

// LowFrequencyBound returns an upper bound on 1' K^-1 1 for K the Gram
// matrix of a sum of stationary kernels (weights included, e.g. an
// Envelope's Components) at any times within a span of span seconds: the
// loss factor per unit of the noise of a rigid move of all those points
// against an adversary who knows nothing else. For a sum, 1' (sum K_j)^-1 1
// is the least sum of x_j' K_j^-1 x_j over splittings of 1 = sum x_j, at
// most the harmonic sum 1/(sum_j 1/a_j) of a_j >= 1' K_j^-1 1 (split 1 in
// proportion), and a_j <= PlaceNorm(kernel_j, span/l_j)/w_j. Components
// without a closed form are left out (the bound only grows). It is +Inf
// when no component has one.
func LowFrequencyBound(components []gp.Kernel, span float64) float64 {
	inv := 0.0
	for _, k := range components {
		var w, l float64
		for _, p := range k.Params() {
			switch p.Name {
			case "variance":
				w = p.Value
			case "lengthscale":
				l = p.Value
			}
		}
		pn, ok := PlaceNorm(gp.KernelName(k), span/l)
		if !ok || !(w > 0) || !(l > 0) {
			continue
		}
		inv += w / pn
	}
	if inv == 0 {
		return math.Inf(1)
	}
	return 1 / inv * (1 + 1e-12)
}

// RigidLossFactor returns the exact (E1) loss factor of the secret s moved
// rigidly (every point by the same displacement) against an adversary with
// prior sigma who conditions on it: v' (Ct + SigmaG)^-1 v with v = At 1 =
// [1_S; A 1_S], through a Cholesky factorisation of Ct + SigmaG (no inverse
// formed). eps = lambda/2 r^2 times it, for a move of up to r in the plane.
// For s every point it is the route's loss, 1' SigmaG^-1 1, whatever sigma.
// It costs a dense conditioning and factorisation: a check, not a design
// tool.
func RigidLossFactor(sigma, sigmaG mat.Symmetric, s Secret) (float64, error) {
	m, err := newRigidMove(sigma, sigmaG, s)
	if err != nil {
		return 0, err
	}
	return m.lossFactor(sigmaG)
}

// rigidMove is RigidLossFactor's part that does not depend on the noise:
// the prior conditioned on the secret and v = [1_S; A 1_S]. A check that
// scales a noise until it is certified conditions once per secret.
type rigidMove struct {
	cond *gp.Conditional
	v    *mat.VecDense
}

// newRigidMove validates the pair and the secret and conditions sigma on
// the secret's coordinates.
func newRigidMove(sigma, sigmaG mat.Symmetric, s Secret) (*rigidMove, error) {
	n, cond, err := conditionPair(sigma, sigmaG, s)
	if err != nil {
		return nil, err
	}
	v := mat.NewVecDense(n, nil)
	for _, p := range cond.S {
		v.SetVec(p, 1)
	}
	for r, p := range cond.U {
		a := 0.0
		for c := range cond.S {
			a += cond.A.At(r, c)
		}
		v.SetVec(p, a)
	}
	return &rigidMove{cond: cond, v: v}, nil
}

// lossFactor is v' (Ct + sigmaG)^-1 v for a noise of newRigidMove's size.
func (m *rigidMove) lossFactor(sigmaG mat.Symmetric) (float64, error) {
	f, err := gp.Factorize(conditionalRelease(sigmaG, m.cond), 0)
	if err != nil {
		return 0, fmt.Errorf("Ct + SigmaG: %w", err)
	}
	return f.Quad(m.v)
}

// StillLossFactor returns the loss factor of the secret s moved rigidly
// against an adversary who believes the person stood still at its points
// and learns nothing from the others: 1' SigmaG[S,S]^-1 1.
func StillLossFactor(sigmaG mat.Symmetric, s Secret) (float64, error) {
	if err := s.Validate(sigmaG.SymmetricDim()); err != nil {
		return 0, err
	}
	k := len(s.Indices)
	g := mat.NewSymDense(k, nil)
	for a, i := range s.Indices {
		for b := a; b < k; b++ {
			g.SetSym(a, b, sigmaG.At(i, s.Indices[b]))
		}
	}
	f, err := gp.Factorize(g, 0)
	if err != nil {
		return 0, fmt.Errorf("SigmaG on the secret: %w", err)
	}
	ones := make([]float64, k)
	for i := range ones {
		ones[i] = 1
	}
	return f.Quad(mat.NewVecDense(k, ones))
}
