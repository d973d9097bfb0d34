package webtest

import (
	"context"
	"time"
)

// stepContext bounds one browser step by the test binary's deadline (go
// test's -timeout) less a margin to report which step hung (a tenth of the
// time left, at most a minute), not by a fixed time: how fast Chromium
// answers on a busy machine is not what these tests check, and a fixed 15
// or 30 s failed them under load. Without a deadline (-timeout 0) a step
// waits as long as it takes.
func (s *session) stepContext() (context.Context, context.CancelFunc) {
	if d, ok := s.t.Deadline(); ok {
		return context.WithDeadline(s.ctx, d.Add(-min(time.Until(d)/10, time.Minute)))
	}
	return context.WithCancel(s.ctx)
}
