package webhook_test

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/webhook"
)

func TestRetryAtWaits(t *testing.T) {
	is := is.New(t)
	queued := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := queued.Add(time.Hour)
	for attempts, want := range map[int]time.Duration{
		-1: 2 * time.Second, 0: 2 * time.Second, // as after the first
		1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 4: 16 * time.Second, 5: 32 * time.Second,
		6: 64 * time.Second, 7: 128 * time.Second, 8: 256 * time.Second, 9: 512 * time.Second,
		10: 10 * time.Minute, 11: 10 * time.Minute, 64: 10 * time.Minute, 1 << 40: 10 * time.Minute,
	} {
		at, ok := webhook.RetryAt(attempts, queued, now)
		is.True(ok)                 // retried
		is.Equal(at.Sub(now), want) // after this wait
	}
}

func TestRetryAtStopsADayAfterTheEvent(t *testing.T) {
	is := is.New(t)
	queued := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	end := queued.Add(24 * time.Hour)

	at, ok := webhook.RetryAt(100, queued, end.Add(-time.Minute))
	is.True(ok)
	is.Equal(at, end) // the last wait cut short to the day's end
	_, ok = webhook.RetryAt(100, queued, end)
	is.True(!ok) // an attempt at the end is the last
	_, ok = webhook.RetryAt(1, queued, end.Add(time.Second))
	is.True(!ok) // and so is one after it
}

// TestRetryAtSchedule follows a delivery that never succeeds, each
// attempt failing at once, and checks the schedule's promises.
func TestRetryAtSchedule(t *testing.T) {
	is := is.New(t)
	queued := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now, prev := queued, time.Duration(0)
	attempts := 1
	for {
		at, ok := webhook.RetryAt(attempts, queued, now)
		if !ok {
			break
		}
		wait := at.Sub(now)
		if attempts == 1 {
			is.True(wait <= 2*time.Second) // the first retry within 2 s
		} else {
			is.True(wait <= 2*prev) // each wait at most twice the one before
		}
		is.True(wait > 0 && wait <= 10*time.Minute) // never more than 10 minutes apart
		now, prev = at, wait
		attempts++
	}
	is.Equal(now, queued.Add(24*time.Hour)) // the last attempt a day after the event
	// 9 doubling waits (1022 s), then every 600 s up to the day's end.
	is.Equal(attempts, 1+9+(24*3600-1022+599)/600)
}
