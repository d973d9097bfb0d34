package sanitize

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/internal/pollctx"
	"github.com/tracepriv/tracepriv/trace"
)

// ReleaseContext stops inside the (E3) design when its context ends. The
// context is armed when the design starts and ends at its third poll:
// under a ReleaseContext that checks only between stages (the old one),
// that third poll comes after the design, so the release would go on to
// "certify"; stopping inside, it returns context.Canceled with nothing
// released and no later stage reached. The negative control runs the
// same release with a context that never ends and counts its polls
// during the design, showing the design polls often (so the third poll
// is well inside it) and that the release completes.
func TestReleaseContextCancelsDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("a long design")
	}
	const n, secrets, cancelAt = 200, 10, 3
	tr := walk(n, 39.98, 116.30)
	opt := options(singlePrior())
	opt.Design = DesignE3
	opt.PointsOnly = true
	var pairs [][]time.Time
	for k := range secrets {
		pairs = append(pairs, []time.Time{tr.Points[k*n/secrets].Time, tr.Points[k*n/secrets+1].Time})
	}
	opt.Secrets = pairs

	// run releases with ctx, arming it as the design starts, and returns
	// the polls seen during the design (until the next stage, if any).
	run := func(ctx *pollctx.Ctx) (outs []*trace.Trace, cert *Certificate, err error, designPolls int, stages []string) {
		designPolls = -1
		o := opt
		o.Progress = func(stage string) {
			if len(stages) > 0 && stages[len(stages)-1] == "design" {
				designPolls = ctx.Polls()
			}
			stages = append(stages, stage)
			if stage == "design" {
				ctx.Arm()
			}
		}
		outs, cert, err = ReleaseContext(ctx, []*trace.Trace{tr}, o)
		if designPolls < 0 {
			designPolls = ctx.Polls()
		}
		return
	}

	// Negative control: never cancelled, the release completes and its
	// design polls the context many times.
	_, cert, err, polls, _ := run(pollctx.Unarmed(0))
	if err != nil || cert == nil {
		t.Fatalf("uncancelled: %v", err)
	}
	t.Logf("uncancelled design polled the context %d times", polls)
	if polls < 4*cancelAt {
		t.Fatalf("the design polled its context %d times, want at least %d: the third poll would not be inside it", polls, 4*cancelAt)
	}

	ctx := pollctx.Unarmed(cancelAt)
	outs, cert, err, polls, stages := run(ctx)
	if !errors.Is(err, context.Canceled) || outs != nil || cert != nil {
		t.Fatalf("cancelled: %v (traces %v, certificate %v), want context.Canceled and nothing", err, outs != nil, cert != nil)
	}
	// Past the poll that ended it, only the checks on the way out (the
	// designer's caller, release, ReleaseContext) may poll again.
	if polls > cancelAt+3 {
		t.Errorf("the cancelled release polled %d times after the design started, want it to stop at poll %d (at most 3 more on the way out)", polls, cancelAt)
	}
	for _, s := range stages {
		if s == "certify" || s == "sample" {
			t.Errorf("stage %q reached: the design was not stopped inside", s)
		}
	}
}

// ReleaseContext stops inside the linear path's sampling, chunk by chunk.
// The context is armed as the "sample" stage starts (after the last check
// before it) and ends at its second poll: a sampler that checks only
// before sampling (the old one) would draw every chunk before anyone
// polled again, and the tap that sees the drawn noise would run. Stopping
// inside, ReleaseContext returns context.Canceled, releases nothing and
// the tap never runs. The negative control, never cancelled, releases
// and polls the context once per chunk of the trace during sampling.
func TestReleaseContextCancelsLinearSampling(t *testing.T) {
	const n, cancelAt = 4000, 2 // four chunks of the linear sampler
	tr := walk(n, 39.98, 116.30)
	opt := options(familyPrior())
	opt.Path = PathLinear
	run := func(ctx *pollctx.Ctx) (outs []*trace.Trace, cert *Certificate, err error, samplePolls int, drawn bool) {
		samplePolls = -1
		o := opt
		o.ecefTap = func(string, []float64, [Dims][]float64, [Dims][]float64) {
			drawn = true
			samplePolls = ctx.Polls()
		}
		o.Progress = func(stage string) {
			if stage == "sample" {
				ctx.Arm()
			}
		}
		outs, cert, err = ReleaseContext(ctx, []*trace.Trace{tr}, o)
		return
	}

	_, cert, err, polls, drawn := run(pollctx.Unarmed(0))
	if err != nil || cert == nil || !drawn {
		t.Fatalf("uncancelled: %v (drawn %v)", err, drawn)
	}
	if polls < 4 {
		t.Fatalf("the linear sampler polled its context %d times over %d points, want once per chunk (at least 4)", polls, n)
	}

	ctx := pollctx.Unarmed(cancelAt)
	outs, cert, err, _, drawn := run(ctx)
	if !errors.Is(err, context.Canceled) || outs != nil || cert != nil {
		t.Fatalf("cancelled: %v (traces %v, certificate %v), want context.Canceled and nothing", err, outs != nil, cert != nil)
	}
	if drawn {
		t.Error("the sampler drew every chunk after its context ended")
	}
	if got := ctx.Polls(); got > cancelAt+3 {
		t.Errorf("the cancelled release polled %d times after sampling started, want it to stop at poll %d (at most 3 more on the way out)", got, cancelAt)
	}
}
