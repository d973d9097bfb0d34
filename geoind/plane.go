package geoind

import (
	"fmt"
	"math"

	"github.com/tracepriv/tracepriv/geo"
)

// Vec is a point or offset on the tangent plane, in metres east and north
// of the plane's origin.
type Vec struct {
	X float64 `json:"x"` // east, metres
	Y float64 `json:"y"` // north, metres
}

// Dist returns the Euclidean distance between a and b, the metric d_X of
// every guarantee in this package.
func Dist(a, b Vec) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

func (v Vec) finite() bool {
	return !math.IsNaN(v.X) && !math.IsInf(v.X, 0) && !math.IsNaN(v.Y) && !math.IsInf(v.Y, 0)
}

// Plane is the local east-north tangent plane on which the mechanisms add
// noise. Its origin must be public (chosen without looking at the secret
// locations, e.g. a city centre): the guarantees hold for the Euclidean
// metric of this plane, which is within a relative 1e-4 of the geodesic
// distance for points up to about 80 km from the origin.
type Plane struct {
	enu *geo.ENU
}

// NewPlane returns the tangent plane at origin.
func NewPlane(origin geo.Point) (*Plane, error) {
	if err := origin.Validate(); err != nil {
		return nil, fmt.Errorf("geoind: plane origin: %w", err)
	}
	return &Plane{enu: geo.NewENU(origin)}, nil
}

// Origin returns the plane's public reference point.
func (p *Plane) Origin() geo.Point { return p.enu.Origin() }

// Forward maps a location to plane coordinates.
func (p *Plane) Forward(q geo.Point) Vec {
	x, y := p.enu.Forward(q)
	return Vec{x, y}
}

// MaxPlaneRadius is the radius (metres from the origin) beyond which
// Inverse clamps plane coordinates. Every point of the tangent plane within
// it lies above the ellipsoid (whose smallest radius is 6,356 km), so it
// has a position on the surface.
const MaxPlaneRadius = 6e6

// Inverse maps plane coordinates back to a location. It is total: a vector
// farther than MaxPlaneRadius from the origin is first moved radially onto
// that circle, and a non-finite coordinate counts as 0 (±Inf as the circle
// in its direction), so the result is always a valid, finite WGS84
// position. On released values this is post-processing and costs no
// privacy; within MaxPlaneRadius it is the exact inverse of Forward.
func (p *Plane) Inverse(v Vec) geo.Point {
	v = clampPlane(v)
	q := p.enu.Inverse(v.X, v.Y)
	if math.IsNaN(q.Lat) || math.IsNaN(q.Lon) || math.IsInf(q.Lat, 0) || math.IsInf(q.Lon, 0) {
		// Unreachable within MaxPlaneRadius; kept so that the promise
		// above does not rest on the projection's numerics alone.
		return p.Origin()
	}
	q.Lat = math.Max(-90, math.Min(90, q.Lat))
	if q.Lon < -180 || q.Lon > 180 {
		q.Lon = math.Remainder(q.Lon, 360)
	}
	return q
}

// clampPlane returns v with NaN coordinates replaced by 0 and moved
// radially onto the circle of radius MaxPlaneRadius if it lies outside.
func clampPlane(v Vec) Vec {
	fix := func(a float64) float64 {
		switch {
		case math.IsNaN(a):
			return 0
		case math.IsInf(a, 1):
			return MaxPlaneRadius
		case math.IsInf(a, -1):
			return -MaxPlaneRadius
		}
		return a
	}
	v = Vec{fix(v.X), fix(v.Y)}
	if r := math.Hypot(v.X, v.Y); r > MaxPlaneRadius {
		f := MaxPlaneRadius / r
		v = Vec{v.X * f, v.Y * f}
	}
	return v
}

// MaxOriginDistance is the farthest, in metres along the surface, a
// queried location may lie from a session's public origin: the distance
// MaxNoiseRadius allows the noise, for the same reason (the tangent plane
// stands for the surface only near its origin; its radial distances are
// short by 0.4 % at 1,000 km and the error grows quadratically).
const MaxOriginDistance = MaxNoiseRadius

// CheckOriginDistance is the one rule on how far a location may be from
// its public origin, for every entry point (Session.Query, hence geoind
// sanitize and query, and the server's locate): it returns a
// *param.Error named "location", with the distance and the fix, if p is
// farther than MaxOriginDistance (haversine) from origin. It depends on
// the location, so a refusal is an answer about it: callers refuse before
// drawing anything and charge nothing.
func CheckOriginDistance(origin, p geo.Point) error {
	if d := geo.Haversine(origin, p); d > MaxOriginDistance {
		return paramErr("location", fmt.Sprintf("%.6f,%.6f", p.Lat, p.Lon), fmt.Sprintf(
			"within %g km of the public origin %.4f,%.4f, where the tangent plane stands for the surface (it is %.0f km away); use an origin near where the person is (the centre of their city or region)",
			MaxOriginDistance/1000, origin.Lat, origin.Lon, d/1000))
	}
	return nil
}

// CheckLocation is CheckOriginDistance from the plane's origin.
func (p *Plane) CheckLocation(q geo.Point) error { return CheckOriginDistance(p.Origin(), q) }
