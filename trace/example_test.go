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
	// A PLT file (GeoLife's format; this one is an excerpt of the bundled
	// synthetic sample): the user id comes from the directory.
	traces, report, err := trace.ReadFile("testdata/plt/synth-1/20240312002332.plt", trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	t := traces[0]
	p := t.Points[0]
	fmt.Printf("user %s, trace %s: %d points over %v\n", t.UID, t.Name, t.Len(), t.Duration())
	fmt.Printf("first fix %.6f, %.6f at %.1f m, %s\n", p.Lat, p.Lon, p.Alt, p.Time.Format(time.RFC3339))
	fmt.Printf("skipped %d, de-duplicated %d\n", report.Skipped, report.Deduplicated)
	// Output:
	// user synth-1, trace 20240312002332: 14 points over 1m5s
	// first fix 39.930388, 116.377288 at 41.5 m, 2024-03-12T00:23:32Z
	// skipped 0, de-duplicated 0
}

func ExampleNewWriter() {
	t0 := time.Date(2008, 10, 23, 2, 53, 4, 0, time.UTC)
	t := &trace.Trace{UID: "000", Points: []trace.Point{
		{Time: t0, Lat: 39.930702, Lon: 116.376417, Alt: math.NaN()},
		{Time: t0.Add(6 * time.Second), Lat: 39.930683, Lon: 116.37645, Alt: math.NaN()},
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
	// {"type":"Feature","geometry":{"type":"LineString","coordinates":[[116.376417,39.930702],[116.37645,39.930683]]},"properties":{"uid":"000","times":["2008-10-23T02:53:04Z","2008-10-23T02:53:10Z"]}}
	// ]}
}

func ExampleTrace_SegmentBySpeed() {
	traces, _, err := trace.ReadFile("testdata/plt/synth-1/20240312002332.plt", trace.ReadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// The stretches slower than 15 km/h, as the predictive mechanism's
	// case study selects them: here the end of a walk and the wait at a bus
	// stop, not the bus.
	for _, s := range traces[0].SegmentBySpeed(15 / 3.6) {
		sum := trace.Summarize(s)
		fmt.Printf("%d points, %.0f m, median speed %.1f m/s\n", sum.Points, sum.PathLength, sum.Speed.Median)
	}
	// Output:
	// 12 points, 21 m, median speed 0.3 m/s
}

// Who a person is: an input is one person unless it is declared a corpus.
// The same folder read both ways: as one person's directory (every file
// below it, at any depth, is theirs) and as a corpus (each child folder is
// a person).
func ExamplePersonRule() {
	persons := func(rule trace.PersonRule) map[string]int {
		n := map[string]int{}
		_, _, err := trace.ReadPaths([]string{"testdata/plt"}, trace.ReadOptions{Corpus: rule.Corpus, UID: rule.UID}, func(_ string, ts []*trace.Trace) {
			for _, t := range ts {
				n[t.UID]++
			}
		})
		if err != nil {
			log.Fatal(err)
		}
		return n
	}
	fmt.Println("one person:", persons(trace.PersonRule{}))
	fmt.Println("named:", persons(trace.PersonRule{UID: "ana"}))
	fmt.Println("a corpus:", persons(trace.PersonRule{Corpus: true}))
	// Output:
	// one person: map[plt:1]
	// named: map[ana:1]
	// a corpus: map[synth-1:1]
}
