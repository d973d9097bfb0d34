package geoind

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/noise"
)

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

// MaxNoiseRadius is the largest noise this package releases: the
// NoiseRadiusConfidence quantile of every planar Laplace noise it samples
// must lie within 1,000 km. Beyond that the tangent plane no longer stands
// for the Earth's surface (its radial distances are short by 0.4 % at
// 1,000 km from the origin, an error growing quadratically, and Inverse
// clamps at 6,000 km, MaxPlaneRadius), so a
// guarantee stated on the plane would describe outputs that cannot be
// written as positions. The check uses only public parameters (ε of the
// step, or the range of ε a Config's manager can ask for), before any
// sampling.
const MaxNoiseRadius = 1e6

// NoiseRadiusConfidence is the quantile MaxNoiseRadius applies to.
const NoiseRadiusConfidence = 1 - 1e-9

// minNoiseEpsilon is the smallest ε (per metre) whose noise passes the
// MaxNoiseRadius check, ≈ 2.4·10⁻⁵.
var minNoiseEpsilon = noise.PlanarLaplace{Epsilon: 1}.RadiusQuantile(NoiseRadiusConfidence) / MaxNoiseRadius

// CheckNoiseScale returns an error (a *param.Error named name) if planar
// Laplace noise at eps per metre is too wide to release: its
// NoiseRadiusConfidence quantile exceeds MaxNoiseRadius. It depends only on
// eps.
func CheckNoiseScale(name string, eps float64) error {
	if err := checkEpsilon(name, eps); err != nil {
		return err
	}
	if eps < minNoiseEpsilon {
		r := noise.PlanarLaplace{Epsilon: eps}.RadiusQuantile(NoiseRadiusConfidence)
		return paramErr(name, eps, fmt.Sprintf(">= %.3g per metre: at this ε the noise exceeds %s with probability 1e-9, beyond the %g km the tangent plane can represent (MaxNoiseRadius)",
			minNoiseEpsilon, noiseKm(r), MaxNoiseRadius/1000))
	}
	return nil
}

// noiseKm writes a noise radius in metres as km for an error message, in
// three significant digits ("any distance" for an ε so small that the
// radius overflows).
func noiseKm(r float64) string {
	if math.IsInf(r, 1) || math.IsNaN(r) {
		return "any distance"
	}
	return fmt.Sprintf("%.3g km", r/1000)
}

// PlanarLaplace is the noise mechanism N(ε) of geo-indistinguishability on
// a grid: the secret is snapped to its grid cell, planar Laplace noise
// (noise.PlanarLaplace, exact radius sampler) rounded to whole cells is
// added, and the result is optionally truncated to a Region. Both steps
// remap (never reject). See the package documentation for the guarantee
// and its floating-point analysis.
//
// The zero value is not usable: Grid must be set. Continuous (ungridded)
// output is refused because its low-order bits depend on the secret
// (Mironov 2012); a 1 m grid costs a relative 10⁻⁴ to 10⁻⁶ of ε.
type PlanarLaplace struct {
	// Grid is the step u > 0 in metres of the output grid (multiples of u
	// from the plane origin). The secret is snapped to the grid too, and
	// the noise is sampled at the slightly smaller ε_s of SamplingEpsilon
	// so that the release is ε-private despite floating point.
	Grid float64 `json:"grid"`
	// Region, when set, truncates the output to the rectangle by remapping
	// every point outside it to the nearest grid point inside.
	Region *Rect `json:"region,omitempty"`

	// noiseFactor in (0, 1) scales the noise (and the predictive test's)
	// down: NOT PRIVATE, the weakened build only AuditNoise makes, so that
	// the audit can be shown to catch a calibration bug. Unexported and
	// never serialised, so no state, certificate or caller outside this
	// package can carry it.
	noiseFactor float64
}

// factor is the noise factor, 1 unless AuditNoise weakened m.
func (m PlanarLaplace) factor() float64 {
	if m.noiseFactor > 0 && m.noiseFactor < 1 {
		return m.noiseFactor
	}
	return 1
}

// DefaultGrid is the grid step the CLI uses, 1 m.
const DefaultGrid = 1.0

// Validate checks the grid step and region.
func (m PlanarLaplace) Validate() error {
	if m.Grid == 0 {
		return paramErr("grid", m.Grid, "> 0 metres: continuous output leaks the secret through its low-order bits (Mironov 2012); use a grid such as 1 m")
	}
	if !(m.Grid > 0) || math.IsInf(m.Grid, 1) {
		return paramErr("grid", m.Grid, "finite and > 0 metres")
	}
	if err := m.Region.validate(); err != nil {
		return err
	}
	if m.Region != nil {
		if math.Floor(m.Region.Max.X/m.Grid) < math.Ceil(m.Region.Min.X/m.Grid) ||
			math.Floor(m.Region.Max.Y/m.Grid) < math.Ceil(m.Region.Min.Y/m.Grid) {
			return paramErr("region", *m.Region, "at least one grid point inside")
		}
	}
	return nil
}

// samplingEpsilon validates m and eps (including the noise scale) and
// returns the ε_s to sample at.
func (m PlanarLaplace) samplingEpsilon(eps float64) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if err := CheckNoiseScale("epsilon", eps); err != nil {
		return 0, err
	}
	return SamplingEpsilon(eps, m.Grid)
}

// Release returns an eps-geo-indistinguishable release of the secret x
// (eps per metre), a grid point. Randomness comes from src (nil:
// crypto/rand).
//
// The arithmetic is done in whole grid cells: the secret's cell (i, j) =
// round(x/u) and the noise's cells (round(dx/u), round(dy/u)) are integers
// well below 2^52, so their sum is exact, and the output (i+m)·u depends on
// x only through (i, j). Secrets in the same cell get bitwise identical
// releases from the same random draws.
func (m PlanarLaplace) Release(x Vec, eps float64, src noise.Source) (Vec, error) {
	es, err := m.samplingEpsilon(eps)
	if err != nil {
		return Vec{}, err
	}
	c, err := m.cell(x)
	if err != nil {
		return Vec{}, err
	}
	dx, dy := noise.PlanarLaplace{Epsilon: es / m.factor(), Src: src}.Rand()
	u := m.Grid
	return m.point(cellIndex{c.i + math.Round(dx/u), c.j + math.Round(dy/u)}), nil
}

// cellIndex is a grid cell: integer-valued indices along east and north.
type cellIndex struct{ i, j float64 }

// cell returns the grid cell of x, refusing non-finite coordinates and
// coordinates beyond coordBound (no location on Earth is that far from a
// tangent plane's origin), so that the indices stay exact integers.
func (m PlanarLaplace) cell(x Vec) (cellIndex, error) {
	if !x.finite() || math.Abs(x.X) > coordBound || math.Abs(x.Y) > coordBound {
		return cellIndex{}, paramErr("location", x, "finite plane coordinates within 10,000 km of the origin")
	}
	u := m.Grid
	return cellIndex{math.Round(x.X / u), math.Round(x.Y / u)}, nil
}

// point truncates a cell to the region (per axis, the nearest in-region
// cell: nearest in-region point, then nearest grid point, on a product grid
// in a rectangle) and returns its grid point. It is deterministic
// post-processing of the cell.
func (m PlanarLaplace) point(c cellIndex) Vec {
	u := m.Grid
	if r := m.Region; r != nil {
		c.i = math.Min(math.Max(c.i, math.Ceil(r.Min.X/u)), math.Floor(r.Max.X/u))
		c.j = math.Min(math.Max(c.j, math.Ceil(r.Min.Y/u)), math.Floor(r.Max.Y/u))
	}
	return Vec{c.i * u, c.j * u}
}
