package geo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Where a public origin comes from.
const (
	// OriginFlag: the user gave it (a command-line flag or an option).
	OriginFlag = "flag"
	// OriginPrior: public data recorded in the prior file (tracepriv fit
	// writes the centre of its fitting corpus).
	OriginPrior = "prior"
)

// ErrNoOrigin is returned by PublicOrigin when neither the user nor public
// data gives an origin.
var ErrNoOrigin = errors.New("no public origin")

// Origin is the reference point of a tangent-plane projection together
// with where it came from. A mechanism's parameters must not depend on the
// data it protects: an origin (or a grid anchored at it) derived from the
// first point of a trace tells apart positions on either side of a cell
// line, so there is no such default.
type Origin struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// Source is OriginFlag or OriginPrior where an origin is chosen (a
	// certificate). It is empty, and omitted, in a prior file
	// (prior.Prior.Origin), whose digest (prior.Prior.Digest) must not
	// change when an existing file is read and written back.
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Point returns the origin as a Point.
func (o Origin) Point() Point { return Point{Lat: o.Lat, Lon: o.Lon} }

// PublicOrigin is the one rule for choosing a projection origin: the user's
// if given, else the one recorded with public data (a prior file), else
// ErrNoOrigin. Nothing is derived from the trace.
func PublicOrigin(user, public *Point, publicNote string) (Origin, error) {
	switch {
	case user != nil:
		if err := user.Validate(); err != nil {
			return Origin{}, err
		}
		return Origin{Lat: user.Lat, Lon: user.Lon, Source: OriginFlag}, nil
	case public != nil:
		if err := public.Validate(); err != nil {
			return Origin{}, fmt.Errorf("public origin: %w", err)
		}
		return Origin{Lat: public.Lat, Lon: public.Lon, Source: OriginPrior, Note: publicNote}, nil
	}
	return Origin{}, ErrNoOrigin
}

// MaxPlaneRadius is the largest distance from the origin, in metres, that
// InverseClamped maps back as is; beyond it a plane point is moved radially
// onto this circle. The orthographic tangent plane covers a hemisphere, but
// far from the origin a metre in the plane is many metres on the ground.
const MaxPlaneRadius = 2_000_000

// InverseClamped is Inverse made total: a plane point farther than
// MaxPlaneRadius from the origin is first moved radially to that distance.
// It is post-processing of a release, so it costs no privacy, and it never
// returns a non-finite position for finite input.
func (e *ENU) InverseClamped(east, north float64) Point {
	if r := math.Hypot(east, north); r > MaxPlaneRadius {
		east, north = east*MaxPlaneRadius/r, north*MaxPlaneRadius/r
	}
	return e.Inverse(east, north)
}

// ParseLatLon reads "LAT,LON" in decimal degrees.
func ParseLatLon(s string) (Point, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return Point{}, fmt.Errorf("%q: want LAT,LON in decimal degrees", s)
	}
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
	lon, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	if err := errors.Join(err1, err2); err != nil {
		return Point{}, fmt.Errorf("%q: want LAT,LON in decimal degrees: %w", s, err)
	}
	p := Point{Lat: lat, Lon: lon}
	return p, p.Validate()
}
