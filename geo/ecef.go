package geo

import "math"

// ECEF returns the Earth-centred, Earth-fixed coordinates, in metres, of p
// at height 0 on the WGS84 ellipsoid. It needs no origin, so a mechanism
// that adds noise in these coordinates has no parameter to take from the
// data, wherever the person travels.
//
// The straight line between two points is never longer than any path on
// the surface between them, so two places within r on the ground are within
// r in ECEF: a guarantee for displacements of up to r in ECEF covers
// displacements of up to r on the ground, anywhere on Earth.
func ECEF(p Point) (x, y, z float64) {
	return ecef(p.Lat*math.Pi/180, p.Lon*math.Pi/180)
}

// FromECEF returns the point of the ellipsoid's surface below (or above)
// (x, y, z): its geodetic latitude and longitude, the height dropped (a
// projection along the ellipsoid's normal). Applied to a noisy release it
// is post-processing. It returns a finite point for every finite input;
// the Earth's centre maps to (0, 0).
func FromECEF(x, y, z float64) Point {
	if x == 0 && y == 0 && z == 0 {
		return Point{}
	}
	φ, λ := geodetic(x, y, z)
	return Point{Lat: φ * 180 / math.Pi, Lon: λ * 180 / math.Pi}
}
