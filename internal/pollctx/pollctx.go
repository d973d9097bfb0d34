// Package pollctx is a context for tests of cancellation that counts how
// often it is polled and ends at a chosen poll, so that a test judges where
// a computation stops (inside a long stage, at the poll that ended it), not
// how fast the machine is.
package pollctx

import (
	"context"
	"sync"
)

// Ctx counts its Err polls once armed and reports context.Canceled from
// the cancelAt-th armed poll on (cancelAt 0: never). Its Done channel is
// closed at that poll. It is safe for concurrent use.
type Ctx struct {
	context.Context
	mu       sync.Mutex
	armed    bool
	polls    int
	cancelAt int
	done     chan struct{}
}

// New returns a Ctx armed from the start.
func New(cancelAt int) *Ctx {
	c := Unarmed(cancelAt)
	c.armed = true
	return c
}

// Unarmed returns a Ctx that neither counts nor ends until Arm.
func Unarmed(cancelAt int) *Ctx {
	return &Ctx{Context: context.Background(), cancelAt: cancelAt, done: make(chan struct{})}
}

// Arm starts counting polls.
func (c *Ctx) Arm() { c.mu.Lock(); c.armed = true; c.mu.Unlock() }

// Done is closed once the context has ended.
func (c *Ctx) Done() <-chan struct{} { return c.done }

// Err counts the poll and returns context.Canceled from the cancelAt-th
// armed poll on.
func (c *Ctx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed {
		return nil
	}
	c.polls++
	if c.cancelAt > 0 && c.polls >= c.cancelAt {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
		return context.Canceled
	}
	return nil
}

// Polls returns the armed polls so far.
func (c *Ctx) Polls() int { c.mu.Lock(); defer c.mu.Unlock(); return c.polls }
