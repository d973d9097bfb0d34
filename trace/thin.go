package trace

import (
	"slices"
	"time"
)

// Thin returns a copy of t with at most one fix per period of length
// every: it keeps the first fix, then each fix that comes at least every
// after the last fix kept, and drops the others. Kept fixes are copied
// unchanged (position, altitude, attributes); nothing is interpolated or
// averaged, so thinning never invents a position. every <= 0 keeps every
// fix. t must be in time order, as the readers return it: a fix earlier
// than the last one kept is dropped.
//
// Gaps and segments: each kept fix opens a period [kept, kept+every), so
// after a gap of at least every (a trace left running in a pocket, the
// break between two segments) the first fix is always kept, and a trace
// split at such gaps (Segment) thins to the same fixes piece by piece.
// Consecutive kept fixes are at least every apart; within a stretch
// sampled at intervals of at most Δ they are less than every+Δ apart; a
// trace lasting D keeps at most ⌊D/every⌋+1 fixes.
//
// Thinning is data-independent: which fixes are kept is a function of the
// timestamps alone, never of the positions. Every tracepriv mechanism
// treats timestamps as public, so a mechanism planned over the thinned
// trace still has parameters that depend only on public inputs, and
// dropping fixes reveals nothing the timestamps did not. The dropped fixes
// are never released; a guarantee stated over the positions of the kept
// fixes also holds over all the original fixes (for geo-indistinguishability,
// d_∞ over a subset of the fixes is at most d_∞ over all of them).
func (t *Trace) Thin(every time.Duration) *Trace {
	out := &Trace{UID: t.UID, Name: t.Name}
	if every <= 0 {
		out.Points = slices.Clone(t.Points)
		return out
	}
	for i, p := range t.Points {
		if i > 0 && p.Time.Sub(out.Points[len(out.Points)-1].Time) < every {
			continue
		}
		out.Points = append(out.Points, p)
	}
	return out
}
