// Package trace is the location-trace model of tracepriv: timestamped WGS84
// points of one user, their validation, and streaming readers and writers
// for GeoLife PLT, CSV, GeoJSON and GPX 1.1.
//
// Timestamps are treated as public throughout tracepriv: mechanisms keep
// them and design their noise from them, never from the coordinates.
package trace
