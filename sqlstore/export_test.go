package sqlstore

// MigrateLockKey returns the key of the advisory lock Migrate takes.
func MigrateLockKey(s *Store) int64 { return s.lockKey }
