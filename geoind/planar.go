package geoind

import (
	"errors"
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

// ErrParam is wrapped by every parameter-validation error of this package.
var ErrParam = errors.New("geoind: invalid parameter")

func paramErr(name string, v any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrParam, name, v, want)
}

func checkEpsilon(name string, eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return paramErr(name, eps, "finite and > 0 (per metre)")
	}
	return nil
}

func checkConfidence(c float64) error {
	if !(c >= 0.5 && c < 1) {
		return paramErr("confidence", c, "in [0.5, 1)")
	}
	return nil
}

// NoiseAccuracy returns α_N(δ) = icpl(ε, δ): the radius within which the
// planar Laplace noise of parameter eps stays with probability confidence,
// C_ε⁻¹(δ) = -(W₋₁((δ-1)/e) + 1)/ε. At δ = 0.9 it is 3.889720169867429/ε.
// confidence must lie in [0, 1); NaN is returned on invalid input.
func NoiseAccuracy(eps, confidence float64) float64 {
	if checkEpsilon("epsilon", eps) != nil || !(confidence >= 0 && confidence < 1) {
		return math.NaN()
	}
	return noise.PlanarLaplace{Epsilon: eps}.RadiusQuantile(confidence)
}

// TestAccuracy returns α_θ(δ) = icll(ε, δ): the one-sided δ-quantile of the
// linear Laplace noise of the test, -ln(2(1-δ))/ε (ln 5/ε at δ = 0.9): with
// probability δ the test rejects every prediction farther than l + α_θ.
// It returns NaN on invalid input.
func TestAccuracy(eps, confidence float64) float64 {
	if checkEpsilon("epsilon", eps) != nil || checkConfidence(confidence) != nil {
		return math.NaN()
	}
	return noise.Laplace{Epsilon: eps, Sensitivity: 1}.Quantile(confidence)
}

// CN returns c_N(δ) = ε·α_N(δ), the constant of the paper's section IV-C
// (≈ 3.9 at δ = 0.9).
func CN(confidence float64) float64 { return NoiseAccuracy(1, confidence) }

// CTheta returns c_θ(δ) = ε·α_θ(δ) (ln 5 ≈ 1.6 at δ = 0.9).
func CTheta(confidence float64) float64 { return TestAccuracy(1, confidence) }

// ExpectedError returns the mean distance 2/ε between a location and its
// planar-Laplace release.
func ExpectedError(eps float64) float64 { return 2 / eps }

// Rect is an axis-aligned rectangle of the plane, the truncation region of
// a mechanism.
type Rect struct {
	Min Vec `json:"min"`
	Max Vec `json:"max"`
}

func (r *Rect) validate() error {
	if r == nil {
		return nil
	}
	if !r.Min.finite() || !r.Max.finite() || !(r.Min.X < r.Max.X && r.Min.Y < r.Max.Y) {
		return paramErr("region", *r, "finite with min < max on both axes")
	}
	return nil
}

// PlanarLaplace is the noise mechanism N(ε) of geo-indistinguishability:
// the secret plus planar Laplace noise (noise.PlanarLaplace, exact radius
// sampler). The zero value releases continuous coordinates; Grid and Region
// add the discretisation and truncation of Andrés et al. (CCS'13, §5), both
// applied by remapping (never rejection). See the package documentation for
// the guarantee of each variant.
type PlanarLaplace struct {
	// Grid is the step u in metres of the output grid (multiples of u from
	// the plane origin); 0 releases continuous coordinates. With a grid the
	// secret is snapped to the grid too, and the noise is sampled at the
	// slightly smaller ε_s of SamplingEpsilon so that the release is
	// ε-private despite floating point.
	Grid float64 `json:"grid,omitempty"`
	// Region, when set, truncates the output to the rectangle by remapping
	// every point outside it to the nearest point (grid point) inside.
	Region *Rect `json:"region,omitempty"`
}

// Validate checks the grid step and region.
func (m PlanarLaplace) Validate() error {
	if !(m.Grid >= 0) || math.IsInf(m.Grid, 1) {
		return paramErr("grid", m.Grid, "finite and >= 0 metres")
	}
	if err := m.Region.validate(); err != nil {
		return err
	}
	if m.Grid > 0 && m.Region != nil {
		if math.Floor(m.Region.Max.X/m.Grid) < math.Ceil(m.Region.Min.X/m.Grid) ||
			math.Floor(m.Region.Max.Y/m.Grid) < math.Ceil(m.Region.Min.Y/m.Grid) {
			return paramErr("region", *m.Region, "at least one grid point inside")
		}
	}
	return nil
}

// Release returns an eps-geo-indistinguishable release of the secret x
// (eps per metre). Randomness comes from src (nil: crypto/rand).
func (m PlanarLaplace) Release(x Vec, eps float64, src noise.Source) (Vec, error) {
	if err := m.Validate(); err != nil {
		return Vec{}, err
	}
	if err := checkEpsilon("epsilon", eps); err != nil {
		return Vec{}, err
	}
	if !x.finite() {
		return Vec{}, paramErr("location", x, "finite plane coordinates")
	}
	es := eps
	if m.Grid > 0 {
		var err error
		if es, err = SamplingEpsilon(eps, m.Grid); err != nil {
			return Vec{}, err
		}
		x = m.snap(x)
	}
	dx, dy := noise.PlanarLaplace{Epsilon: es, Src: src}.Rand()
	return m.remap(Vec{x.X + dx, x.Y + dy}), nil
}

// snap returns the nearest grid point, ignoring the region.
func (m PlanarLaplace) snap(v Vec) Vec {
	u := m.Grid
	return Vec{math.Round(v.X/u) * u, math.Round(v.Y/u) * u}
}

// remap is the deterministic post-processing: nearest in-region point, then
// nearest grid point inside the region. On a product grid in a rectangle
// both are per-axis operations, so the composition is the nearest in-domain
// grid point.
func (m PlanarLaplace) remap(y Vec) Vec {
	axis := func(v, lo, hi float64, clampIt bool) float64 {
		u := m.Grid
		if u == 0 {
			if clampIt {
				v = math.Min(math.Max(v, lo), hi)
			}
			return v
		}
		k := math.Round(v / u)
		if clampIt {
			k = math.Min(math.Max(k, math.Ceil(lo/u)), math.Floor(hi/u))
		}
		return k * u
	}
	r := m.Region
	if r == nil {
		return Vec{axis(y.X, 0, 0, false), axis(y.Y, 0, 0, false)}
	}
	return Vec{axis(y.X, r.Min.X, r.Max.X, true), axis(y.Y, r.Min.Y, r.Max.Y, true)}
}
