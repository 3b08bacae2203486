package sqlstore

import (
	"context"
)

// KeepServerKey keeps hash, the "sha256:<64 hex digits>" of an API key a
// server generated for itself under name, unless a key of that name is
// kept already, and returns the hash kept: hash when this call kept it,
// else the one kept before (by another replica, or an earlier start).
// Replicas starting at once on one database all get the same hash. The
// secret itself is never given to the Store.
func (s *Store) KeepServerKey(ctx context.Context, name, hash string) (string, error) {
	q := s.quoted()
	// Two statements: the second reads the row a concurrent first start
	// committed, which the first waited for.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO `+q+`.server_keys (name, hash, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, hash, s.clock.Now()); err != nil {
		return "", s.fail(ctx, err)
	}
	var kept string
	if err := s.db.GetContext(ctx, &kept, `SELECT hash FROM `+q+`.server_keys WHERE name = $1`, name); err != nil {
		return "", s.fail(ctx, err)
	}
	return kept, nil
}
