package sanitize

import (
	"context"

	"github.com/tracepriv/tracepriv/trace"
)

// ReleaseContext is Release that stops when ctx ends, returning ctx's
// error and nothing else (no traces, no certificate; nothing is written,
// as Release writes nothing). It checks ctx before it starts, between
// people and stages (the envelope, and each person's design,
// certification and sampling), before every Newton step of the (E3)
// designer (cip.DesignRequest.Context), between the coordinates the dense
// path samples and before each chunk of 1024 points the linear path
// samples (noise.MarkovOptions.Context), so a caller that bounds concurrent releases can free its slot
// soon after its client leaves. Release is ReleaseContext with
// context.Background().
func ReleaseContext(ctx context.Context, traces []*trace.Trace, opt Options) ([]*trace.Trace, *Certificate, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	outs, cert, err := release(ctx, traces, opt)
	if cerr := ctx.Err(); cerr != nil {
		// Whatever the release returned, a context that ended wins: the
		// caller asked for nothing after it.
		return nil, nil, cerr
	}
	return outs, cert, err
}
