package trace

import (
	"slices"
	"strings"
	"time"
)

// ThinEach thins every trace to one fix per period every (Trace.Thin):
// out[i] is traces[i] thinned. A period of 0 or less keeps every fix and
// returns traces itself.
func ThinEach(traces []*Trace, every time.Duration) []*Trace {
	if every <= 0 {
		return traces
	}
	out := make([]*Trace, len(traces))
	for i, t := range traces {
		out[i] = t.Thin(every)
	}
	return out
}

// CountPersons counts the persons (by uid) of traces read from one file,
// with their points, sorted by uid.
func CountPersons(traces []*Trace) []PersonCount {
	var out []PersonCount
	for _, t := range traces {
		i := slices.IndexFunc(out, func(p PersonCount) bool { return p.UID == t.UID })
		if i < 0 {
			out = append(out, PersonCount{UID: t.UID, Files: 1})
			i = len(out) - 1
		}
		out[i].Points += t.Len()
	}
	slices.SortFunc(out, func(a, b PersonCount) int { return strings.Compare(a.UID, b.UID) })
	return out
}

// Points is the number of points of traces.
func Points(traces []*Trace) int {
	n := 0
	for _, t := range traces {
		n += t.Len()
	}
	return n
}
