package trace_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/tracepriv/tracepriv/trace"
)

// Dirty rows are repaired or skipped and counted by reason; Strict makes
// the first one an error instead.
func ExampleReport() {
	const in = `uid,time,lat,lon
a,2008-10-23T02:53:04Z,39.930702,116.376417
a,2008-10-23T02:53:04Z,39.930702,116.376417
a,2008-10-23T02:53:10Z,39.930683,116.376450
a,2008-10-23T02:53:10Z,39.990000,116.376450
a,2008-10-23T02:53:07Z,39.930686,116.376417
a,2008-10-23T02:53:15Z,NaN,116.376417
a,2008-10-23T02:53:20Z,39.984655,116.3182`
	r, err := trace.NewReader(strings.NewReader(in), trace.CSV, trace.ReadOptions{Name: "in.csv"})
	if err != nil {
		log.Fatal(err)
	}
	traces, err := trace.ReadAll(r)
	if err != nil {
		log.Fatal(err)
	}
	rep := r.Report()
	fmt.Printf("%d points kept, %d rows skipped or merged\n", traces[0].Len(), rep.SkippedRows())
	by := rep.ByReason()
	for _, k := range trace.Reasons {
		if by[k] > 0 {
			fmt.Printf("  %d %s: %v\n", by[k], k, rep.Examples(k, 1)[0])
		}
	}

	r, _ = trace.NewReader(strings.NewReader(in), trace.CSV, trace.ReadOptions{Name: "in.csv", Strict: true})
	_, err = trace.ReadAll(r)
	fmt.Println("strict:", err)
	// Output:
	// 2 points kept, 5 rows skipped or merged
	//   1 duplicate_fix: in.csv:3: repeats the fix before it exactly (line 2)
	//   1 repeated_time: in.csv:5: field "time": "2008-10-23T02:53:10Z" repeats an earlier timestamp at a different position (line 4)
	//   1 time_backwards: in.csv:6: field "time": "2008-10-23T02:53:07Z" is earlier than the fix before it (line 4, 2008-10-23T02:53:10Z)
	//   1 bad_coordinate: in.csv:7: field "lat": "NaN" is not finite
	//   1 truncated_row: in.csv:8: truncated file: the last row has no line end, so the file may have been cut in the middle of it (if the row is complete, end the file with a line break)
	// strict: in.csv:5: field "time": "2008-10-23T02:53:10Z" repeats an earlier timestamp at a different position (line 4)
}

// Check separates plausibility from well-formedness: this trace reads
// cleanly, but one fix jumped 700 m in 5 s.
func ExampleCheck() {
	const in = `uid,time,lat,lon
a,2008-10-23T02:53:04Z,39.9307,116.3764
a,2008-10-23T02:53:09Z,39.9308,116.3764
a,2008-10-23T02:53:14Z,39.9371,116.3764
a,2008-10-23T02:53:19Z,39.9309,116.3764
`
	r, _ := trace.NewReader(strings.NewReader(in), trace.CSV, trace.ReadOptions{})
	traces, err := trace.ReadAll(r)
	if err != nil {
		log.Fatal(err)
	}
	t := traces[0]
	p := trace.Check(t, trace.Limits{}) // the defaults: 300 km/h, 10 minutes
	fmt.Println("well formed:", t.Validate() == nil, "plausible:", p.OK())
	fmt.Println(p)
	kept, dropped := t.FilterSpeed(p.Limits.MaxSpeed)
	fmt.Println("after FilterSpeed:", dropped, "dropped, plausible:", trace.Check(kept, trace.Limits{}).OK())
	// Output:
	// well formed: true plausible: false
	// 2 speed jumps over 300 km/h (fastest 505 km/h at point 2, 2008-10-23T02:53:14Z), 0 gaps over 10m0s, 0 repeated positions
	// after FilterSpeed: 1 dropped, plausible: true
}
