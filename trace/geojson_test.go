package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestReadGeoJSONPoints(t *testing.T) {
	in := `{"type": "FeatureCollection", "features": [
 {"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.3, 39.9, 50]},
  "properties": {"uid": "a", "time": "2008-10-23T02:53:06Z", "mode": "walk", "n": 3}},
 {"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.4, 39.8]},
  "properties": {"uid": "b", "time": 1224730384}},
 {"type": "Feature", "geometry": {"type": "Point", "coordinates": [116.1, 39.7]},
  "properties": {"uid": "a", "time": "2008-10-23T02:53:04Z", "tags": {"k": [1, "x"]}}}
]}`
	traces, rep, err := read(t, GeoJSON, in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 || rep.Read != 3 {
		t.Fatalf("%d traces, report %+v", len(traces), rep)
	}
	a, b := traces[0], traces[1]
	if a.UID != "a" || a.Len() != 2 || b.UID != "b" || b.Len() != 1 {
		t.Fatalf("traces %q (%d), %q (%d)", a.UID, a.Len(), b.UID, b.Len())
	}
	// Sorted by time within the uid.
	p0, p1 := a.Points[0], a.Points[1]
	if p0.Lon != 116.1 || !p0.Time.Equal(time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)) || !math.IsNaN(p0.Alt) {
		t.Errorf("first point of a: %+v", p0)
	}
	if p1.Alt != 50 || p1.Attrs["mode"] != "walk" || p1.Attrs["n"] != "3" {
		t.Errorf("second point of a: %+v", p1)
	}
	if p0.Attrs["tags"] != `{"k":[1,"x"]}` {
		t.Errorf("nested property kept as %q", p0.Attrs["tags"])
	}
}

func TestReadGeoJSONLineString(t *testing.T) {
	in := `{"type": "Feature",
 "geometry": {"type": "LineString", "coordinates": [[116.3, 39.9], [116.31, 39.91, 7], [116.32, 39.92]]},
 "properties": {"uid": 12, "name": "walk", "times": [1224730384, "2008-10-23T02:53:05.5Z", 1224730386],
   "alts": [1.5, null, null], "attrs": [{"hr": "90"}, null, {"hr": 95}]}}`
	traces, _, err := read(t, GeoJSON, in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := traces[0]
	// The name is free text: not read.
	if tr.UID != "12" || tr.Name != "" || tr.Len() != 3 {
		t.Fatalf("trace %q %q %d", tr.UID, tr.Name, tr.Len())
	}
	p := tr.Points
	if p[0].Alt != 1.5 || p[1].Alt != 7 || !math.IsNaN(p[2].Alt) {
		t.Errorf("altitudes %v %v %v", p[0].Alt, p[1].Alt, p[2].Alt)
	}
	if p[0].Attrs["hr"] != "90" || p[1].Attrs != nil || p[2].Attrs["hr"] != "95" {
		t.Errorf("attrs %v %v %v", p[0].Attrs, p[1].Attrs, p[2].Attrs)
	}
	if !p[1].Time.Equal(time.Date(2008, 10, 23, 2, 53, 5, 5e8, time.UTC)) {
		t.Errorf("time %v", p[1].Time)
	}
}

func TestReadGeoJSONLenient(t *testing.T) {
	in := `{"type": "FeatureCollection", "features": [
 {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[0,0],[1,0],[0,1],[0,0]]]}, "properties": {}},
 {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[116.3, 39.9], [116.31, 99], [116.32, 39.92]]},
  "properties": {"times": [1, 2, 3]}}
]}`
	traces, rep, err := read(t, GeoJSON, in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The polygon's ring counts as one skipped record; the bad position as one.
	if len(traces) != 1 || traces[0].Len() != 2 || rep.Skipped != 2 || len(rep.Problems) != 2 {
		t.Fatalf("%d traces, report %+v", len(traces), rep)
	}
	if rep.Problems[1].Line != 3 || rep.Problems[1].Field != "features[1].geometry.coordinates[1][1]" {
		t.Errorf("problem %v", rep.Problems[1])
	}
}

func TestWriteGeoJSON(t *testing.T) {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	traces := []*Trace{
		{UID: "a", Points: []Point{{Time: t0, Lat: 1, Lon: 2, Alt: 3}, {Time: t0.Add(time.Second), Lat: 4, Lon: 5, Alt: 6}}},
		{UID: "b", Name: "n", Points: []Point{{Time: t0, Lat: 1, Lon: 2, Alt: math.NaN()}, {Time: t0.Add(1500 * time.Millisecond), Lat: 4, Lon: 5, Alt: 6, Attrs: map[string]string{"k": "v"}}}},
		{UID: "c", Points: []Point{{Time: t0, Lat: 1, Lon: 2, Alt: math.NaN()}}},
	}
	var b bytes.Buffer
	w, _ := NewWriter(&b, GeoJSON)
	for _, tr := range traces {
		if err := w.Write(tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string
		Features []struct {
			Type     string
			Geometry struct {
				Type        string
				Coordinates [][]float64
			}
			Properties map[string]any
		}
	}
	if err := json.Unmarshal(b.Bytes(), &fc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b.String())
	}
	if fc.Type != "FeatureCollection" || len(fc.Features) != 3 {
		t.Fatalf("got %s with %d features", fc.Type, len(fc.Features))
	}
	f0, f1, f2 := fc.Features[0], fc.Features[1], fc.Features[2]
	if f0.Geometry.Type != "LineString" || len(f0.Geometry.Coordinates[1]) != 3 || f0.Geometry.Coordinates[1][0] != 5 || f0.Properties["alts"] != nil {
		t.Errorf("all altitudes known: %+v", f0)
	}
	if len(f1.Geometry.Coordinates[0]) != 2 || f1.Properties["alts"] == nil || f1.Properties["attrs"] == nil || f1.Properties["name"] != nil {
		t.Errorf("some altitudes known: %+v", f1)
	}
	if ts := f1.Properties["times"].([]any); ts[1] != "2008-10-23T02:53:05.5Z" {
		t.Errorf("times %v", ts)
	}
	if _, ok := f2.Properties["alts"]; ok || len(f2.Geometry.Coordinates[0]) != 2 {
		t.Errorf("no altitudes: %+v", f2)
	}
	// An empty collection is still a valid document.
	b.Reset()
	w, _ = NewWriter(&b, GeoJSON)
	w.Close()
	if err := json.Unmarshal(b.Bytes(), &fc); err != nil || len(fc.Features) != 0 {
		t.Errorf("empty collection: %v %s", err, b.String())
	}
}
