package attack

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// ErrNoOriginal is wrapped when a released trace has no original among
// the traces given as the truth: they are not what the release was made
// from.
var ErrNoOriginal = errors.New("no original trace")

// PairTraces returns the original of every released trace, in the order
// of released: truth itself when it pairs up in order, otherwise the trace
// of truth with the same timestamps, each used once (so that truth may be
// a whole original directory for one released file). A released trace
// without an original is an error.
func PairTraces(truth, released []*trace.Trace) ([]*trace.Trace, error) {
	if len(truth) == len(released) {
		ok := true
		for i := range truth {
			ok = ok && sameTimes(truth[i], released[i])
		}
		if ok {
			return truth, nil
		}
	}
	type key struct {
		n          int
		start, end int64
	}
	keyOf := func(t *trace.Trace) key {
		if t.Len() == 0 {
			return key{}
		}
		return key{t.Len(), t.Points[0].Time.UnixNano(), t.Points[t.Len()-1].Time.UnixNano()}
	}
	by := map[key][]int{}
	for i, t := range truth {
		by[keyOf(t)] = append(by[keyOf(t)], i)
	}
	used := make([]bool, len(truth))
	out := make([]*trace.Trace, len(released))
	for i, r := range released {
		for _, j := range by[keyOf(r)] {
			if !used[j] && sameTimes(truth[j], r) {
				used[j], out[i] = true, truth[j]
				break
			}
		}
		if out[i] == nil {
			desc := "no points"
			if r.Len() > 0 {
				desc = fmt.Sprintf("%d points from %s", r.Len(), r.Points[0].Time.Format(time.RFC3339))
			}
			return nil, fmt.Errorf("%w has the timestamps of released trace %d (%s %q, %s): give the input the release was made from", ErrNoOriginal, i+1, r.UID, r.Name, desc)
		}
	}
	return out, nil
}

// sameTimes reports whether a and b have the same timestamps.
func sameTimes(a, b *trace.Trace) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Points {
		if !a.Points[i].Time.Equal(b.Points[i].Time) {
			return false
		}
	}
	return true
}
