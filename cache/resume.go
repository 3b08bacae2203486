package cache

import (
	"time"

	"github.com/promptkit/prompts"
)

var _ prompts.Resumer = (*Store)(nil)

// Resumed ends a loss that lost nothing: the feed sees changes again and
// reports, as invalidations, every change made while it could not (see
// prompts.Resumer). Unlike Recovered it keeps what the cache holds: an
// entry that changed meanwhile is dropped by the invalidation that
// reports the change, which the feed delivers before any later one. So
// after a short cut of an event stream (package client's Feed) the cache
// answers from memory again at once, instead of reading everything anew.
//
// Reads that went to the store while the feed was lost kept what they
// read (it was current then, and at least as new as anything answered
// before), so that a hit after Resumed is never older than an answer
// given during the loss.
func (s *Store) Resumed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dark {
		return // not lost: nothing to resume
	}
	if s.stats.Recoveries == 0 {
		// Never fed yet: nothing held can be trusted. As Recovered.
		s.recovered()
		return
	}
	s.dark = false
	s.downAt = time.Time{} // the feed reached the store
	s.stats.Resumptions++
}
