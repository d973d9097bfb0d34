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

// Inverse maps plane coordinates back to a location.
func (p *Plane) Inverse(v Vec) geo.Point { return p.enu.Inverse(v.X, v.Y) }
