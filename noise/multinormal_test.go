package noise

import (
	"errors"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/param"
	"gonum.org/v1/gonum/mat"
)

// rbf returns the n×n squared-exponential kernel on t = 0..n-1 with
// lengthscale ell: numerically singular for ell of a few steps.
func rbf(n int, ell float64) *mat.SymDense {
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			d := float64(i - j)
			s.SetSym(i, j, math.Exp(-d*d/(2*ell*ell)))
		}
	}
	return s
}

// TestMultiNormalRBFCovariance: the sample covariance of draws for a
// singular RBF Σ matches Σ entrywise within z standard errors, the standard
// error of a Gaussian sample covariance being √((Σii Σjj + Σij²)/N).
func TestMultiNormalRBFCovariance(t *testing.T) {
	const (
		n = 12
		N = 40000
	)
	cov := rbf(n, 4)
	mn, err := NewMultiNormal(cov)
	if err != nil {
		t.Fatal(err)
	}
	if mn.Rank() >= n || mn.Rank() < 2 {
		t.Errorf("rank %d for a numerically singular RBF kernel of size %d", mn.Rank(), n)
	}
	t.Logf("rank %d of %d, clipped mass %.3g", mn.Rank(), n, mn.ClippedMass())
	if mn.ClippedMass() > PSDTolerance*float64(n)*n {
		t.Errorf("clipped mass %g larger than n·tol·λmax", mn.ClippedMass())
	}
	// Rank agrees with a direct count of the eigenvalues above tolerance.
	var eig mat.EigenSym
	eig.Factorize(cov, false)
	vals := eig.Values(nil)
	lmax, want := vals[len(vals)-1], 0
	for _, v := range vals {
		if v > PSDTolerance*lmax {
			want++
		}
	}
	if mn.Rank() != want {
		t.Errorf("Rank %d, want %d (eigenvalues %v)", mn.Rank(), want, vals)
	}
	checkSampleCov(t, mn, cov, 0, N, Seeded(31))
}

// checkSampleCov draws N samples from mn and checks their covariance
// (the mean is known to be 0) against cov + jitter I entrywise within
// z = 4.41717 standard errors, √((Σii Σjj + Σij²)/N).
func checkSampleCov(t *testing.T, mn *MultiNormal, cov mat.Symmetric, jitter float64, N int, src Source) {
	t.Helper()
	n := cov.SymmetricDim()
	sum := make([]float64, n*n)
	dst := make([]float64, n)
	for range N {
		mn.Rand(dst, src)
		for i := range n {
			for j := range n {
				sum[i*n+j] += dst[i] * dst[j]
			}
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			want := cov.At(i, j)
			if i == j {
				want += jitter
			}
			got := sum[i*n+j] / float64(N)
			se := math.Sqrt((cov.At(i, i)*cov.At(j, j) + want*want) / float64(N))
			if math.Abs(got-want) > 4.41717*se {
				t.Errorf("cov[%d,%d] = %.4f, want %.4f ± %.4f", i, j, got, want, 4.41717*se)
			}
		}
	}
}

// outer returns the rank-one covariance v vᵀ.
func outer(v []float64) *mat.SymDense {
	cov := mat.NewSymDense(len(v), nil)
	for i := range v {
		for j := i; j < len(v); j++ {
			cov.SetSym(i, j, v[i]*v[j])
		}
	}
	return cov
}

func TestMultiNormalRankOne(t *testing.T) {
	v := []float64{1, -2, 0.5}
	cov := outer(v)
	mn, err := NewMultiNormal(cov)
	if err != nil {
		t.Fatal(err)
	}
	if mn.Rank() != 1 {
		t.Fatalf("rank %d, want 1", mn.Rank())
	}
	src := Seeded(32)
	for range 100 {
		x := mn.Rand(nil, src)
		// x must be a multiple of v up to the rounding-size positive
		// eigenvalues the sampler keeps (each <= PSDTolerance·λmax, λmax =
		// v·v = 5.25): |x - (x·v/v·v)v| <= 6 standard deviations of those.
		c := (x[0]*v[0] + x[1]*v[1] + x[2]*v[2]) / 5.25
		tol := 6 * math.Sqrt(2*PSDTolerance*5.25)
		for i := range 3 {
			if math.Abs(x[i]-c*v[i]) > tol {
				t.Fatalf("draw %v not in span of %v", x, v)
			}
		}
	}
}

func TestMultiNormalBadInput(t *testing.T) {
	indef := mat.NewSymDense(2, []float64{1, 0, 0, -0.1})
	if _, err := NewMultiNormal(indef); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("indefinite covariance: err = %v", err)
	}
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	if _, err := NewMultiNormal(nan); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("NaN covariance: err = %v", err)
	}
	// A rounding-size negative eigenvalue is clipped and reported.
	tiny := mat.NewSymDense(2, []float64{1, 0, 0, -1e-13})
	mn, err := NewMultiNormal(tiny)
	if err != nil {
		t.Fatalf("tiny negative eigenvalue rejected: %v", err)
	}
	if mn.Rank() != 1 || math.Abs(mn.ClippedMass()-1e-13) > 1e-20 {
		t.Errorf("rank %d, clipped %g; want 1, 1e-13", mn.Rank(), mn.ClippedMass())
	}
	if _, err := mn.AddSnapped(nil, []float64{1}, Seeded(1)); err == nil {
		t.Error("AddSnapped accepted a wrong-length x")
	}
	if _, err := mn.AddSnapped(nil, []float64{1, math.Inf(1)}, Seeded(1)); err == nil {
		t.Error("AddSnapped accepted a non-finite x")
	}
}

func TestMultiNormalAddSnapped(t *testing.T) {
	mn, err := NewMultiNormal(rbf(5, 2))
	if err != nil {
		t.Fatal(err)
	}
	g := mn.Granularity()
	if !isPowerOfTwo(g) {
		t.Fatalf("granularity %g not a power of two", g)
	}
	src := Seeded(33)
	x := []float64{0.1, 1.0 / 3, -7, 100.01, math.Pi}
	for range 50 {
		y, err := mn.AddSnapped(nil, x, src)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if v/g != math.Trunc(v/g) {
				t.Fatalf("y[%d] = %.17g not on lattice %g", i, v, g)
			}
		}
	}
}

// The Cholesky sampler on a singular RBF Σ: a small reported jitter, and
// draws whose sample covariance matches Σ + jitter·I within z standard
// errors; an indefinite matrix is refused.
func TestMultiNormalCholesky(t *testing.T) {
	t.Parallel()
	const (
		n = 30
		N = 40000
	)
	cov := rbf(n, 8)
	mn, err := NewMultiNormalCholesky(cov)
	if err != nil {
		t.Fatal(err)
	}
	if j := mn.Jitter(); !(j > 0 && j <= 1e-6) {
		t.Errorf("jitter %g for a numerically singular RBF kernel", j)
	}
	src := Seeded(32)
	checkSampleCov(t, mn, cov, mn.Jitter(), N, src)
	x := make([]float64, n)
	if _, err := mn.AddSnapped(nil, x, src); err != nil {
		t.Error(err)
	}
	bad := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	if _, err := NewMultiNormalCholesky(bad); !errors.Is(err, param.ErrInvalid) {
		t.Errorf("indefinite covariance: %v", err)
	}
}
