// Package geo holds the geometry that every other tracepriv package works in:
// WGS84 points, great-circle distances and bearings, and a local
// east-north-up (ENU) tangent-plane projection.
//
// For example, a point 250 m east of a public origin, in the origin's
// plane and back:
//
//	beijing := geo.Point{Lat: 39.9847, Lon: 116.3184}
//	plane := geo.NewENU(beijing) // a public origin, never one taken from the data
//	east, north := plane.Forward(geo.Destination(beijing, 90, 250))
//	fmt.Printf("%.1f m east, %.1f m north\n", east, north) // 250.3 m east, 0.0 m north
//	p := plane.Inverse(east+10, north)                     // 10 m further east, on the ellipsoid
//	fmt.Printf("%.1f m away\n", geo.Haversine(beijing, p)) // 260.0 m away
//
// Privacy mechanisms add noise in metres, so traces are projected to a local
// tangent plane around a public reference point, noised there, and projected
// back. The projection is the orthographic ENU frame of the WGS84 ellipsoid:
// a point is mapped to the east and north components of its ECEF offset from
// the origin. Its inverse puts the point back on the ellipsoid surface
// (height 0) by solving a quadratic along the local vertical, so the round
// trip is exact to floating-point precision (well under a millimetre within
// 50 km). Distances in the plane differ from geodesic distances by about
// 1 - cos(d/R): 1.5 m at 50 km, far below any privacy noise scale.
//
// Great-circle helpers delegate to github.com/paulmach/orb/geo.
package geo
