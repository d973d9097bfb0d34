package geoind

import "github.com/tracepriv/tracepriv/geo"

// BeijingCentre is the public point (Tiananmen Square, the usual
// reference point of central Beijing, 39.9042 N 116.4074 E) that anchors the
// tangent plane of the GeoLife case study and of the examples. It is chosen
// without looking at the traces, as every plane origin must be.
var BeijingCentre = geo.Point{Lat: 39.9042, Lon: 116.4074}
