package noise

import (
	"math"
	"math/big"
)

// unitRoundoff is u = 2^-53, the relative rounding error of float64.
const unitRoundoff = 0x1p-53

// gammaK returns γ_k = k·u/(1 - k·u), Higham's bound on the relative error
// of a k-term floating-point inner product, rounded up a little.
func gammaK(k int) float64 {
	ku := float64(k) * unitRoundoff
	return ku / (1 - ku) * (1 + 0x1p-40)
}

// linearMap is the matrix A of a Gaussian release W = A z, z a vector of
// exact N(0, 1) deviates, so W ~ N(0, A Aᵀ) exactly when A's float entries
// are read as real numbers. The exact lattice release needs three things
// from it: a fast floating-point product with a rigorous error bound, the
// deviates each coordinate depends on, and an interval enclosure of one
// coordinate for deviates known to lie in intervals. The dense factors of
// MultiNormal implement it; a state-space (Kalman) recursion for Matérn
// kernels, whose W_i depends on z_0..z_i through a linear recursion, fits
// the same shape.
type linearMap interface {
	// dims returns n, the length of W, and k, the number of deviates.
	dims() (n, k int)
	// applyFloat sets w = fl(A·zf) and bound[i] >= |w[i] - (A z)_i| for
	// every real z with |z_j - zf[j]| <= zerr[j].
	applyFloat(w, bound, zf, zerr []float64)
	// inputs returns the half-open range [lo, hi) of the deviates that
	// coordinate i depends on.
	inputs(i int) (lo, hi int)
	// enclose sets lo <= (A z)_i <= hi for every z with zlo[j] <= z_j <=
	// zhi[j] for j in inputs(i), working at precision prec with directed
	// rounding.
	enclose(i int, zlo, zhi []big.Float, prec uint, lo, hi *big.Float)
}

// denseFactor is a real n×k matrix stored by rows. When lower is set it is
// lower-triangular (k = n) and packed: row i holds columns 0..i only, which
// halves the memory and the work of a Cholesky factor.
type denseFactor struct {
	n, k  int
	lower bool
	a     []float64
}

func newDenseFactor(n, k int, lower bool) *denseFactor {
	size := n * k
	if lower {
		size = n * (n + 1) / 2
	}
	return &denseFactor{n: n, k: k, lower: lower, a: make([]float64, size)}
}

// row returns row i: columns 0..i if lower, else 0..k-1.
func (f *denseFactor) row(i int) []float64 {
	if f.lower {
		off := i * (i + 1) / 2
		return f.a[off : off+i+1 : off+i+1]
	}
	return f.a[i*f.k : (i+1)*f.k : (i+1)*f.k]
}

func (f *denseFactor) dims() (n, k int) { return f.n, f.k }

func (f *denseFactor) inputs(i int) (lo, hi int) { return 0, len(f.row(i)) }

// apply sets w = fl(A·z) (no bound): the simulation path of Rand.
func (f *denseFactor) apply(w, z []float64) {
	for i := range f.n {
		s := 0.0
		for j, v := range f.row(i) {
			s += v * z[j]
		}
		w[i] = s
	}
}

// applyFloat computes w and its bound in one pass over A. For a row of m
// terms, Higham's inner-product bound (any summation order, with or
// without fused multiply-adds) gives |fl(Σ a_j zf_j) - Σ a_j zf_j| <=
// γ_m Σ|a_j||zf_j|, and the deviates' own errors add Σ|a_j| zerr_j, so
//
//	|w_i - (A z)_i| <= Σ_j |a_ij| c_j,  c_j = γ_k |zf_j| + zerr_j.
//
// That sum is computed in floating point from non-negative terms, so it is
// low by a relative γ_k at most; the factor 1 + 2^-18 covers that and the
// rounding of c_j as long as k·u <= 2^-21, i.e. k <= 2^32, far beyond any
// dense factor that fits in memory. The absolute term covers underflow.
func (f *denseFactor) applyFloat(w, bound, zf, zerr []float64) {
	c := make([]float64, f.k)
	gamma := gammaK(f.k)
	for j := range c {
		c[j] = gamma*math.Abs(zf[j]) + zerr[j]
	}
	for i := range f.n {
		row := f.row(i)
		s, t := dotAndAbsDot(row, zf, c)
		w[i] = s
		bound[i] = t*(1+0x1p-18) + float64(2*len(row))*0x1p-1074
	}
}

// dotAndAbsDot returns fl(Σ a_j z_j) and fl(Σ |a_j| c_j) with four partial
// sums each: a matrix-vector product this size is bound by memory and by
// the latency of the additions, and the bound above holds for any order.
func dotAndAbsDot(a, z, c []float64) (s, t float64) {
	z = z[:len(a)]
	c = c[:len(a)]
	var s0, s1, s2, s3, t0, t1, t2, t3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		aa := a[j : j+4 : j+4]
		zz := z[j : j+4 : j+4]
		cc := c[j : j+4 : j+4]
		s0 += aa[0] * zz[0]
		s1 += aa[1] * zz[1]
		s2 += aa[2] * zz[2]
		s3 += aa[3] * zz[3]
		t0 += math.Abs(aa[0]) * cc[0]
		t1 += math.Abs(aa[1]) * cc[1]
		t2 += math.Abs(aa[2]) * cc[2]
		t3 += math.Abs(aa[3]) * cc[3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * z[j]
		t0 += math.Abs(a[j]) * c[j]
	}
	return (s0 + s1) + (s2 + s3), (t0 + t1) + (t2 + t3)
}

// enclose sums the products a_ij·z_j, taking for each the interval end that
// gives the smallest (largest) product and rounding every operation down
// (up), so lo and hi enclose the exact coordinate.
func (f *denseFactor) enclose(i int, zlo, zhi []big.Float, prec uint, lo, hi *big.Float) {
	lo.SetPrec(prec).SetMode(big.ToNegativeInf).SetInt64(0)
	hi.SetPrec(prec).SetMode(big.ToPositiveInf).SetInt64(0)
	var a, tlo, thi big.Float
	a.SetPrec(53)
	tlo.SetPrec(prec).SetMode(big.ToNegativeInf)
	thi.SetPrec(prec).SetMode(big.ToPositiveInf)
	for j, v := range f.row(i) {
		if v == 0 {
			continue
		}
		a.SetFloat64(v)
		if v > 0 {
			tlo.Mul(&a, &zlo[j])
			thi.Mul(&a, &zhi[j])
		} else {
			tlo.Mul(&a, &zhi[j])
			thi.Mul(&a, &zlo[j])
		}
		lo.Add(lo, &tlo)
		hi.Add(hi, &thi)
	}
}
