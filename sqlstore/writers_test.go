package sqlstore_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// TestCreateVersionWritersOfOneProcessDoNotRetry: the goroutines of one
// Store that write versions of one prompt take turns before they make
// their ids, so none finds a larger id stored first and none retries
// under the lock.
func TestCreateVersionWritersOfOneProcessDoNotRetry(t *testing.T) {
	is := is.New(t)
	var retries countingHandler
	s := newSQLStore(t, sqlstore.WithLogger(slog.New(&retries)))
	_, p := fixture(t, s)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := s.CreateVersion(context.Background(), prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	is.Equal(retries.count.Load(), int64(0)) // no write retried under the lock
	checkVersions(t, s, p.ID, writers*each)
}

// TestCreateVersionWaitingForItsTurnEndsWithTheContext: a writer that waits
// for another writer of the same prompt in this process gives up when its
// context ends, as it would waiting on the row lock, and the other writer
// and the writers of other prompts are not held up by it.
func TestCreateVersionWaitingForItsTurnEndsWithTheContext(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	proj, p := fixture(t, s)
	other, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "other", Name: "Other"})
	is.NoErr(err) // a second prompt

	// Another session holds the prompt's row lock: the first writer takes
	// its turn and waits in PostgreSQL.
	tx, err := database(t).BeginTxx(ctx, nil)
	is.NoErr(err) // begin
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SELECT 1 FROM `+pq.QuoteIdentifier(s.Schema())+`.prompts WHERE id = $1 FOR UPDATE`, p.ID)
	is.NoErr(err) // lock the prompt's row
	first := make(chan error, 1)
	go func() {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "first"})
		first <- err
	}()
	waitForLockWaiters(t, s.Schema(), 1) // the first writer has its turn, and waits in PostgreSQL

	// The second writer of the prompt waits for its turn until its context ends.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = s.CreateVersion(short, prompts.NewVersion{PromptID: p.ID, Content: "second"})
	is.True(errors.Is(err, prompts.ErrUnavailable))   // unavailable: worth a retry
	is.True(errors.Is(err, context.DeadlineExceeded)) // because the context ended

	// A writer of another prompt does not wait.
	v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: other.ID, Content: "other"})
	is.NoErr(err)                // another prompt's version
	is.Equal(v.VersionNumber, 1) // its first

	is.NoErr(tx.Rollback()) // release the row lock
	is.NoErr(<-first)       // the first writer finishes
	checkVersions(t, s, p.ID, 1)
}
