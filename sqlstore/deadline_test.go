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
// stay open) does not hold a call past its context: reads, writes, a
// transaction, a list and Ping return at their deadline as unavailable, or at a
// cancellation with the context's error, though lib/pq still waits. The
// calls left behind end at the Dialer's deadline, their connections are
// closed, not reused, and once the database answers again the Store works
// on.
func TestCallsReturnAtTheirDeadlineAgainstASilentDatabase(t *testing.T) {
	is := is.New(t)
	migrated := newSQLStore(t) // the schema, migrated without the proxy
	_, p := fixture(t, migrated)
	v, err := migrated.CreateVersion(context.Background(), prompts.NewVersion{PromptID: p.ID, Content: "c"})
	is.NoErr(err)
	proxy := startProxy(t)
	connector, err := pq.NewConnector(proxy.url)
	is.NoErr(err)
	const dialerTimeout = 2 * time.Second // what lib/pq alone waits for a silent database
	connector.Dialer(sqlstore.Dialer{Timeout: dialerTimeout})
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	defer db.Close()
	s, err := sqlstore.New(db, sqlstore.WithSchema(migrated.Schema()))
	is.NoErr(err)
	defer s.Close()
	_, err = s.GetActive(context.Background(), p.ID, prompts.Production)
	is.NoErr(err) // through the proxy

	proxy.freeze(true)
	calls := map[string]func(ctx context.Context) error{
		"GetActive": func(ctx context.Context) error {
			_, err := s.GetActive(ctx, p.ID, prompts.Production)
			return err
		},
		"CreateVersion": func(ctx context.Context) error {
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
			return err
		},
		"Activate": func(ctx context.Context) error {
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(v.ID)})
			return err
		},
		"ListPrompts": func(ctx context.Context) error {
			_, _, err := s.ListPrompts(ctx, prompts.PromptFilter{})
			return err
		},
		"Ping": s.Ping,
	}
	for name, call := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		took := time.Since(start)
		cancel()
		t.Logf("%s: %v after %s", name, err, took.Round(time.Millisecond))
		is.True(took < time.Second)                               // returned at its deadline
		is.True(errors.Is(err, prompts.ErrUnavailable))           // as unavailable
		is.True(errors.Is(err, context.DeadlineExceeded))         // saying why
		is.Equal(prompts.ErrorCode(err), prompts.CodeUnavailable) // a 503, for a server
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	err = calls["GetActive"](ctx)
	is.True(time.Since(start) < time.Second)        // returned at the cancellation
	is.True(errors.Is(err, context.Canceled))       // with the context's error
	is.True(errors.Is(err, prompts.ErrUnavailable)) // as every Store says it

	// Left behind, the calls end at the Dialer's deadline, silence or
	// not, and close their connections.
	eventually(t, "the calls left behind end", func() bool { return db.Stats().InUse == 0 })
	is.Equal(db.Stats().OpenConnections, 0) // none kept for reuse

	proxy.freeze(false)
	// On a new connection (and on a busy host, where a read may take
	// longer than the Dialer's Timeout, after a few attempts).
	eventually(t, "the Store works once the database answers", func() bool {
		return calls["GetActive"](context.Background()) == nil
	})
}
