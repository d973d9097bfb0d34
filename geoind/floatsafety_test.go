package geoind

import (
	"math"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/noise"
)

// A release path is float-safe when the set of values it can output does
// not depend on the secret's low-order bits (Mironov 2012): the outputs of
// the textbook sampler x + (R cos Θ, R sin Θ) reveal x through which
// floats they can be. The checks below are falsifiers: they release many
// times at secrets that differ in low-order bits and by sub-grid shifts
// and check (1) every release is an exact grid point, and (2) every grid
// point in the bulk of the noise is hit, for each secret. A sampler whose
// float support is sparse, or that leaks the secret's bits into its
// outputs, fails one of them; the negative controls show that it does.

// releaser draws one release of the secret x.
type releaser func(x Vec, src noise.Source) (Vec, error)

type supportResult struct {
	offGrid int // releases that are not exact grid points
	missed  int // bulk grid points never hit
	bulk    int // bulk grid points
}

// checkSupport releases n times at x and counts off-grid releases and the
// grid points within bulk cells of x that were never hit.
func checkSupport(t *testing.T, rel releaser, x Vec, u float64, bulk, n int, src noise.Source) supportResult {
	t.Helper()
	// Hits are marked in the square of side 2·bulk+1 around the secret's
	// cell (only the disc inside it is judged): a map of every cell hit
	// cost as much as the releases.
	side := int64(2*bulk + 1)
	hit := make([]bool, side*side)
	ci, cj := int64(math.Round(x.X/u)), int64(math.Round(x.Y/u))
	var res supportResult
	for range n {
		z, err := rel(x, src)
		if err != nil {
			t.Fatal(err)
		}
		i, j := math.Round(z.X/u), math.Round(z.Y/u)
		if z.X != i*u || z.Y != j*u {
			res.offGrid++
			continue
		}
		if di, dj := int64(i)-ci+int64(bulk), int64(j)-cj+int64(bulk); di >= 0 && di < side && dj >= 0 && dj < side {
			hit[di*side+dj] = true
		}
	}
	for di := int64(-bulk); di <= int64(bulk); di++ {
		for dj := int64(-bulk); dj <= int64(bulk); dj++ {
			if di*di+dj*dj > int64(bulk*bulk) {
				continue
			}
			res.bulk++
			if !hit[(di+int64(bulk))*side+dj+int64(bulk)] {
				res.missed++
			}
		}
	}
	return res
}

// floatSafetySecrets are secrets far from the origin (where a float sum
// keeps few fractional bits) that differ in their last bit and by
// sub-grid shifts, some within one cell and some across cells.
func floatSafetySecrets() []Vec {
	x := Vec{4_100_000.3, -2_700_000.2}
	return []Vec{
		x,
		{math.Nextafter(x.X, math.Inf(1)), math.Nextafter(x.Y, math.Inf(-1))},
		{x.X + 0.19, x.Y - 0.29},  // same cell
		{x.X + 0.41, x.Y + 0.123}, // next cell east
		{12.5 - 1e-9, -7.49},      // near the origin, on a cell edge
	}
}

// TestReleaseFloatSafety is the falsifier for PlanarLaplace.Release: noise
// of scale 1/ε = 50 cells; each of the 1,257 grid points within 20 cells
// of the secret has probability at least 4.3·10⁻⁵, so it is expected at
// least 17 times in 400,000 releases and missed with probability below
// e^-17 under the ideal mechanism (below 10⁻⁴ for all of them together).
func TestReleaseFloatSafety(t *testing.T) {
	const u, eps, bulk, n = 1.0, 0.02, 20, 400_000
	m := PlanarLaplace{Grid: u}
	rel := func(x Vec, src noise.Source) (Vec, error) { return m.Release(x, eps, src) }
	for k, x := range floatSafetySecrets() {
		res := checkSupport(t, rel, x, u, bulk, n, noise.Seeded(uint64(60+k)))
		if res.offGrid > 0 || res.missed > 0 {
			t.Errorf("secret %v: %d of %d releases off the grid, %d of %d bulk grid points never hit", x, res.offGrid, n, res.missed, res.bulk)
		}
	}

	// Negative control 1: the textbook continuous sampler (the old
	// Grid = 0): no release is a grid point.
	cont := func(x Vec, src noise.Source) (Vec, error) {
		dx, dy := noise.PlanarLaplace{Epsilon: eps, Src: src}.Rand()
		return Vec{x.X + dx, x.Y + dy}, nil
	}
	res := checkSupport(t, cont, floatSafetySecrets()[0], u, bulk, 20_000, noise.Seeded(70))
	t.Logf("continuous sampler: %d of 20000 releases off the grid", res.offGrid)
	if res.offGrid < 19_000 {
		t.Errorf("falsifier missed the continuous sampler: only %d of 20000 releases off the grid", res.offGrid)
	}
	// Negative control 2: a sampler with sparse float support, its angle
	// drawn from 4 random bits (16 directions), then remapped to the grid
	// like the real one. All its releases are grid points, but whole
	// regions of the bulk are never hit.
	sparse := func(x Vec, src noise.Source) (Vec, error) {
		r := (noise.Exponential(src) + noise.Exponential(src)) / eps
		th := 2 * math.Pi * float64(noise.Bits(src, 4)) / 16
		s, c := math.Sincos(th)
		return m.point(cellIndex{math.Round(x.X/u) + math.Round(r*c/u), math.Round(x.Y/u) + math.Round(r*s/u)}), nil
	}
	res = checkSupport(t, sparse, floatSafetySecrets()[0], u, bulk, n, noise.Seeded(71))
	t.Logf("sparse sampler: %d of %d bulk grid points never hit", res.missed, res.bulk)
	if res.offGrid != 0 || res.missed < res.bulk/4 {
		t.Errorf("falsifier missed the sparse sampler: %d off grid, %d of %d bulk points missed", res.offGrid, res.missed, res.bulk)
	}
}

// TestReleaseSameCellIdentical: secrets in one cell get bitwise identical
// releases from the same draws, through Release, the predictive
// mechanism's test and predictions (Step), and the session's reported
// latitude and longitude. So the output distribution cannot depend on
// anything but the cell.
func TestReleaseSameCellIdentical(t *testing.T) {
	xs := floatSafetySecrets()
	same := [][2]Vec{{xs[0], xs[1]}, {xs[0], xs[2]}}
	m := PlanarLaplace{Grid: 1}
	for _, p := range same {
		for seed := range uint64(200) {
			a, err := m.Release(p[0], 0.02, noise.Seeded(seed))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := m.Release(p[1], 0.02, noise.Seeded(seed))
			if a != b {
				t.Fatalf("seed %d: releases %v and %v for %v and %v in one cell", seed, a, b, p[0], p[1])
			}
		}
	}

	// The predictive mechanism: a threshold near the secret's distance to
	// the prediction, so that the test's outcome is genuinely random.
	mech := &Mechanism{
		Manager: FixedUtility{Params: Params{Epsilon: 10, PR0: 0.5}, Accuracy: 20},
		Noise:   PlanarLaplace{Grid: 1},
	}
	ts := []time.Time{time.Unix(0, 0), time.Unix(60, 0), time.Unix(120, 0)}
	hard := 0
	for _, p := range same {
		for seed := range uint64(300) {
			ra, err := mech.Sanitize([]Vec{p[0], p[0], p[0]}, ts, noise.Seeded(seed))
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := mech.Sanitize([]Vec{p[1], p[1], p[1]}, ts, noise.Seeded(seed))
			if len(ra) != len(rb) {
				t.Fatalf("seed %d: runs of %d and %d steps", seed, len(ra), len(rb))
			}
			for i := range ra {
				if ra[i] != rb[i] {
					t.Fatalf("seed %d step %d: %+v vs %+v for secrets in one cell", seed, i, ra[i], rb[i])
				}
				if i > 0 && ra[i].Hard {
					hard++
				}
			}
		}
	}
	if hard == 0 || hard == 2*2*300 {
		t.Errorf("the test was not exercised: %d of %d tested steps hard", hard, 2*2*300)
	}

	// The session's reported positions: secrets 1e-9° apart in one cell.
	cfg := paperConfig()
	cfg.Rate = cfg.Params.Epsilon / 10
	q := [2]geo.Point{{Lat: 39.98, Lon: 116.32}, {Lat: math.Nextafter(39.98, 90), Lon: 116.32 + 1e-9}}
	for seed := range uint64(50) {
		var reps [2][]Report
		for k, p := range q {
			s, err := NewSession(cfg, noise.Seeded(seed))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				rep, err := s.Query(p, ts[i])
				if err != nil {
					t.Fatal(err)
				}
				reps[k] = append(reps[k], rep)
			}
		}
		for i := range reps[0] {
			if reps[0][i] != reps[1][i] {
				t.Fatalf("seed %d: reports %+v and %+v", seed, reps[0][i], reps[1][i])
			}
		}
	}
}

// TestNoiseScaleLimit: noise too wide for the tangent plane is refused
// from public parameters before sampling, and the plane's inverse is total,
// so no release can produce a non-finite position.
func TestNoiseScaleLimit(t *testing.T) {
	if err := CheckNoiseScale("epsilon", minNoiseEpsilon); err != nil {
		t.Errorf("the limit itself refused: %v", err)
	}
	r := noise.PlanarLaplace{Epsilon: minNoiseEpsilon}.RadiusQuantile(NoiseRadiusConfidence)
	if math.Abs(r-MaxNoiseRadius) > 1e-6*MaxNoiseRadius {
		t.Errorf("at the limit ε the 1-1e-9 radius is %g m, want %g", r, MaxNoiseRadius)
	}
	for _, eps := range []float64{minNoiseEpsilon * 0.999, 1e-12, math.Ln10 / 1e7} {
		if err := CheckNoiseScale("epsilon", eps); err == nil {
			t.Errorf("ε = %g accepted", eps)
		}
		src := countingSource{}
		if _, err := (PlanarLaplace{Grid: 1}).Release(Vec{}, eps, &src); err == nil || src.n != 0 {
			t.Errorf("ε = %g: release err %v after %d draws", eps, err, src.n)
		}
	}
	p, err := NewPlane(geo.Point{Lat: 39.9042, Lon: 116.4074})
	if err != nil {
		t.Fatal(err)
	}
	inf, nan := math.Inf(1), math.NaN()
	for _, v := range []Vec{{1e7, 0}, {0, -1e7}, {3e7, 4e7}, {1e300, -1e300}, {inf, 0}, {-inf, inf}, {nan, 5}, {nan, nan}, {5.9e6, 0}, {0, 6.1e6}} {
		q := p.Inverse(v)
		if err := q.Validate(); err != nil {
			t.Errorf("Inverse(%v) = %v: %v", v, q, err)
		}
	}
	// Within MaxPlaneRadius the inverse is still exact.
	for _, v := range []Vec{{1000, -2000}, {5e5, 3e5}} {
		if w := p.Forward(p.Inverse(v)); Dist(v, w) > 1e-6 {
			t.Errorf("Forward(Inverse(%v)) = %v", v, w)
		}
	}
}

// countingSource counts draws, to show that a refusal happens before any.
type countingSource struct{ n int }

func (c *countingSource) Uint64() uint64 { c.n++; return 0x9e3779b97f4a7c15 * uint64(c.n) }
