package trajdb

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/param"
	"github.com/tracepriv/tracepriv/trace"
)

// universeTestBox is the public box of the GeoLife tests.
var universeTestBox = trace.BBox{MinLat: 39.75, MinLon: 116.15, MaxLat: 40.10, MaxLon: 116.60}

// NewGrid refuses what trace.BBox.Validate refuses and a box too large for
// a tangent-plane grid, as *param.Errors naming the box; the deprecated
// ParseBBox keeps the old combined check.
func TestNewGridRefusesBoxes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"40,116,39,117", "MINLAT 40 must be below MAXLAT 39"},
		{"-95,0,0,1", "latitude -95"},
		{"0,0,30,30", "tangent-plane grid is only accurate"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			var v [4]float64
			if _, err := fmt.Sscanf(tc.in, "%g,%g,%g,%g", &v[0], &v[1], &v[2], &v[3]); err != nil {
				t.Fatal(err)
			}
			_, err := NewGrid(trace.BBox{MinLat: v[0], MinLon: v[1], MaxLat: v[2], MaxLon: v[3]}, 1000)
			var pe *param.Error
			if !errors.As(err, &pe) || pe.Name != "bbox" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewGrid(%s) = %v, want a *param.Error on bbox containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestNewGridRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		t.Run(fmt.Sprintf("cell %v", c), func(t *testing.T) {
			if _, err := NewGrid(universeTestBox, c); err == nil {
				t.Errorf("NewGrid(cell %v) accepted", c)
			}
		})
	}
	_, err := NewGrid(universeTestBox, 10) // about 3900×3900 cells
	if err == nil || !strings.Contains(err.Error(), "more than 1000000") {
		t.Errorf("NewGrid(10 m over Beijing) = %v, want a refusal naming the cap", err)
	}
}

func TestGridGeometry(t *testing.T) {
	t.Parallel()
	g, err := NewGrid(universeTestBox, 300)
	if err != nil {
		t.Fatal(err)
	}
	// The box is about 38.4 km (east, at 39.75°N) by 38.9 km (north).
	if g.Cols < 128 || g.Cols > 130 || g.Rows < 129 || g.Rows > 131 {
		t.Errorf("grid %s: want about 129×130 cells", g)
	}
	if g.Size() != g.Cols*g.Rows {
		t.Errorf("Size %d != %d×%d", g.Size(), g.Cols, g.Rows)
	}
	if d := g.MaxDistortion(); d <= 0 || d > 2e-5 {
		t.Errorf("MaxDistortion = %g, want about 1e-5 for a 27 km half-diagonal", d)
	}
	// Every cell whose centre is in the box maps back to itself.
	inside := 0
	for c := 0; c < g.Size(); c++ {
		p := g.Centre(c)
		got, ok := g.Cell(p)
		if !ok {
			continue
		}
		inside++
		if got != c {
			t.Fatalf("Cell(Centre(%d)) = %d", c, got)
		}
	}
	if inside < g.Size()*95/100 {
		t.Errorf("only %d of %d cell centres inside the box", inside, g.Size())
	}
	// Row-major from the south-west: east is +1, north is +Cols, and
	// neighbouring centres are one cell apart on the ground (1 % allows for
	// the haversine sphere against the ellipsoid).
	c := g.Size()/2 + g.Cols/2
	p := g.Centre(c)
	for _, step := range []struct {
		bearing float64
		delta   int
	}{{90, 1}, {0, g.Cols}, {270, -1}, {180, -g.Cols}} {
		q := geo.Destination(p, step.bearing, 300)
		if got, ok := g.Cell(q); !ok || got != c+step.delta {
			t.Errorf("300 m at bearing %v from cell %d: cell %d, want %d", step.bearing, c, got, c+step.delta)
		}
		if d := geo.Haversine(p, g.Centre(c+step.delta)); math.Abs(d-300) > 3 {
			t.Errorf("centres of cells %d and %d are %.2f m apart, want 300", c, c+step.delta, d)
		}
	}
	if d := g.Distance(0, 3*g.Cols+4); d != 1500 {
		t.Errorf("Distance((0,0), (3,4)) = %v, want 1500", d)
	}
	// Corners and edges are in; anything past them is out.
	for _, p := range []geo.Point{{Lat: 39.75, Lon: 116.15}, {Lat: 40.10, Lon: 116.60}, {Lat: 39.75, Lon: 116.60}, {Lat: 40.10, Lon: 116.15}} {
		if _, ok := g.Cell(p); !ok {
			t.Errorf("corner %v outside the grid", p)
		}
	}
	for _, p := range []geo.Point{{Lat: 39.7499, Lon: 116.3}, {Lat: 40.1001, Lon: 116.3}, {Lat: 39.9, Lon: 116.1499}, {Lat: 39.9, Lon: 116.6001}, {Lat: math.NaN(), Lon: 116.3}} {
		if _, ok := g.Cell(p); ok {
			t.Errorf("%v inside the grid", p)
		}
	}
}

// The universe is fixed by the public box and cell size: databases mapped
// from different data share it exactly.
func TestGridIndependentOfData(t *testing.T) {
	t.Parallel()
	g1, _ := NewGrid(universeTestBox, 300)
	g2, _ := NewGrid(universeTestBox, 300)
	if g1.Size() != g2.Size() || g1.x0 != g2.x0 || g1.y0 != g2.y0 {
		t.Fatalf("two grids over the same box differ: %s / %s", g1, g2)
	}
	mk := func(uid string, lat, lon float64, n int) *trace.Trace {
		tr := &trace.Trace{UID: uid}
		for i := range n {
			tr.Points = append(tr.Points, trace.Point{Time: mapAt(float64(i)), Lat: lat + 0.003*float64(i), Lon: lon})
		}
		return tr
	}
	a, _, err := FromTraces(g1, []*trace.Trace{mk("a", 39.9, 116.3, 5)}, MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := FromTraces(g2, []*trace.Trace{mk("b", 39.76, 116.59, 50), mk("c", 40.0, 116.2, 2)}, MapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Size != b.Size || a.Size != g1.Size() {
		t.Errorf("alphabet sizes %d and %d, want the grid's %d for any data", a.Size, b.Size, g1.Size())
	}
	// A stored grid (JSON) rebuilds to the same universe.
	js, err := json.Marshal(g1)
	if err != nil {
		t.Fatal(err)
	}
	var g3 Grid
	if err := json.Unmarshal(js, &g3); err != nil || g3.Size() != g1.Size() || g3.x0 != g1.x0 || g3.y0 != g1.y0 {
		t.Errorf("JSON round trip of %s: %s, %v", js, &g3, err)
	}
	if err := json.Unmarshal([]byte(`{"bbox":{"min_lat":39.75,"min_lon":116.15,"max_lat":40.1,"max_lon":116.6},"cell_m":300,"cols":5,"rows":5}`), &g3); err == nil {
		t.Error("a grid with the wrong recorded dimensions was accepted")
	}
	p := geo.Point{Lat: 39.91, Lon: 116.40}
	c1, _ := g1.Cell(p)
	c2, _ := g2.Cell(p)
	if c1 != c2 {
		t.Errorf("the same point is cell %d in one grid and %d in the other", c1, c2)
	}
}
