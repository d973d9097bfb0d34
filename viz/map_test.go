package viz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/geo"
	"github.com/tracepriv/tracepriv/trace"
)

func walk(n int, bearing float64) *trace.Trace {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	start := geo.Point{Lat: 39.9847, Lon: 116.3184}
	tr := &trace.Trace{UID: "000"}
	for i := 0; i < n; i++ {
		p := geo.Destination(start, bearing, float64(i)*40)
		tr.Points = append(tr.Points, trace.Point{Time: t0.Add(time.Duration(i) * 5 * time.Second), Lat: p.Lat, Lon: p.Lon})
	}
	return tr
}

func TestMapSVGAndPNG(t *testing.T) {
	t.Parallel()
	p, err := Map([]Series{{Label: "original", Trace: walk(30, 45)}, {Label: "sanitised", Trace: walk(30, 50), Points: true}},
		MapOptions{Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"m.svg", "m.png", "m.pdf"} {
		path := filepath.Join(dir, name)
		if err := Save(p, path, 0, 0); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 500 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if name == "m.svg" && (!strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "200 m")) {
			t.Errorf("svg lacks the scale bar label or header")
		}
	}
	if err := Save(p, filepath.Join(dir, "m.bmp"), 0, 0); err == nil {
		t.Error("unsupported extension accepted")
	}
}

func TestMapRejectsEmpty(t *testing.T) {
	if _, err := Map(nil, MapOptions{}); err == nil {
		t.Error("no series accepted")
	}
	if _, err := Map([]Series{{Trace: &trace.Trace{}}}, MapOptions{}); err == nil {
		t.Error("empty trace accepted")
	}
	o := geo.Point{Lat: 39.98, Lon: 116.32}
	if _, err := Map([]Series{{Trace: &trace.Trace{}}}, MapOptions{Origin: &o}); err == nil {
		t.Error("empty trace accepted with an origin")
	}
	if _, err := Map([]Series{{Label: "nil"}}, MapOptions{Origin: &o}); err == nil {
		t.Error("nil trace accepted")
	}
}

func TestNiceLength(t *testing.T) {
	for x, want := range map[float64]float64{1: 1, 1.9: 1, 2.5: 2, 7: 5, 130: 100, 4999: 2000, 0.03: 0.02} {
		t.Run(fmt.Sprintf("%g", x), func(t *testing.T) {
			if got := niceLength(x); got != want {
				t.Errorf("niceLength(%g) = %g, want %g", x, got, want)
			}
		})
	}
}
