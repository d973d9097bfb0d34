package sanitize

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tracepriv/tracepriv/trace"
)

// ReleaseContext stops inside the (E3) design when its context ends: a
// context cancelled as the design starts returns context.Canceled, with
// nothing released and no later stage reached, in less than half the
// time the same design takes uncancelled (the negative control, which
// must complete; both measured in this run, so the bound is relative to
// the machine's speed). Under the old ReleaseContext, which only stopped
// between stages, the cancelled run waited for the whole design.
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
				cancelled = time.Now()
				cancel()
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
	if d := back.Sub(cancelled); d > full/2 {
		t.Errorf("returned %v after the cancel, want less than half the uncancelled release's %v", d, full)
	}
	for _, s := range stages {
		if s == "certify" || s == "sample" {
			t.Errorf("stage %q reached: the design was not stopped inside", s)
		}
	}
}
