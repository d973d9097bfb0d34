package trace_test

import (
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// A logger at 1 Hz with a gap: thinned to a fix a minute, it keeps the
// first fix, each fix a minute after the last one kept, and the first fix
// after the gap.
func ExampleTrace_Thin() {
	start := time.Date(2008, 10, 24, 8, 0, 0, 0, time.UTC)
	tr := &trace.Trace{UID: "000"}
	for _, s := range []int{0, 1, 2, 59, 60, 61, 119, 120, 500, 501, 560} {
		tr.Points = append(tr.Points, trace.Point{Time: start.Add(time.Duration(s) * time.Second), Lat: 39.98, Lon: 116.32})
	}
	for _, p := range tr.Thin(time.Minute).Points {
		fmt.Print(p.Time.Sub(start).Seconds(), " ")
	}
	fmt.Println()
	// Output:
	// 0 60 120 500 560
}
