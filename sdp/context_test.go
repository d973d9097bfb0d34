package sdp

import (
	"context"
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/internal/pollctx"
)

// Solve polls Settings.Context once per iteration and stops at the poll
// that reports it ended, with no result. The negative control, a context
// that never ends, shows the solve takes many more iterations than the
// poll it is cancelled at (so the stop is inside the iteration, not after
// it) and polls exactly once per iteration.
func TestSolveContext(t *testing.T) {
	p := maxCutSDPA(randomGraph(12, 0.5, 3))
	never := pollctx.New(0)
	r, err := SolveSDPA(p, &Settings{Context: never})
	if err != nil || r.Status != Optimal {
		t.Fatalf("uncancelled: %v, %v", r, err)
	}
	// One poll per iteration started, the last being the one that stops.
	if never.Polls() != r.Iterations+1 {
		t.Errorf("uncancelled: %d polls for %d iterations, want one per iteration (%d)", never.Polls(), r.Iterations, r.Iterations+1)
	}
	const cancelAt = 3
	if never.Polls() < 3*cancelAt {
		t.Fatalf("the solve polled %d times: too few for a cancellation at poll %d to fall inside it", never.Polls(), cancelAt)
	}
	ctx := pollctx.New(cancelAt)
	r, err = SolveSDPA(p, &Settings{Context: ctx})
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("cancelled at poll %d: %v, %v; want context.Canceled and no result", cancelAt, r, err)
	}
	if ctx.Polls() != cancelAt {
		t.Errorf("cancelled at poll %d, the solver polled %d times: it went on after the context ended", cancelAt, ctx.Polls())
	}
}
