// Package geo holds the geometry that every other tracepriv package works in:
// WGS84 points, great-circle distances and bearings, and a local
// east-north-up (ENU) tangent-plane projection.
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
