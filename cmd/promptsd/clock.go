package main

import (
	"sync/atomic"
	"time"
)

// startClock tells the time requests start at with one read of the
// monotonic clock, where time.Now reads two clocks: it reads the wall
// clock once every clockSync, and each time it tells is that reading
// plus the monotonic time since. The times it tells are as monotonic as
// time.Now's; a step of the wall clock (a slew shows at once) reaches
// their wall-clock part, which the access log writes, within clockSync.
type startClock struct {
	base atomic.Pointer[time.Time]
}

// clockSync is how often startClock reads the wall clock.
const clockSync = 100 * time.Millisecond

func (c *startClock) now() time.Time {
	if b := c.base.Load(); b != nil {
		if d := time.Since(*b); d >= 0 && d < clockSync {
			return b.Add(d)
		}
	}
	t := time.Now()
	c.base.Store(&t)
	return t
}
