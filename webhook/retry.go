package webhook

import "time"

// The retry schedule (see RetryAt).
const (
	FirstRetry   = 2 * time.Second  // the wait after the first attempt
	MaxRetryWait = 10 * time.Minute // the longest wait between attempts
	RetryFor     = 24 * time.Hour   // how long after its event a delivery is tried
)

// RetryAt returns when to try a delivery again after its attempts-th
// attempt (1 for the first) failed at now, for an event queued at
// queuedAt; ok is false when the delivery has failed for good.
//
// The wait after the first attempt is FirstRetry, and each wait is twice
// the one before, up to MaxRetryWait: 2 s, 4 s, 8 s, … 512 s, then every
// 10 minutes. The last attempt is made RetryFor after queuedAt (the wait
// before it is cut short to that end); an attempt that fails then, or
// later, is the last.
func RetryAt(attempts int, queuedAt, now time.Time) (time.Time, bool) {
	end := queuedAt.Add(RetryFor)
	if !now.Before(end) {
		return time.Time{}, false
	}
	wait := MaxRetryWait
	if attempts < 1 {
		attempts = 1
	}
	if attempts <= 10 { // FirstRetry<<9 (1024 s) is past MaxRetryWait already
		wait = min(FirstRetry<<(attempts-1), MaxRetryWait)
	}
	at := now.Add(wait)
	if at.After(end) {
		at = end
	}
	return at, true
}
