package geo

import "math"

// WGS84 ellipsoid constants.
const (
	WGS84A = 6378137.0         // semi-major axis, metres
	WGS84F = 1 / 298.257223563 // flattening
)

var (
	wgs84B  = WGS84A * (1 - WGS84F)
	wgs84E2 = WGS84F * (2 - WGS84F) // first eccentricity squared
)

// ENU is a local east-north-up tangent-plane projection around a fixed
// origin on the WGS84 ellipsoid. The zero value is not usable; call NewENU.
type ENU struct {
	origin                         Point
	sinLat, cosLat, sinLon, cosLon float64
	ox, oy, oz                     float64 // ECEF of the origin
}

// NewENU returns the tangent-plane projection centred at origin.
func NewENU(origin Point) *ENU {
	φ, λ := origin.Lat*math.Pi/180, origin.Lon*math.Pi/180
	e := &ENU{origin: origin}
	e.sinLat, e.cosLat = math.Sincos(φ)
	e.sinLon, e.cosLon = math.Sincos(λ)
	e.ox, e.oy, e.oz = ecef(φ, λ)
	return e
}

// Origin returns the projection's reference point.
func (e *ENU) Origin() Point { return e.origin }

// Forward maps p (at ellipsoid height 0) to east and north metres.
func (e *ENU) Forward(p Point) (east, north float64) {
	x, y, z := ecef(p.Lat*math.Pi/180, p.Lon*math.Pi/180)
	dx, dy, dz := x-e.ox, y-e.oy, z-e.oz
	east = -e.sinLon*dx + e.cosLon*dy
	north = -e.sinLat*e.cosLon*dx - e.sinLat*e.sinLon*dy + e.cosLat*dz
	return east, north
}

// Inverse maps plane coordinates back to the ellipsoid surface. It is the
// exact inverse of Forward for points in the hemisphere around the origin.
func (e *ENU) Inverse(east, north float64) Point {
	// Offset within the tangent plane, in ECEF.
	px := e.ox - e.sinLon*east - e.sinLat*e.cosLon*north
	py := e.oy + e.cosLon*east - e.sinLat*e.sinLon*north
	pz := e.oz + e.cosLat*north
	// Move along the local vertical by u to reach the ellipsoid:
	// A u^2 + B u + C = 0; take the root near zero in its stable form.
	ux, uy, uz := e.cosLat*e.cosLon, e.cosLat*e.sinLon, e.sinLat
	a2, b2 := WGS84A*WGS84A, wgs84B*wgs84B
	A := (ux*ux+uy*uy)/a2 + uz*uz/b2
	B := 2 * ((px*ux+py*uy)/a2 + pz*uz/b2)
	C := (px*px+py*py)/a2 + pz*pz/b2 - 1
	u := -2 * C / (B + math.Sqrt(B*B-4*A*C))
	x, y, z := px+u*ux, py+u*uy, pz+u*uz
	lat, lon := geodetic(x, y, z)
	return Point{Lat: lat * 180 / math.Pi, Lon: lon * 180 / math.Pi}
}

// ecef returns Earth-centred Earth-fixed coordinates of a point at height 0.
func ecef(φ, λ float64) (x, y, z float64) {
	s, c := math.Sincos(φ)
	n := WGS84A / math.Sqrt(1-wgs84E2*s*s)
	return n * c * math.Cos(λ), n * c * math.Sin(λ), n * (1 - wgs84E2) * s
}

// geodetic inverts ecef for points on or very near the surface by fixed-point
// iteration on the latitude; six rounds reach machine precision there.
func geodetic(x, y, z float64) (φ, λ float64) {
	λ = math.Atan2(y, x)
	p := math.Hypot(x, y)
	φ = math.Atan2(z, p*(1-wgs84E2))
	for i := 0; i < 6; i++ {
		s, c := math.Sincos(φ)
		n := WGS84A / math.Sqrt(1-wgs84E2*s*s)
		var h float64
		if math.Abs(c) > 1e-9 {
			h = p/c - n
		} else {
			h = math.Abs(z)/math.Abs(s) - n*(1-wgs84E2)
		}
		φ = math.Atan2(z, p*(1-wgs84E2*n/(n+h)))
	}
	return φ, λ
}
