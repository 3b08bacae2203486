package webhook

import "time"

// WithAttemptTimeout sets how long an attempt waits for an answer, so
// that a test of a receiver that does not answer takes less than
// AttemptTimeout.
func WithAttemptTimeout(t time.Duration) Option { return func(d *Dispatcher) { d.timeout = t } }
