package cache

import "time"

// SetNow makes the cache read the time from now (time.Now otherwise),
// before it is used.
func SetNow(s *Store, now func() time.Time) { s.now = now }
