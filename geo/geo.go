package geo

import (
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	orbgeo "github.com/paulmach/orb/geo"
)

// Point is a WGS84 position in decimal degrees.
type Point struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// ErrInvalidPoint is wrapped by the errors Point.Validate returns.
var ErrInvalidPoint = errors.New("invalid point")

// Validate reports whether p has finite coordinates within the WGS84 ranges.
func (p Point) Validate() error {
	switch {
	case math.IsNaN(p.Lat) || math.IsInf(p.Lat, 0):
		return fmt.Errorf("%w: latitude %v is not finite", ErrInvalidPoint, p.Lat)
	case math.IsNaN(p.Lon) || math.IsInf(p.Lon, 0):
		return fmt.Errorf("%w: longitude %v is not finite", ErrInvalidPoint, p.Lon)
	case p.Lat < -90 || p.Lat > 90:
		return fmt.Errorf("%w: latitude %v outside [-90, 90]", ErrInvalidPoint, p.Lat)
	case p.Lon < -180 || p.Lon > 180:
		return fmt.Errorf("%w: longitude %v outside [-180, 180]", ErrInvalidPoint, p.Lon)
	}
	return nil
}

func (p Point) orb() orb.Point { return orb.Point{p.Lon, p.Lat} }

// Haversine returns the great-circle distance in metres between a and b on a
// sphere of radius orb.EarthRadius.
func Haversine(a, b Point) float64 { return orbgeo.DistanceHaversine(a.orb(), b.orb()) }

// Bearing returns the initial great-circle bearing from a to b in degrees
// clockwise from north, in [0, 360).
func Bearing(a, b Point) float64 {
	d := orbgeo.Bearing(a.orb(), b.orb())
	if d < 0 {
		d += 360
	}
	return d
}

// Destination returns the point reached from p after dist metres along the
// great circle with initial bearing (degrees clockwise from north).
func Destination(p Point, bearing, dist float64) Point {
	q := orbgeo.PointAtBearingAndDistance(p.orb(), bearing, dist)
	return Point{Lat: q.Lat(), Lon: q.Lon()}
}
