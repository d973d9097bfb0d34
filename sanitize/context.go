package sanitize

import (
	"context"

	"github.com/tracepriv/tracepriv/trace"
)

// cancelled is the panic value that unwinds a release whose context ended.
type cancelled struct{ err error }

// ReleaseContext is Release that stops when ctx ends, returning ctx's
// error and nothing else. It checks ctx before it starts and at every
// stage Release reports to Options.Progress (the envelope, and each
// person's design, certification and sampling; opt's own Progress is
// still told), so a caller that bounds concurrent releases can free its
// slot soon after its client leaves; a stage already running finishes
// first.
func ReleaseContext(ctx context.Context, traces []*trace.Trace, opt Options) (outs []*trace.Trace, cert *Certificate, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	progress := opt.Progress
	opt.Progress = func(stage string) {
		if err := ctx.Err(); err != nil {
			// Stages are reported on Release's own goroutine, between
			// computations, so unwinding from here leaves nothing running.
			panic(cancelled{err})
		}
		if progress != nil {
			progress(stage)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			c, ok := p.(cancelled)
			if !ok {
				panic(p)
			}
			outs, cert, err = nil, nil, c.err
		}
	}()
	outs, cert, err = Release(traces, opt)
	if cerr := ctx.Err(); cerr != nil {
		return nil, nil, cerr
	}
	return outs, cert, err
}
