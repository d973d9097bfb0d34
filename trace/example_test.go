package trace_test

import (
	"fmt"
	"log"
	"math"
	"os"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// Read a trace file by its extension: the reader returns well-formed traces
// and a report of every row it repaired or skipped (docs/input.md).
func ExampleReadFile() {
	// A GeoLife PLT file: the user id comes from the directory.
	traces, report, err := trace.ReadFile("testdata/geolife/000/20081023025304.plt", trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	t := traces[0]
	p := t.Points[0]
	fmt.Printf("user %s, trace %s: %d points over %v\n", t.UID, t.Name, t.Len(), t.Duration())
	fmt.Printf("first fix %.6f, %.6f at %.1f m, %s\n", p.Lat, p.Lon, p.Alt, p.Time.Format(time.RFC3339))
	fmt.Printf("skipped %d, de-duplicated %d\n", report.Skipped, report.Deduplicated)
	// Output:
	// user 000, trace 20081023025304: 14 points over 1m6s
	// first fix 39.984702, 116.318417 at 150.0 m, 2008-10-23T02:53:04Z
	// skipped 0, de-duplicated 0
}

func ExampleNewWriter() {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	t := &trace.Trace{UID: "000", Points: []trace.Point{
		{Time: t0, Lat: 39.984702, Lon: 116.318417, Alt: math.NaN()},
		{Time: t0.Add(6 * time.Second), Lat: 39.984683, Lon: 116.31845, Alt: math.NaN()},
	}}
	w, err := trace.NewWriter(os.Stdout, trace.GeoJSON)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(t); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"type":"FeatureCollection","features":[
	// {"type":"Feature","geometry":{"type":"LineString","coordinates":[[116.318417,39.984702],[116.31845,39.984683]]},"properties":{"uid":"000","times":["2008-10-23T02:53:04Z","2008-10-23T02:53:10Z"]}}
	// ]}
}

func ExampleTrace_SegmentBySpeed() {
	traces, _, err := trace.ReadFile("testdata/geolife/000/20081023025304.plt", trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// The stretches slower than 15 km/h, as the predictive mechanism's
	// case study selects them.
	for _, s := range traces[0].SegmentBySpeed(15 / 3.6) {
		sum := trace.Summarize(s)
		fmt.Printf("%d points, %.0f m, median speed %.1f m/s\n", sum.Points, sum.PathLength, sum.Speed.Median)
	}
	// Output:
	// 6 points, 41 m, median speed 0.6 m/s
	// 2 points, 19 m, median speed 3.8 m/s
	// 5 points, 62 m, median speed 3.1 m/s
}
