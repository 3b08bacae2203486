// Package poll waits, in tests, for a condition that another goroutine,
// process or server makes true: it checks the condition at once, then on
// each tick of a ticker, until it holds or a deadline passes. No
// time.Sleep: in a testing/synctest bubble the ticker and the deadline are
// the bubble's, and the wait takes no real time.
package poll

import (
	"testing"
	"time"
)

// Every is how often a condition is checked.
const Every = 2 * time.Millisecond

// Until reports whether cond holds within d, checking it every Every.
func Until(d time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(Every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
		case <-deadline.C:
			return cond()
		}
	}
}

// For fails t at once, saying what did not happen, unless cond holds
// within d.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("not within %v: %s", d, what)
	}
}
