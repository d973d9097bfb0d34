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
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			if p.Validate() == nil {
				t.Errorf("%v validated", p)
			}
		})
	}
	if err := (Point{-90, 180}).Validate(); err != nil {
		t.Error(err)
	}
}

// ECEF and FromECEF invert each other on the surface, and a point moved
// along the normal by up to 100 km projects back to where it was; chords
// are never longer than the great-circle distance (the guarantee's
// direction), on pairs up to a few thousand kilometres apart.
func TestECEF(t *testing.T) {
	for _, p := range []Point{{39.98, 116.33}, {-33.9, 151.2}, {89.9999, 10}, {-90, 0}, {0, 180}, {39.47, 75.99}} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			x, y, z := ECEF(p)
			q := FromECEF(x, y, z)
			if d := Haversine(p, q); d > 1e-6 {
				t.Errorf("%v: round trip %v, %.3g m away", p, q, d)
			}
			// Move along the ellipsoid normal by h.
			φ, λ := p.Lat*math.Pi/180, p.Lon*math.Pi/180
			ux, uy, uz := math.Cos(φ)*math.Cos(λ), math.Cos(φ)*math.Sin(λ), math.Sin(φ)
			for _, h := range []float64{-1e5, -300, 300, 1e5} {
				q := FromECEF(x+h*ux, y+h*uy, z+h*uz)
				if d := Haversine(p, q); d > 1e-3 && !(math.Abs(p.Lat) > 89.99 && d < 1) {
					t.Errorf("%v moved %g m along the normal projects to %v, %.3g m away", p, h, q, d)
				}
			}
		})
	}
	if q := FromECEF(0, 0, 0); q != (Point{}) {
		t.Errorf("centre: %v", q)
	}
	pairs := [][2]Point{{{39.9, 116.3}, {39.9009, 116.3}}, {{39.9, 116.3}, {45.75, 126.6}}, {{36.06, 103.8}, {39.47, 75.99}}, {{0, 0}, {0, 90}}}
	for _, pr := range pairs {
		x1, y1, z1 := ECEF(pr[0])
		x2, y2, z2 := ECEF(pr[1])
		chord := math.Sqrt((x1-x2)*(x1-x2) + (y1-y2)*(y1-y2) + (z1-z2)*(z1-z2))
		// Haversine uses a sphere; the ellipsoid's geodesic differs by
		// under 0.6 %, the chord's shortfall grows as d^3/(24 R^2).
		if g := Haversine(pr[0], pr[1]); chord > g*(1+0.006) {
			t.Errorf("%v: chord %.1f m longer than the ground distance %.1f m", pr, chord, g)
		}
	}
}
