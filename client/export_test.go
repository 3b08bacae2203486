package client

import "time"

// SetFreshWindow sets how long the reads of a prompt written ask for a
// fresh answer (DefaultFreshWindow otherwise), before c is used.
func SetFreshWindow(c *Client, d time.Duration) { c.fresh.window = d }

// SetIdle sets how long a feed's stream may be silent before it is taken
// as lost, before Run.
func SetIdle(f *Feed, d time.Duration) { f.idle = d }
