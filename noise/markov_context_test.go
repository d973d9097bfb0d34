package noise

import (
	"context"
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/gp"
	"github.com/tracepriv/tracepriv/internal/pollctx"
)

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
	run := func(ctx *pollctx.Ctx) (*MarkovRelease, error) {
		r, err := NewMarkovRelease(comps, 100, MarkovOptions{Times: ts, Dims: 2, Grid: 0x1p-10, Source: Seeded(1), Context: ctx})
		if err != nil {
			t.Fatal(err)
		}
		x, dst := zeros(2, n), zeros(2, n)
		return r, r.Release(dst, x, ts)
	}

	never := pollctx.New(0)
	r, err := run(never)
	if err != nil || r.Released() != n {
		t.Fatalf("uncancelled: released %d of %d: %v", r.Released(), n, err)
	}
	if never.Polls() != chunks {
		t.Errorf("uncancelled: %d polls for %d chunks, want one per chunk", never.Polls(), chunks)
	}

	ctx := pollctx.New(cancelAt)
	r, err = run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled at poll %d: %v, want context.Canceled", cancelAt, err)
	}
	if ctx.Polls() != cancelAt || r.Released() != (cancelAt-1)*markovChunk {
		t.Errorf("cancelled at poll %d: %d polls, %d points drawn; want %d polls and %d points", cancelAt, ctx.Polls(), r.Released(), cancelAt, (cancelAt-1)*markovChunk)
	}
	rest := n - r.Released()
	if err := r.Release(zeros(2, rest), zeros(2, rest), ts[r.Released():]); err == nil {
		t.Error("a cancelled release went on drawing")
	}
}
