package noise

import (
	"math"

	"github.com/tracepriv/tracepriv/internal/numeric"
)

// binomialBound is 2^57: the secure Gaussian's lattice step is the smallest
// power of two >= 2σ/2^57, so the symmetric binomial it scales has
// √n = 2σ/g in (2^56, 2^57].
const binomialBound = 0x1p57

// Gaussian is the secure Gaussian sampler of standard deviation Sigma.
//
// Add rounds its input to the lattice gZ, g = Granularity(), and adds g times
// a centred binomial B(n, 1/2) - n/2 with √n = 2σ/g, whose variance n/4 =
// (σ/g)². With n about 2^113 trials the binomial is a Gaussian to far below
// float resolution, while its support and probabilities are integers and
// exactly computed ratios rather than floating-point artefacts (Google's
// secure-noise note; the binomial sampler is Bringmann et al.'s).
//
// When |x| exceeds about σ/16 the float spacing of x is coarser than g and
// the sum is rounded to it; every float near x stays reachable under any
// input, so, as in Google's library, no output is possible for one input and
// impossible for a neighbour.
//
// Gaussian says nothing about privacy by itself: choose Sigma with
// accountant.GaussianSigma for (ε, δ)-DP, or from a Rényi/CIP accountant.
// A nil Src means the crypto/rand source.
type Gaussian struct {
	Sigma float64
	Src   Source
}

// Validate reports whether Sigma is usable: finite, and large enough
// (>= 2^-966) that the lattice step is a normal float.
func (g Gaussian) Validate() error {
	if err := checkPositive("sigma", g.Sigma); err != nil {
		return err
	}
	if 2*g.Sigma/binomialBound < 0x1p-1022 || math.IsInf(2*g.Sigma, 1) {
		return paramError("sigma", g.Sigma, "in [2^-966, MaxFloat64/2]")
	}
	return nil
}

// Granularity returns the lattice step of the released values.
func (g Gaussian) Granularity() float64 {
	return ceilPowerOfTwo(2 * g.Sigma / binomialBound)
}

// Add returns x plus secure Gaussian noise, on the lattice gZ. It returns NaN
// (never the unnoised x) if Sigma is invalid.
func (g Gaussian) Add(x float64) float64 {
	if g.Validate() != nil {
		return math.NaN()
	}
	gran := g.Granularity()
	m := symmetricBinomial(orSecure(g.Src), 2*g.Sigma/gran)
	return roundToMultipleOfPowerOfTwo(x, gran) + float64(m)*gran
}

// Rand returns one draw of the noise alone, Add(0).
func (g Gaussian) Rand() float64 { return g.Add(0) }

// CDF returns P(N <= x) for the continuous N(0, σ²) the sampler approximates.
func (g Gaussian) CDF(x float64) float64 { return numeric.Phi(x / g.Sigma) }

// Quantile returns the p-quantile of N(0, σ²); NaN for p outside [0, 1].
func (g Gaussian) Quantile(p float64) float64 {
	if checkProb(p) != nil {
		return math.NaN()
	}
	return g.Sigma * numeric.PhiInv(p)
}
