package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// A database that falls silent (the proxy forwards nothing, connections
// stay open) does not hold a query past the Dialer's timeout: the query
// fails as unavailable, the connection is discarded, and once the database
// answers again the Store works on.
func TestDialerAgainstASilentDatabase(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	migrated := newSQLStore(t) // the schema, migrated without the Dialer
	_, p := fixture(t, migrated)
	proxy := startProxy(t)
	connector, err := pq.NewConnector(proxy.url)
	is.NoErr(err)
	connector.Dialer(sqlstore.Dialer{Timeout: time.Second})
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	defer db.Close()
	s, err := sqlstore.New(db, sqlstore.WithSchema(migrated.Schema()))
	is.NoErr(err)
	defer s.Close()
	_, err = s.GetPrompt(ctx, p.ID)
	is.NoErr(err) // through the proxy

	proxy.freeze(true)
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute): // lib/pq alone waits as long as the silence lasts
		t.Fatal("a query on a silent database did not end")
	}
	is.Equal(prompts.ErrorCode(err), prompts.CodeUnavailable)
	is.True(errors.Is(err, prompts.ErrUnavailable))

	proxy.freeze(false)
	// A new connection. On a busy host a single read may take longer than
	// this test's short Timeout: a few attempts, then.
	eventually(t, "the Store works once the database answers", func() bool {
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
		return err == nil
	})
}
