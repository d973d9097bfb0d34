package geo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestENURoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	origins := []Point{{39.98, 116.31}, {0, 0}, {-33.9, 151.2}, {64.1, -21.9}, {85, 10}, {-85, -179.9}}
	for _, o := range origins {
		enu := NewENU(o)
		e0, n0 := enu.Forward(o)
		if math.Hypot(e0, n0) > 1e-6 {
			t.Errorf("origin %v maps to (%g, %g), want (0, 0)", o, e0, n0)
		}
		var worst float64
		for i := 0; i < 2000; i++ {
			d := 50000 * math.Sqrt(rng.Float64())
			p := Destination(o, 360*rng.Float64(), d)
			e, n := enu.Forward(p)
			q := enu.Inverse(e, n)
			// Compare in metres: the round trip must be better than 1 mm.
			if err := Haversine(p, q); err > worst {
				worst = err
			}
		}
		if worst > 1e-3 {
			t.Errorf("origin %v: worst round-trip error %.3g m, want < 1 mm", o, worst)
		}
	}
}

func TestENUDistancesNearGeodesic(t *testing.T) {
	o := Point{39.98, 116.31}
	enu := NewENU(o)
	for _, d := range []float64{10, 1000, 10000, 50000} {
		for _, b := range []float64{0, 45, 90, 200} {
			p := Destination(o, b, d)
			e, n := enu.Forward(p)
			// Sphere vs ellipsoid radius differences are up to about 0.5 %.
			if got := math.Hypot(e, n); math.Abs(got-d) > 0.006*d {
				t.Errorf("d=%g bearing %g: plane distance %g", d, b, got)
			}
		}
	}
	// East is east and north is north.
	e, n := enu.Forward(Destination(o, 90, 1000))
	if e < 990 || math.Abs(n) > 10 {
		t.Errorf("1 km east maps to (%g, %g)", e, n)
	}
	e, n = enu.Forward(Destination(o, 0, 1000))
	if n < 990 || math.Abs(e) > 10 {
		t.Errorf("1 km north maps to (%g, %g)", e, n)
	}
}

func TestHaversineBearing(t *testing.T) {
	a, b := Point{0, 0}, Point{0, 1}
	if d := Haversine(a, b); math.Abs(d-111319.49) > 1 {
		t.Errorf("one degree of equator: %g m", d)
	}
	if br := Bearing(a, b); math.Abs(br-90) > 1e-9 {
		t.Errorf("bearing east = %g", br)
	}
	if br := Bearing(b, a); math.Abs(br-270) > 1e-9 {
		t.Errorf("bearing west = %g", br)
	}
	p := Destination(Point{39.98, 116.31}, 33, 1234)
	if d := Haversine(Point{39.98, 116.31}, p); math.Abs(d-1234) > 1e-6 {
		t.Errorf("destination distance %g", d)
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Point{{91, 0}, {0, 181}, {math.NaN(), 0}, {0, math.Inf(1)}} {
		if p.Validate() == nil {
			t.Errorf("%v validated", p)
		}
	}
	if err := (Point{-90, 180}).Validate(); err != nil {
		t.Error(err)
	}
}

func ExampleENU() {
	beijing := Point{Lat: 39.9847, Lon: 116.3184}
	plane := NewENU(beijing)
	east, north := plane.Forward(Destination(beijing, 90, 250))
	fmt.Printf("%.1f m east, %.1f m north\n", east, north)
	back := plane.Inverse(east, north)
	fmt.Printf("%.6f, %.6f\n", back.Lat, back.Lon)
	// Output:
	// 250.3 m east, 0.0 m north
	// 39.984700, 116.321331
}
