package noise

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tracepriv/tracepriv/internal/stattest"
	"github.com/tracepriv/tracepriv/param"
)

// TestBinomialAcceptanceBound checks numerically that the rejection step of
// symmetricBinomial never needs an acceptance probability above 1: at the
// block starts (where the bound is tightest) for j = 0..maxBinomialBlock and
// √n across (2^56, 2^57].
func TestBinomialAcceptanceBound(t *testing.T) {
	maxA := 0.0
	for _, sqrtN := range []float64{0x1p56 * (1 + 0x1p-52), 0x1.3p56, 0x1.8p56, 0x1.fffffp56, 0x1p57} {
		s := int64(math.Round(math.Sqrt2*sqrtN + 1))
		for j := int64(0); j <= maxBinomialBlock; j++ {
			for _, m := range []int64{j * s, -j*s - 1, j*s + s/2, -(j + 1) * s} {
				a := binomialProbability(sqrtN, m) * float64(4*s) * math.Ldexp(1, int(j)) / binomialAcceptBound
				maxA = math.Max(maxA, a)
			}
		}
	}
	if maxA > 1 {
		t.Errorf("acceptance probability reaches %g > 1", maxA)
	}
	t.Logf("largest acceptance probability %.4f (8/(5√π) = %.4f)", maxA, 8/(5*math.Sqrt(math.Pi)))
}

func TestGaussianRoundsToGranularity(t *testing.T) {
	src := Seeded(5)
	for _, sigma := range []float64{1, 0.1, 1e6, 1e-9, 3.7} {
		g := Gaussian{Sigma: sigma, Src: src}
		gran := g.Granularity()
		if !isPowerOfTwo(gran) || gran < 2*sigma/0x1p57 || gran >= 4*sigma/0x1p57 {
			t.Errorf("sigma %g: granularity %g not the power of two in [2σ/2^57, 4σ/2^57)", sigma, gran)
		}
		for _, x := range []float64{0, 0.1, -2.5, 1e3 / 7} {
			for range 10 {
				if y := g.Add(x); y/gran != math.Trunc(y/gran) {
					t.Errorf("sigma %g: Add(%g) = %.17g not on the lattice %g", sigma, x, y, gran)
				}
			}
		}
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1), 0x1p-1000} {
		g := Gaussian{Sigma: s, Src: src}
		if !errors.Is(g.Validate(), param.ErrInvalid) {
			t.Errorf("Validate accepted sigma %g", s)
		}
		if !math.IsNaN(g.Add(1)) {
			t.Errorf("Add with sigma %g not NaN", s)
		}
	}
}

// TestGaussianStatistics mirrors Google's: 125,000 draws, mean and variance
// (kurtosis 3) within z = 4.41717 standard errors, plus a KS fit.
func TestGaussianStatistics(t *testing.T) {
	t.Parallel()
	const n = 125000
	for i, c := range []struct{ x, sigma float64 }{{0, 1}, {-3, 0.25}, {1e4, 50}} {
		t.Run(fmt.Sprintf("x=%g,sigma=%g", c.x, c.sigma), func(t *testing.T) {
			g := Gaussian{Sigma: c.sigma, Src: Seeded(uint64(500 + i))}
			xs := make([]float64, n)
			for k := range xs {
				xs[k] = g.Add(c.x)
			}
			if err := stattest.CheckMoments(xs, c.x, c.sigma*c.sigma, stattest.KurtosisNormal, stattest.Z); err != nil {
				t.Errorf("%+v: %v", c, err)
			}
			if d, p := stattest.KS(xs, func(v float64) float64 { return g.CDF(v - c.x) }); p < 1e-4 {
				t.Errorf("%+v: KS D=%g p=%g", c, d, p)
			}
		})
	}
	if q := (Gaussian{Sigma: 2}).Quantile(0.975); math.Abs(q-2*1.959963984540054) > 1e-12 {
		t.Errorf("Quantile(0.975) = %.15g", q)
	}
}

func TestGaussianSigmaBoundary(t *testing.T) {
	if err := (Gaussian{Sigma: 0x1p-966}).Validate(); err != nil {
		t.Errorf("sigma 2^-966 rejected: %v", err)
	}
	if err := (Gaussian{Sigma: 0x1.fffp-967}).Validate(); err == nil {
		t.Error("sigma below 2^-966 accepted")
	}
	if err := (Laplace{Epsilon: 1, Sensitivity: 0x1p-982}).Validate(); err != nil {
		t.Errorf("scale 2^-982 rejected: %v", err)
	}
	if err := (Laplace{Epsilon: 1, Sensitivity: 0x1.fffp-983}).Validate(); err == nil {
		t.Error("scale below 2^-982 accepted")
	}
}
