package sqlstore_test

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
	"github.com/promptkit/prompts/storetest"
)

// TestStore runs the conformance suite: each subtest gets a Store in a
// migrated schema of its own, which reports the bytes of its idempotency
// records (storetest.StoredSizer).
func TestStore(t *testing.T) {
	database(t)
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		return sizedStore{newSQLStore(t, sqlstore.WithClock(clock)), database(t)}
	})
}

// sizedStore is a Store that reports the bytes of the rows of its table
// idempotency.
type sizedStore struct {
	*sqlstore.Store
	db *sqlx.DB
}

func (s sizedStore) StoredSize(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.GetContext(ctx, &n, `SELECT coalesce(sum(pg_column_size(i.*)), 0) FROM `+pq.QuoteIdentifier(s.Schema())+`.idempotency i`)
	return n, err
}
