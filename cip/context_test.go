package cip

import (
	"context"
	"errors"
	"testing"

	"github.com/tracepriv/tracepriv/internal/pollctx"
)

// DesignRequest.Context reaches the paper's SDP solves (per interior-point
// iteration) and the (E3) solver (per Newton step): cancelled at the k-th
// poll, DesignNoise returns context.Canceled, no design, and polls no more.
// The negative control, a context that never ends, completes the same
// design and polls it many more times than k, so the stop is inside it.
func TestDesignNoiseContext(t *testing.T) {
	sigma := rbf(3, 12)
	for _, c := range []struct {
		name string
		req  DesignRequest
	}{
		{"paper multiple secrets", DesignRequest{Method: MethodPaper, Sigma: sigma, Secrets: []Secret{{Indices: []int{1, 2}, KLoc: 1}, {Indices: []int{8, 9}, KLoc: 1}}, Budget: 0.5}},
		{"paper compound SDP_A", DesignRequest{Method: MethodPaperSDPA, Sigma: sigma, Secrets: []Secret{{Indices: []int{4, 5}, KLoc: 1}}, Budget: 1}},
		{"e3 barrier", DesignRequest{Method: MethodE3, Sigma: sigma, Secrets: []Secret{Basic(2), Basic(5), Basic(8)}, Targets: []float64{0.5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			never := pollctx.New(0)
			req := c.req
			req.Context = never
			if d, err := DesignNoise(req); err != nil || d == nil {
				t.Fatalf("uncancelled: %v", err)
			}
			const cancelAt = 3
			if never.Polls() < 3*cancelAt {
				t.Fatalf("the design polled its context %d times: too few for a cancellation at poll %d to fall inside it", never.Polls(), cancelAt)
			}
			ctx := pollctx.New(cancelAt)
			req.Context = ctx
			d, err := DesignNoise(req)
			if !errors.Is(err, context.Canceled) || d != nil {
				t.Fatalf("cancelled at poll %d: design %v, %v; want context.Canceled and none", cancelAt, d != nil, err)
			}
			if ctx.Polls() != cancelAt {
				t.Errorf("cancelled at poll %d, the designer polled %d times", cancelAt, ctx.Polls())
			}
		})
	}
}
