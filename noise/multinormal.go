package noise

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tracepriv/tracepriv/internal/numeric"
	"github.com/tracepriv/tracepriv/param"
)

// PSDTolerance is the relative eigenvalue tolerance of NewMultiNormal. An
// eigenvalue in [-PSDTolerance·λ_max, 0] is rounding noise (an eigensolver's
// error is of order n·ε_mach·‖Σ‖, and covariances assembled by subtraction,
// such as GP posteriors, carry more) and is clipped to zero; a more negative
// one makes the covariance clearly indefinite and is an error. Eigenvalues
// above it count towards Rank.
const PSDTolerance = 1e-10

// MultiNormal samples N(0, Σ) for a symmetric positive semi-definite,
// possibly singular, Σ, through a real factor L with L Lᵀ ≈ Σ: n×n
// lower-triangular from NewMultiNormalCholesky, n×k from NewMultiNormal.
//
// It has two kinds of output, with different guarantees:
//
//   - Rand returns fl(L z) for floating-point (ziggurat) normals z. It is a
//     floating-point sampler for simulation and experiments; its low-order
//     bits depend on the input in ways an adversary can exploit (Mironov
//     2012), so it is never used for releases.
//   - AddOnGrid and AddSnapped release y = g·round((x + L z)/g) for exact
//     normal deviates z (LazyNormal), rounding the exact real x + L z, with
//     L's float entries read as real numbers. The output is the Gaussian
//     mechanism with noise covariance exactly L Lᵀ, followed by rounding:
//     it depends on x only through the exact sum, every point of gZⁿ is a
//     possible output whatever the low-order bits of x, and the rounding is
//     post-processing, which costs no privacy.
//
// For the Cholesky constructor L Lᵀ ⪰ Σ is certified, so a privacy guarantee
// computed for Σ holds for the release (more noise can only lower a
// Gaussian mechanism's loss); see NewMultiNormalCholesky.
type MultiNormal struct {
	n       int
	rank    int     // eigenvalues above the tolerance (numerical rank)
	k       int     // columns of the factor: deviates per draw
	clipped float64 // sum of |λ| over eigenvalues <= 0 set to zero
	jitter  float64 // diagonal added by NewMultiNormalCholesky
	maxVar  float64 // largest diagonal entry of Σ, for Granularity
	f       *denseFactor
}

// maxCholeskyRefactors bounds the refactorisations NewMultiNormalCholesky
// makes when the backward-error bound exceeds the jitter; one is the norm.
const maxCholeskyRefactors = 20

// NewMultiNormalCholesky factorises Σ + jI = L Lᵀ by Cholesky instead of an
// eigendecomposition: about 10-50x faster for large n, at the price of a
// diagonal jitter j > 0, which Jitter reports and callers should state.
//
// j is chosen so that the computed factor satisfies L Lᵀ ⪰ Σ rigorously.
// Rounding makes L Lᵀ = Σ + jI + D + ΔA, where D is the rounding of the
// stored diagonal (|D_ii| <= u|Σ_ii + j|) and |ΔA| <= γ|L||L|ᵀ elementwise
// (Higham, Theorem 10.3, γ_{n+1} for the textbook algorithm; γ_{n+4} here
// to cover gonum's blocking and reciprocal scaling; u = 2^-53, γ_k =
// ku/(1-ku)). After each factorisation ‖ΔA‖₂ is bounded by γ times a
// Collatz–Wielandt upper bound on ρ(|L||L|ᵀ), computed from |L| alone; if
// that bound plus max|D_ii| exceeds j, Σ is refactorised with twice the
// bound. On acceptance Σ ⪯ L Lᵀ ⪯ Σ + 2jI. The first j is 2γ_{n+4} times a
// Gershgorin bound on λ_max(Σ), about 2e-13·λ_max for n = 1,000, which
// usually passes at once. When Cholesky fails (Σ singular or nearly so, as
// smooth-kernel covariances are) j grows tenfold from max(that,
// 1e-15·mean(diag Σ)) up to 1e-6·mean(diag Σ); failing there, Σ is
// reported as not positive semi-definite.
func NewMultiNormalCholesky(cov mat.Symmetric) (*MultiNormal, error) {
	n := cov.SymmetricDim()
	if n == 0 {
		return nil, fmt.Errorf("%w: empty covariance", param.ErrInvalid)
	}
	mean, gersh, maxVar := 0.0, 0.0, 0.0
	for i := range n {
		row := 0.0
		for j := range n {
			v := cov.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: covariance[%d,%d] = %v is not finite", param.ErrInvalid, i, j, v)
			}
			row += math.Abs(v)
		}
		mean += cov.At(i, i) / float64(n)
		maxVar = math.Max(maxVar, cov.At(i, i))
		gersh = math.Max(gersh, row)
	}
	if !(mean > 0) {
		return nil, fmt.Errorf("%w: covariance has no positive variance", param.ErrInvalid)
	}
	ladder := numeric.JitterLadder{Floor: 1e-15 * mean, Factor: 10, Cap: 1e-6 * mean}
	j := 2 * gammaK(n+choleskyBackwardRoundings) * gersh
	a := mat.NewSymDense(n, nil)
	var chol mat.Cholesky
	for refactors := 0; ; {
		a.CopySym(cov)
		diagMax := 0.0
		for i := range n {
			d := a.At(i, i) + j
			a.SetSym(i, i, d)
			diagMax = math.Max(diagMax, math.Abs(d))
		}
		if !chol.Factorize(a) {
			next, ok := ladder.Next(j)
			if !ok {
				return nil, fmt.Errorf("%w: covariance is not positive semi-definite (Cholesky failed with jitter %g)", param.ErrInvalid, j)
			}
			j = next
			continue
		}
		f := lowerFactor(&chol, n)
		need := (choleskyBackwardBound(f) + diagMax*unitRoundoff) * (1 + 0x1p-40)
		if need <= j {
			return &MultiNormal{n: n, rank: n, k: n, jitter: j, maxVar: maxVar, f: f}, nil
		}
		if refactors++; refactors > maxCholeskyRefactors {
			return nil, fmt.Errorf("noise: Cholesky backward error %g still exceeds the jitter %g after %d refactorisations", need, j, maxCholeskyRefactors)
		}
		j = 2 * need
	}
}

// lowerFactor packs L = Uᵀ from gonum's upper Cholesky factor.
func lowerFactor(chol *mat.Cholesky, n int) *denseFactor {
	f := newDenseFactor(n, n, true)
	u := chol.RawU().(interface{ RawTriangular() blas64.Triangular }).RawTriangular()
	for r := range n {
		urow := u.Data[r*u.Stride : r*u.Stride+n]
		for c := r; c < n; c++ {
			f.a[c*(c+1)/2+r] = urow[c] // L[c][r] = U[r][c]
		}
	}
	return f
}

// Jitter returns the diagonal jitter j NewMultiNormalCholesky added:
// Σ ⪯ L Lᵀ ⪯ Σ + 2jI. It is 0 for NewMultiNormal, which adds none.
func (m *MultiNormal) Jitter() float64 { return m.jitter }

// NewMultiNormal factorises cov by a symmetric eigendecomposition
// Σ = V Λ Vᵀ (stable for singular and ill-conditioned matrices; no jitter).
// Negative eigenvalues within PSDTolerance·λ_max are rounding noise and are
// clipped to zero (their total is ClippedMass); positive ones are kept as
// they are, however small. The factor is L = V_k Λ_k^{1/2} over the k
// directions with λ > 0, so a draw costs O(n·k), and V max(Λ, 0) Vᵀ = Σ +
// (clipped part) dominates Σ in exact arithmetic. Unlike the Cholesky
// constructor, the eigensolver's own rounding (of order n·u·‖Σ‖) is not
// certified away: L Lᵀ ⪰ Σ holds up to it.
//
// It fails if cov is empty, has a non-finite entry, or has an eigenvalue
// below -PSDTolerance·λ_max.
func NewMultiNormal(cov mat.Symmetric) (*MultiNormal, error) {
	n := cov.SymmetricDim()
	if n == 0 {
		return nil, fmt.Errorf("%w: empty covariance", param.ErrInvalid)
	}
	maxVar := 0.0
	for i := range n {
		for j := i; j < n; j++ {
			if v := cov.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: covariance[%d,%d] = %v is not finite", param.ErrInvalid, i, j, v)
			}
		}
		maxVar = math.Max(maxVar, cov.At(i, i))
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
	m := &MultiNormal{n: n, maxVar: maxVar}
	var keep []int
	for j, v := range vals {
		switch {
		case v < -tol:
			return nil, fmt.Errorf("%w: covariance is indefinite: eigenvalue %g < -%g (tolerance %g relative to the largest eigenvalue %g)",
				param.ErrInvalid, v, tol, PSDTolerance, lmax)
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
	m.f = newDenseFactor(n, m.k, false)
	for c, j := range keep {
		s := math.Sqrt(vals[j])
		for i := range n {
			m.f.a[i*m.k+c] = vecs.At(i, j) * s
		}
	}
	return m, nil
}

// Dim returns n, the dimension of the samples.
func (m *MultiNormal) Dim() int { return m.n }

// Rank returns the numerical rank of Σ: the number of eigenvalues above
// PSDTolerance·λ_max (n for the Cholesky constructor).
func (m *MultiNormal) Rank() int { return m.rank }

// ClippedMass returns the sum of |λ| over the negative eigenvalues set to
// zero. It is the trace-norm distance between Σ and the covariance actually
// sampled, so callers can report it; NewMultiNormal adds no jitter.
func (m *MultiNormal) ClippedMass() float64 { return m.clipped }

// Rand writes fl(L z) into dst and returns it, for z floating-point
// standard normals (Normal's ziggurat). dst is allocated if nil; it panics,
// like gonum, if len(dst) != Dim(). A nil src means the crypto/rand source.
//
// Rand is for simulation (Monte Carlo experiments, attack harnesses), never
// for releasing data: its reachable floats depend on the input's scale and
// low-order bits. Use AddOnGrid or AddSnapped to release.
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
	m.f.apply(dst, z)
	return dst
}

// granularityBits: AddSnapped's lattice step is about 2^-24 of the largest
// standard deviation, 16 million steps per σ, so rounding changes the
// noise by a relative 1e-8 at most, while the exact path stays rare.
const granularityBits = 24

// Granularity returns the lattice step AddSnapped uses: the smallest power
// of two >= 2^-24·√(max_i Σ_ii). For Σ in square metres with standard
// deviations of 1-1,000 m it is 2^-24 to 2^-14 m. It returns 0 for a
// covariance with zero diagonal.
func (m *MultiNormal) Granularity() float64 {
	if !(m.maxVar > 0) {
		return 0
	}
	return ceilPowerOfTwo(math.Ldexp(math.Sqrt(m.maxVar), -granularityBits))
}

// AddSnapped is AddOnGrid with g = Granularity(). For a covariance with
// zero diagonal (no noise to add) it copies x.
func (m *MultiNormal) AddSnapped(dst, x []float64, src Source) ([]float64, error) {
	g := m.Granularity()
	if g == 0 {
		if err := m.checkVectors(dst, x); err != nil {
			return nil, err
		}
		if dst == nil {
			dst = make([]float64, m.n)
		}
		copy(dst, x)
		return dst, nil
	}
	return m.AddOnGrid(dst, x, g, src)
}

// AddOnGrid writes the exact lattice release y_i = g·round((x_i + W_i)/g),
// W = L z with z exact standard normal deviates, into dst (allocated if
// nil; it may be x) and returns it. A nil src means the crypto/rand source.
//
// The rounding is of the exact real x_i + W_i: W is computed in floating
// point with a rigorous error bound, and any coordinate whose enclosure
// straddles a cell boundary is refined with more digits of its deviates in
// big-float interval arithmetic until it is decided. So y is exactly the
// Gaussian mechanism x + N(0, L Lᵀ) post-processed by rounding to gZⁿ, and
// every lattice point is a possible output for every x. Ties have
// probability zero; refinement stops at 4096 bits per deviate with an error
// (probability about 2^-4000).
//
// It errors (wrapping param.ErrInvalid) if len(x) or len(dst) is not Dim(), g is not
// a power of two in [2^-1000, 2^1000], an x_i is not finite or |x_i| > 2^52·g
// (lattice points near x would not all be floats), or the largest standard
// deviation exceeds 2^40·g (the output could leave that range).
func (m *MultiNormal) AddOnGrid(dst, x []float64, g float64, src Source) ([]float64, error) {
	y, _, err := m.addOnGrid(dst, x, g, src)
	return y, err
}

// addOnGrid is AddOnGrid that also returns how many coordinates took the
// exact path, for tests.
func (m *MultiNormal) addOnGrid(dst, x []float64, g float64, src Source) ([]float64, int, error) {
	if err := m.checkVectors(dst, x); err != nil {
		return nil, 0, err
	}
	if err := checkGrid(g); err != nil {
		return nil, 0, err
	}
	for i, v := range x {
		if math.Abs(v) > maxInputMultiple*g {
			return nil, 0, fmt.Errorf("%w: x[%d] = %v is too large for grid %g: |x|/g must be at most 2^52", param.ErrInvalid, i, v, g)
		}
	}
	if sd := math.Sqrt(m.maxVar); sd > maxNoiseToGrid*g {
		return nil, 0, fmt.Errorf("%w: grid %g is too fine for noise of standard deviation %g: want g >= sd·2^-40", param.ErrInvalid, g, sd)
	}
	if dst == nil {
		dst = make([]float64, m.n)
	}
	refined, err := releaseOnGrid(dst, x, m.f, g, src)
	if err != nil {
		return nil, refined, err
	}
	return dst, refined, nil
}

// checkVectors validates the lengths of dst (if not nil) and x and that x
// is finite.
func (m *MultiNormal) checkVectors(dst, x []float64) error {
	if len(x) != m.n {
		return fmt.Errorf("%w: len(x) = %d, want %d", param.ErrInvalid, len(x), m.n)
	}
	if dst != nil && len(dst) != m.n {
		return fmt.Errorf("%w: len(dst) = %d, want %d", param.ErrInvalid, len(dst), m.n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: x[%d] = %v is not finite", param.ErrInvalid, i, v)
		}
	}
	return nil
}
