package noise

import (
	"errors"
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// decayEta returns a bound on Σ_c ||Ĉ_c - C'_c||_2 that uses the decay of
// the exact transitions and each step's own e_m and r_m, for a release
// whose timestamps are all known (MarkovOptions.Times). The proof is in
// the package documentation ("The white-noise correction"); in short, per
// component, with ψ_k = theta^β_k, β_k = floor((t_k - t_1)/h) computed in
// float (so that ||Ã(t_i - t_j)|| <= theta^-2·ψ_i/ψ_j for i >= j), and
// ε₁ = e^(R/2)·Σe (a bound on ||Â_i···Â_(j+1) - Ã_i···Ã_(j+1)|| for any
// i, j), the row sums of |Ĉ - C'|/h² are bounded by O(n) recurrences:
//
//	N_k = 1 + q_k N_(k-1)                 (Σ_(j<=k) ψ_k/ψ_j)
//	F_k = 1 + q_(k+1) F_(k+1)              (Σ_(j>=k) ψ_j/ψ_k)
//	Δ_k = q_k² Δ_(k-1) + r_k,  δ_k = min(2θ^-4 Δ_k + 2ε₁² R_k, e^(R_k) - 1)
//	G_i = q_i (G_(i-1) + δ_(i-1))          (Σ_(j<i) ψ_i/ψ_j δ_j)
//	L_i = q_i L_(i-1) + e_i N_(i-1)        (Σ_(j<i) Σ_(m=j+1..i) e_m (ψ_i/ψ_m)(ψ_(m-1)/ψ_j))
//	U_i = q_(i+1) U_(i+1) + e_(i+1) F_(i+1) (the same for the rows' upper part)
//
// with q_k = ψ_k/ψ_(k-1) = theta^(β_k - β_(k-1)) <= 1, and
//
//	S_i = δ_i + θ^-2 G_i + ε₁ Σ_(j<i) δ_j + δ_i (θ^-2 (F_i - 1) + ε₁ (n - i))
//	      + θ^-4 (L_i + U_i) + ε₁ θ^-2 (Σ_m e_m N_(m-1) + n Σ_m e_m).
//
// Every recurrence adds non-negative terms and multiplies by ratios
// rounded up, and every step is inflated by ballUp, so the computed values
// bound the exact ones.
func (r *MarkovRelease) decayEta() (float64, error) {
	n := len(r.times)
	if n < 2 {
		return 0, nil
	}
	t1 := r.times[0]
	beta := func(t float64, h float64) (float64, error) {
		v := (t - t1) / h
		if !(v < 1e15) {
			return 0, errors.New("noise: trace too long for the decay bound")
		}
		return math.Floor(v), nil
	}
	eta := 0.0
	// Scratch: per point, δ and the forward part of the row sum.
	delta := make([]float64, n)
	fwd := make([]float64, n)
	q := make([]float64, n)
	for c := range r.comps {
		comp := &r.comps[c]
		th := comp.theta
		th2 := ballUp(1 / (th * th))
		th4 := ballUp(th2 * th2)
		prev := 0.0
		E, R := 0.0, 0.0
		for k := range n {
			b, err := beta(r.times[k], comp.horizon)
			if err != nil {
				return 0, err
			}
			if k > 0 {
				q[k] = numeric.PowUp(th, b-prev, ballUp)
				if b == prev {
					q[k] = 1
				}
				st := r.scal[c][r.ids[k]]
				E = ballUp(E + st.e)
				R = ballUp(R + st.r)
			}
			prev = b
		}
		if R > 0.5 {
			return 0, errors.New("noise: residuals too large for the decay bound")
		}
		kappa := ballUp(1 + R) // e^(R/2) <= 1 + R for R <= 1/2
		eps1 := ballUp(kappa * E)
		// Forward pass.
		var nPrev, dlt, g, l, sumDelta, rk, kLow float64
		nPrev = 1 // N_1
		for k := range n {
			var e, rr float64
			if k > 0 {
				st := r.scal[c][r.ids[k]]
				e, rr = st.e, st.r
			}
			rk = ballUp(rk + rr)
			if k > 0 {
				g = ballUp(q[k] * (g + delta[k-1]))
				l = ballUp(q[k]*l + e*nPrev)
				kLow = ballUp(kLow + e*nPrev)
				dlt = ballUp(q[k]*q[k]*dlt + rr)
			}
			growth := ballUp(rk * (1 + 2*rk)) // e^x - 1 <= x(1 + 2x) for x <= 1/2
			delta[k] = math.Min(ballUp(2*th4*dlt+2*eps1*eps1*rk), growth)
			fwd[k] = ballUp(delta[k] + th2*g + eps1*sumDelta + th4*l)
			sumDelta = ballUp(sumDelta + delta[k])
			if k > 0 {
				nPrev = ballUp(1 + q[k]*nPrev)
			}
		}
		// Backward pass: F_k and U_k, and the row maximum.
		global := ballUp(eps1 * th2 * (kLow + float64(n)*E))
		f, u, worst := 1.0, 0.0, 0.0
		for k := n - 1; k >= 0; k-- {
			if k < n-1 {
				st := r.scal[c][r.ids[k+1]]
				u = ballUp(q[k+1]*u + st.e*f)
				f = ballUp(1 + q[k+1]*f)
			}
			row := ballUp(fwd[k] + delta[k]*ballUp(th2*(f-1)+eps1*float64(n-1-k)) + th4*u + global)
			worst = math.Max(worst, row)
		}
		eta = ballUp(eta + ballUp(comp.h*comp.h)*worst)
	}
	return eta, nil
}
