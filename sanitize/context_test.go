package sanitize

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// ReleaseContext stops inside the (E3) design when its context ends: it
// returns context.Canceled within 2 s of the cancel, with nothing
// released, on a design that uncancelled runs far longer (the negative
// control, which must complete). Under the old ReleaseContext, which
// only stopped between stages, the cancelled run waited for the design.
func TestReleaseContextCancelsDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("a long design")
	}
	const n, secrets = 400, 40
	tr := walk(n, 39.98, 116.30)
	opt := options(singlePrior())
	opt.Design = DesignE3
	opt.PointsOnly = true
	var pairs [][]time.Time
	for k := range secrets {
		pairs = append(pairs, []time.Time{tr.Points[k*n/secrets].Time, tr.Points[k*n/secrets+1].Time})
	}
	opt.Secrets = pairs

	// Negative control: uncancelled, the release completes.
	start := time.Now()
	if _, _, err := ReleaseContext(context.Background(), []*trace.Trace{tr}, opt); err != nil {
		t.Fatalf("uncancelled: %v", err)
	}
	full := time.Since(start)
	t.Logf("uncancelled release: %v", full)

	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	var cancelled time.Time
	var stages []string
	copt := opt
	copt.Progress = func(stage string) {
		stages = append(stages, stage)
		if stage == "design" {
			once.Do(func() {
				go func() {
					time.Sleep(full / 10)
					cancelled = time.Now()
					cancel()
				}()
			})
		}
	}
	outs, cert, err := ReleaseContext(ctx, []*trace.Trace{tr}, copt)
	back := time.Now()
	if !errors.Is(err, context.Canceled) || outs != nil || cert != nil {
		t.Fatalf("cancelled: %v (traces %v, certificate %v), want context.Canceled and nothing", err, outs != nil, cert != nil)
	}
	if cancelled.IsZero() {
		t.Fatal("returned before the cancel")
	}
	if d := back.Sub(cancelled); d > 2*time.Second {
		t.Errorf("returned %v after the cancel, want < 2 s (the uncancelled release took %v)", d, full)
	}
	if full < 4*time.Second {
		t.Errorf("the uncancelled design took %v: too short to show a cancel inside it (raise n)", full)
	}
	for _, s := range stages {
		if s == "certify" || s == "sample" {
			t.Errorf("stage %q reached: the design was not stopped inside", s)
		}
	}
}
