package geo_test

import (
	"fmt"

	"github.com/tracepriv/tracepriv/geo"
)

func ExampleENU() {
	beijing := geo.Point{Lat: 39.9847, Lon: 116.3184}
	plane := geo.NewENU(beijing)
	east, north := plane.Forward(geo.Destination(beijing, 90, 250))
	fmt.Printf("%.1f m east, %.1f m north\n", east, north)
	back := plane.Inverse(east, north)
	fmt.Printf("%.6f, %.6f\n", back.Lat, back.Lon)
	// Output:
	// 250.3 m east, 0.0 m north
	// 39.984700, 116.321331
}
