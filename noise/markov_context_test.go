package noise

import (
	"context"
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
)

// pollCtx counts its Err polls and reports cancellation from the
// cancelAt-th on (0: never), so that a test judges where the sampler
// stops, not how fast the machine is.
type pollCtx struct {
	context.Context
	polls, cancelAt int
}

func (c *pollCtx) Err() error {
	c.polls++
	if c.cancelAt > 0 && c.polls >= c.cancelAt {
		return context.Canceled
	}
	return nil
}

// Release polls MarkovOptions.Context once per chunk, before drawing it:
// cancelled at the k-th poll of a release of five chunks, it returns
// context.Canceled having drawn exactly k-1 chunks, and the release is
// unusable afterwards (no point is drawn twice). The negative control, a
// context that never ends, releases every point with one poll per chunk.
func TestMarkovReleaseContextPerChunk(t *testing.T) {
	const chunks, cancelAt = 5, 3
	n := chunks*markovChunk - 10 // the last chunk is partial
	ts := gapTimes(n, []float64{1, 2, 5}, 4)
	comps := stateComps(t, gp.Matern32{Variance: 1, Lengthscale: 30})
	run := func(ctx *pollCtx) (*MarkovRelease, error) {
		r, err := NewMarkovRelease(comps, 100, MarkovOptions{Times: ts, Dims: 2, Grid: 0x1p-10, Source: Seeded(1), Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		x, dst := zeros(2, n), zeros(2, n)
		return r, r.Release(dst, x, ts)
	}

	never := &pollCtx{Context: context.Background()}
	r, err := run(never)
	if err != nil || r.Released() != n {
		t.Fatalf("uncancelled: released %d of %d: %v", r.Released(), n, err)
	}
	if never.polls != chunks {
		t.Errorf("uncancelled: %d polls for %d chunks, want one per chunk", never.polls, chunks)
	}

	ctx := &pollCtx{Context: context.Background(), cancelAt: cancelAt}
	r, err = run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled at poll %d: %v, want context.Canceled", cancelAt, err)
	}
	if ctx.polls != cancelAt || r.Released() != (cancelAt-1)*markovChunk {
		t.Errorf("cancelled at poll %d: %d polls, %d points drawn; want %d polls and %d points", cancelAt, ctx.polls, r.Released(), cancelAt, (cancelAt-1)*markovChunk)
	}
	rest := n - r.Released()
	if err := r.Release(zeros(2, rest), zeros(2, rest), ts[r.Released():]); err == nil {
		t.Error("a cancelled release went on drawing")
	}
}
