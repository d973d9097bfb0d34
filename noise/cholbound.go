package noise

import "math"

// collatzWielandtIterations is the number of power-iteration steps taken to
// sharpen the Collatz–Wielandt bound; every step's bound is valid, and the
// smallest is used. Each costs two triangular products, O(n²), against the
// O(n³) factorisation.
const collatzWielandtIterations = 6

// absGramRadiusBound returns an upper bound on ρ(|L||L|ᵀ) = ‖|L|‖₂² for the
// packed lower-triangular L.
//
// Collatz–Wielandt: for a non-negative matrix M and any positive vector v,
// ρ(M) <= max_i (Mv)_i / v_i. M = |L||L|ᵀ is applied matrix-free as |L|(|L|ᵀv);
// power iteration from v = 1 brings v towards the Perron vector, where the
// bound is tight. Floating point: both products have non-negative terms, so
// each computed entry is at least the exact one times 1 - γ_n, and the
// computed ratio is within a relative u; the result is scaled up by
// (1 + 4γ_n) to cover both. v is kept >= 2^-500 (the bound holds for any
// positive v), so underflow in the products, 2^-1075 each at most, can add
// at most about 2n(1 + max_i Σ_j|L_ij|)·2^-574 to a ratio; the absolute term
// covers that.
func absGramRadiusBound(f *denseFactor) float64 {
	n := f.n
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	w := make([]float64, n)
	y := make([]float64, n)
	best, rowMax := math.Inf(1), 0.0
	for range collatzWielandtIterations {
		// w = |L|ᵀ v, then y = |L| w.
		clear(w)
		for i := range n {
			vi := v[i]
			for j, a := range f.row(i) {
				w[j] += math.Abs(a) * vi
			}
		}
		ratio, ymax := 0.0, 0.0
		for i := range n {
			s, r := 0.0, 0.0
			for j, a := range f.row(i) {
				s += math.Abs(a) * w[j]
				r += math.Abs(a)
			}
			y[i] = s
			ratio = math.Max(ratio, s/v[i])
			ymax = math.Max(ymax, s)
			rowMax = math.Max(rowMax, r)
		}
		best = math.Min(best, ratio)
		if !(ymax > 0) || math.IsInf(ymax, 1) {
			break
		}
		for i := range v {
			v[i] = math.Max(y[i]/ymax, 0x1p-500)
		}
	}
	g := gammaK(n)
	return best*(1+4*g)*(1+0x1p-40) + float64(n)*(1+rowMax)*0x1p-570
}

// choleskyBackwardRoundings is the k of the γ_k that bounds the backward
// error of gonum's Cholesky, relative to n; see choleskyBackwardBound.
const choleskyBackwardRoundings = 4

// choleskyBackwardBound returns an upper bound on ‖LLᵀ - A‖₂ for a
// computed Cholesky factor L of the float matrix A.
//
// Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., Theorem
// 10.3) gives LLᵀ = A + ΔA with |ΔA| <= γ_{n+1}|L||L|ᵀ elementwise for the
// textbook algorithm in any order of the inner products. Gonum's blocked
// Dpotrf differs in two ways: the sums are accumulated block by block
// (Dsyrk, Dgemm), which is one more order of summation, a term still
// meeting at most m+1 roundings in a sum of m products; and rows are
// scaled by a rounded reciprocal of the pivot (Dtrsm, Dpotf2), two
// roundings where the textbook has one division. Each element therefore
// carries at most n+2 roundings, and γ_{n+4} leaves room. For non-negative
// matrices the spectral norm is monotone in the entries, so ‖ΔA‖₂ <=
// ‖|ΔA|‖₂ <= γ_{n+4} ρ(|L||L|ᵀ).
func choleskyBackwardBound(f *denseFactor) float64 {
	return gammaK(f.n+choleskyBackwardRoundings) * absGramRadiusBound(f) * (1 + 0x1p-40)
}
