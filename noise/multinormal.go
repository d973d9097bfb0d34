package noise

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// PSDTolerance is the relative eigenvalue tolerance of NewMultiNormal. An
// eigenvalue in [-PSDTolerance·λ_max, 0] is rounding noise (an eigensolver's
// error is of order n·ε_mach·‖Σ‖, and covariances assembled by subtraction,
// such as GP posteriors, carry more) and is clipped to zero; a more negative
// one makes the covariance clearly indefinite and is an error. Eigenvalues
// above it count towards Rank.
const PSDTolerance = 1e-10

// MultiNormal samples N(0, Σ) for a symmetric positive semi-definite,
// possibly singular, Σ.
//
// Σ is factorised once by a symmetric eigendecomposition Σ = V Λ Vᵀ (stable
// for singular and ill-conditioned matrices, unlike Cholesky, and no jitter is
// added). Negative eigenvalues within the tolerance are rounding noise and
// are clipped to zero (their total is ClippedMass); positive ones are kept
// as they are, however small. The sampler uses the k directions with λ > 0,
// L = V_k Λ_k^{1/2}, and returns L z for z a vector of k standard normals,
// so a draw costs O(n·k) and the sampled covariance V max(Λ, 0) Vᵀ = Σ +
// (clipped part) dominates Σ in the PSD order: clipping never removes noise.
//
// Floating-point caveat: Rand is a continuous Gaussian built from
// floating-point normals (see Normal); like any floating-point sampler its
// low-order bits are not protected against Mironov-style attacks. AddSnapped
// rounds input and output to a power-of-two lattice, which removes the
// dependence of the output set on the input's low-order bits; it is a
// hardening, not a proof (no exact discrete multivariate sampler is
// implemented).
type MultiNormal struct {
	n       int
	rank    int       // eigenvalues above the tolerance (numerical rank)
	k       int       // eigenvalues > 0, the directions sampled
	lmax    float64   // largest eigenvalue
	clipped float64   // sum of |λ| over eigenvalues <= 0 set to zero
	jitter  float64   // diagonal added by NewMultiNormalCholesky
	factor  []float64 // n×k, row-major: factor[i*k+c] = V[i,j_c]·√λ_{j_c}
}

// NewMultiNormalCholesky is NewMultiNormal through a Cholesky factorisation
// Σ + jI = L Lᵀ instead of an eigendecomposition: about 10-50x faster for
// large n, at the price of a diagonal jitter j when Σ is singular or
// nearly so (smooth-kernel covariances are). j starts at 0 and grows by
// tenfold steps from 1e-15·mean(diag Σ) up to 1e-6·mean(diag Σ); Jitter
// reports it. The sampled covariance Σ + jI dominates Σ, so the jitter only
// ever adds noise; callers that certify a guarantee for Σ (whose privacy
// loss can only fall as noise grows) should state it.
func NewMultiNormalCholesky(cov mat.Symmetric) (*MultiNormal, error) {
	n := cov.SymmetricDim()
	if n == 0 {
		return nil, fmt.Errorf("%w: empty covariance", ErrParam)
	}
	mean, gersh := 0.0, 0.0
	for i := range n {
		row := 0.0
		for j := range n {
			v := cov.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: covariance[%d,%d] = %v is not finite", ErrParam, i, j, v)
			}
			row += math.Abs(v)
		}
		mean += cov.At(i, i) / float64(n)
		gersh = math.Max(gersh, row)
	}
	if !(mean > 0) {
		return nil, fmt.Errorf("%w: covariance has no positive variance", ErrParam)
	}
	a := mat.NewSymDense(n, nil)
	var chol mat.Cholesky
	for j := 0.0; ; {
		a.CopySym(cov)
		for i := range n {
			a.SetSym(i, i, a.At(i, i)+j)
		}
		if chol.Factorize(a) {
			// Gershgorin bounds λ_max of Σ + jI from above: Granularity only
			// needs a scale.
			m := &MultiNormal{n: n, rank: n, k: n, lmax: gersh + j, jitter: j, factor: make([]float64, n*n)}
			var l mat.TriDense
			chol.LTo(&l)
			for r := range n {
				for c := 0; c <= r; c++ {
					m.factor[r*n+c] = l.At(r, c)
				}
			}
			return m, nil
		}
		switch {
		case j == 0:
			j = 1e-15 * mean
		case j < 1e-6*mean:
			j *= 10
		default:
			return nil, fmt.Errorf("%w: covariance is not positive semi-definite (Cholesky failed with jitter %g)", ErrParam, j)
		}
	}
}

// Jitter returns the diagonal jitter NewMultiNormalCholesky added (0 for
// NewMultiNormal, which never adds any).
func (m *MultiNormal) Jitter() float64 { return m.jitter }

// NewMultiNormal factorises cov. It fails if cov is empty, has a non-finite
// entry, or has an eigenvalue below -PSDTolerance·λ_max.
func NewMultiNormal(cov mat.Symmetric) (*MultiNormal, error) {
	n := cov.SymmetricDim()
	if n == 0 {
		return nil, fmt.Errorf("%w: empty covariance", ErrParam)
	}
	for i := range n {
		for j := i; j < n; j++ {
			if v := cov.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: covariance[%d,%d] = %v is not finite", ErrParam, i, j, v)
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("noise: eigendecomposition of the %d×%d covariance did not converge", n, n)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)

	lmax := 0.0
	for _, v := range vals {
		lmax = math.Max(lmax, v)
	}
	tol := PSDTolerance * lmax
	m := &MultiNormal{n: n, lmax: lmax}
	var keep []int
	for j, v := range vals {
		switch {
		case v < -tol:
			return nil, fmt.Errorf("%w: covariance is indefinite: eigenvalue %g < -%g (tolerance %g relative to the largest eigenvalue %g)",
				ErrParam, v, tol, PSDTolerance, lmax)
		case v <= 0:
			m.clipped -= v
		default:
			keep = append(keep, j)
			if v > tol {
				m.rank++
			}
		}
	}
	m.k = len(keep)
	m.factor = make([]float64, n*m.k)
	for c, j := range keep {
		s := math.Sqrt(vals[j])
		for i := range n {
			m.factor[i*m.k+c] = vecs.At(i, j) * s
		}
	}
	return m, nil
}

// Dim returns n, the dimension of the samples.
func (m *MultiNormal) Dim() int { return m.n }

// Rank returns the numerical rank of Σ: the number of eigenvalues above
// PSDTolerance·λ_max.
func (m *MultiNormal) Rank() int { return m.rank }

// ClippedMass returns the sum of |λ| over the negative eigenvalues set to
// zero. It is the trace-norm distance between Σ and the covariance actually
// sampled, so callers can report it; no jitter is ever added.
func (m *MultiNormal) ClippedMass() float64 { return m.clipped }

// Rand writes a draw of N(0, Σ) into dst and returns it. dst is allocated if
// nil; it panics, like gonum, if len(dst) != Dim(). A nil src means the
// crypto/rand source.
func (m *MultiNormal) Rand(dst []float64, src Source) []float64 {
	if dst == nil {
		dst = make([]float64, m.n)
	}
	if len(dst) != m.n {
		panic(fmt.Sprintf("noise: MultiNormal.Rand: len(dst) = %d, want %d", len(dst), m.n))
	}
	r := rand.New(orSecure(src))
	z := make([]float64, m.k)
	for j := range z {
		z[j] = r.NormFloat64()
	}
	for i := range m.n {
		row := m.factor[i*m.k : (i+1)*m.k]
		s := 0.0
		for j, f := range row {
			s += f * z[j]
		}
		dst[i] = s
	}
	return dst
}

// Granularity returns the lattice step AddSnapped uses: the smallest power
// of two >= √λ_max/2^40, the secure Laplace's resolution relative to the
// largest standard deviation. It is coarse enough to exceed the float
// spacing of coordinates up to about 2^12·√λ_max in magnitude, so the output
// set is gZⁿ there. It returns 0 for a zero covariance.
func (m *MultiNormal) Granularity() float64 {
	if m.lmax <= 0 {
		return 0
	}
	return ceilPowerOfTwo(math.Sqrt(m.lmax) / laplaceGranularityParam)
}

// AddSnapped writes round_g(round_g(x) + L z) into dst (allocated if nil)
// and returns it, with g = Granularity(). Rounding x first makes the
// distribution of the output depend on x only through its lattice point, and
// rounding the sum puts every output on gZⁿ whatever x's low-order bits were;
// the rounding is post-processing of the Gaussian mechanism, so it costs no
// privacy in the idealised real-valued model. It errors if len(x) != Dim()
// or x has a non-finite entry.
func (m *MultiNormal) AddSnapped(dst, x []float64, src Source) ([]float64, error) {
	if len(x) != m.n {
		return nil, fmt.Errorf("%w: len(x) = %d, want %d", ErrParam, len(x), m.n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: x[%d] = %v is not finite", ErrParam, i, v)
		}
	}
	if dst == nil {
		dst = make([]float64, m.n)
	}
	if len(dst) != m.n {
		return nil, fmt.Errorf("%w: len(dst) = %d, want %d", ErrParam, len(dst), m.n)
	}
	m.Rand(dst, src)
	g := m.Granularity()
	for i := range dst {
		if g == 0 {
			dst[i] = x[i]
			continue
		}
		dst[i] = roundToMultipleOfPowerOfTwo(roundToMultipleOfPowerOfTwo(x[i], g)+dst[i], g)
	}
	return dst, nil
}
