package trace

import (
	"math"
	"strings"
	"testing"
	"time"
)

// CheckFinite refuses non-finite or out-of-range positions and infinite
// altitudes, naming the trace and the point; NaN altitude means none.
func TestCheckFinite(t *testing.T) {
	t0 := time.Date(2008, 10, 24, 2, 0, 0, 0, time.UTC)
	ok := &Trace{UID: "a", Points: []Point{{Time: t0, Lat: 39.9, Lon: 116.3, Alt: math.NaN()}}}
	if err := CheckFinite([]*Trace{ok}); err != nil {
		t.Errorf("a valid trace refused: %v", err)
	}
	if err := CheckFinite(nil); err != nil {
		t.Errorf("no traces refused: %v", err)
	}
	for _, c := range []struct {
		p    Point
		name string
		want string
	}{
		{Point{Time: t0, Lat: math.NaN(), Lon: 116.3}, "b", "trace 2 (b), point 2: "},
		{Point{Time: t0, Lat: 39.9, Lon: math.Inf(1)}, "b", "trace 2 (b), point 2: "},
		{Point{Time: t0, Lat: 91, Lon: 116.3}, "", "trace 2 (u), point 2: "},
		{Point{Time: t0, Lat: 39.9, Lon: 116.3, Alt: math.Inf(-1)}, "b", "trace 2 (b), point 2: altitude -Inf is not finite"},
	} {
		bad := &Trace{UID: "u", Name: c.name, Points: []Point{ok.Points[0], c.p}}
		err := CheckFinite([]*Trace{ok, bad})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want prefix %q", c.p, err, c.want)
		}
	}
}
