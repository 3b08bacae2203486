package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/sqlstore"
)

// TestUnavailableWhenDatabaseUnreachable needs no database: nothing
// listens on the pool's port, and every call is ErrUnavailable, worth a
// retry, not internal.
func TestUnavailableWhenDatabaseUnreachable(t *testing.T) {
	is := is.New(t)
	db, err := sqlx.Open("postgres", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5")
	is.NoErr(err) // open does not connect
	defer db.Close()
	s, err := sqlstore.New(db)
	is.NoErr(err) // nor does New
	ctx := context.Background()
	id := prompts.NewID(time.Now())
	_, err = s.GetActive(ctx, id, prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // read: unavailable
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: id, Content: "c"})
	is.True(errors.Is(err, prompts.ErrUnavailable)) // write: unavailable
	err = s.Migrate(ctx)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // migrate: unavailable
	_, err = s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: id, Key: "-", Name: "n"})
	is.True(errors.Is(err, prompts.ErrInvalid)) // invalid input is refused before the database
	_, err = s.GetPrompt(ctx, "not-an-id")
	is.True(errors.Is(err, prompts.ErrNotFound)) // and a malformed id is not found, without a query
}

// TestCancelStopsTheQuery: a write waiting for a row lock stops when its
// context ends; the error says so, and the database stops the query too.
func TestCancelStopsTheQuery(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	app := uniqueName("sqlstore_cancel")
	s, err := sqlstore.New(openDB(t, 2, "application_name="+app), sqlstore.WithSchema(newSQLStore(t).Schema()))
	is.NoErr(err) // a store whose sessions the test can find
	defer s.Close()
	_, p := fixture(t, s)

	tx, err := database(t).BeginTxx(ctx, nil)
	is.NoErr(err) // another session
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM `+s.Schema()+`.prompts WHERE id = $1 FOR UPDATE`, p.ID)
	is.NoErr(err) // holds the prompt's row lock

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = s.CreateVersion(short, prompts.NewVersion{PromptID: p.ID, Content: "c"})
	is.True(errors.Is(err, prompts.ErrUnavailable))                                 // the context ended: unavailable
	is.True(errors.Is(err, context.DeadlineExceeded))                               // because of the deadline
	is.True(time.Since(began) < 5*time.Second)                                      // when it ended
	is.True(poll.Until(5*time.Second, func() bool { return waiting(t, app) == 0 })) // and the query no longer waits in the database

	is.NoErr(tx.Rollback()) // the lock is released
	v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
	is.NoErr(err)                // the store goes on
	is.Equal(v.VersionNumber, 1) // and the cancelled write left no trace
}

// waiting returns how many sessions of application app wait for a lock.
func waiting(t *testing.T, app string) int {
	var n int
	if err := database(t).Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app); err != nil {
		t.Fatal(err)
	}
	return n
}

func uniqueName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// TestRecoversFromKilledConnections: while readers and writers run, another
// session terminates the store's connections again and again
// (pg_terminate_backend, as a restart or a failover would). Calls that fail
// meanwhile are ErrUnavailable, never internal; afterwards the same Store,
// not rebuilt, works, and the version numbers have no gap.
func TestRecoversFromKilledConnections(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	app := uniqueName("sqlstore_kill")
	s, err := sqlstore.New(openDB(t, 4, "application_name="+app), sqlstore.WithSchema(newSQLStore(t).Schema()))
	is.NoErr(err) // a store whose sessions the test can find
	defer s.Close()
	_, p := fixture(t, s)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "v1", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // version 1, active

	var (
		stop                 atomic.Bool
		wg                   sync.WaitGroup
		ok, unavailable, bad atomic.Int64
	)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var err error
				if (w+i)%2 == 0 {
					_, err = s.GetActive(ctx, p.ID, prompts.Production)
				} else {
					_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
				}
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, prompts.ErrUnavailable):
					unavailable.Add(1)
				default:
					bad.Add(1)
					t.Errorf("not unavailable: %v", err)
				}
			}
		}()
	}
	killed := 0
	for range 15 {
		// Between two kills the workers make calls again, on the
		// connections the pool makes anew.
		calls := ok.Load() + unavailable.Load()
		poll.For(t, 10*time.Second, "calls after a kill", func() bool { return ok.Load()+unavailable.Load() >= calls+12 })
		var n int
		is.NoErr(database(t).Get(&n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app))
		killed += n
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("killed %d connections; %d calls succeeded, %d unavailable", killed, ok.Load(), unavailable.Load())
	is.True(killed > 0)            // connections were killed
	is.Equal(bad.Load(), int64(0)) // and no call failed otherwise

	// The same store, not rebuilt, works again.
	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)                              // read
	is.Equal(a.ActiveVersion.VersionNumber, 1) // the active version
	v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "after"})
	is.NoErr(err) // write
	checkVersions(t, s, p.ID, v.VersionNumber)
}
