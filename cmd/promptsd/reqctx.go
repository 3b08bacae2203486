package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// requestContext is a request's context: its parent's values and
// cancellation, the requestInfo the access log reads (held here, not
// pointed to: see requestState), and a deadline
// whose timer is made only when something waits on Done. Most requests
// (a cache hit, memstore) never wait, so they pay for no timer; the
// deadline holds all the same: Err reports it, and Done closes at it once
// asked for.
type requestContext struct {
	context.Context             // the request's own
	info            requestInfo // Value(requestInfoKey{}) answers &info
	deadline        time.Time

	once   sync.Once
	armed  atomic.Bool
	timed  context.Context // context.WithDeadline(parent, deadline), once armed
	cancel context.CancelFunc
}

func newRequestContext(parent context.Context, info requestInfo, deadline time.Time) *requestContext {
	c := &requestContext{info: info}
	c.init(parent, deadline)
	return c
}

// init sets up a requestContext that is zero but for its info.
func (c *requestContext) init(parent context.Context, deadline time.Time) {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.Context, c.deadline = parent, deadline
}

func (c *requestContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done arms the deadline's timer, once, and returns its channel.
func (c *requestContext) Done() <-chan struct{} {
	c.arm()
	return c.timed.Done()
}

func (c *requestContext) arm() {
	c.once.Do(func() {
		c.timed, c.cancel = context.WithDeadline(c.Context, c.deadline)
		c.armed.Store(true)
	})
}

func (c *requestContext) Err() error {
	if c.armed.Load() {
		return c.timed.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if time.Until(c.deadline) <= 0 { // the monotonic clock alone: one read, not two
		return context.DeadlineExceeded
	}
	return nil
}

// Value answers the requestInfo, and the rest as the parent does; once
// armed, as the timed context does, so that a context derived from this
// one is cancelled by the deadline's timer itself, without a goroutine.
func (c *requestContext) Value(key any) any {
	if _, ok := key.(requestInfoKey); ok {
		return &c.info
	}
	if c.armed.Load() {
		return c.timed.Value(key)
	}
	return c.Context.Value(key)
}

// release stops the deadline's timer, if it was made.
func (c *requestContext) release() {
	if c.armed.Load() {
		c.cancel()
	}
}
