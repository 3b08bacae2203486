package poll_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/poll"
)

// Until checks at once, then on the ticker, until the condition holds
// or the deadline passes (in a bubble: the bubble's time).
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		start := time.Now()
		is.True(poll.Until(time.Second, func() bool { return true })) // holds at once
		is.Equal(time.Since(start), time.Duration(0))                 // without waiting

		var n atomic.Int64
		is.True(poll.Until(time.Second, func() bool { return n.Add(1) == 5 })) // holds at the fifth check
		is.Equal(time.Since(start), 4*poll.Every)                              // one a tick

		start = time.Now()
		is.True(!poll.Until(time.Second, func() bool { return false })) // never holds
		is.Equal(time.Since(start), time.Second)                        // given up at the deadline
	})
}
