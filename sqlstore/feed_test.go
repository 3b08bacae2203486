package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/sqlstore"
)

// feedDSN returns the test database's URL with an application_name the
// test can find the feed's connection by.
func feedDSN(t *testing.T) (dsn, appName string) {
	t.Helper()
	database(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	appName = "feed_" + hex.EncodeToString(b)
	dsn = os.Getenv(databaseURLVar)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "application_name=" + appName, appName
}

// eventually polls cond until it holds, or fails the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.For(t, 10*time.Second, what, cond)
}

// TestFeed: a cache over one Store, fed by a Feed, sees what another Store
// on its own pool (another process, as far as PostgreSQL can tell) writes;
// a feed whose connection is killed reports a loss and a recovery, and
// the cache drops what it held and works on.
func TestFeed(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	here := newSQLStore(t)
	there, err := sqlstore.New(openDB(t, 2, ""), sqlstore.WithSchema(here.Schema()))
	is.NoErr(err)
	defer there.Close()
	_, p := fixture(t, here)
	for range 2 {
		_, err := here.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
		is.NoErr(err)
	}

	c := cache.New(here)
	dsn, appName := feedDSN(t)
	feed := sqlstore.NewFeed(dsn, sqlstore.WithSchema(here.Schema()), sqlstore.WithPing(time.Second))
	done := make(chan error, 1)
	go func() { done <- feed.Run(ctx, c) }()
	eventually(t, "the feed listens", func() bool { return c.Stats().Recoveries > 0 })

	// Promotions made there are seen here, and never an older one after a
	// newer.
	var last int64
	for i := range 20 {
		n := 1 + i%2
		a, err := there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n)})
		is.NoErr(err)
		eventually(t, "the promotion reaches the cache", func() bool {
			got, err := c.GetActive(ctx, p.ID, prompts.Production)
			if err != nil || got.Revision < last {
				t.Fatalf("read %v, revision %d after %d", err, got.Revision, last)
			}
			last = got.Revision
			return got.Revision == a.Revision && got.ActiveVersion.VersionNumber == n
		})
	}
	_, err = there.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("renamed")})
	is.NoErr(err) // a rename there
	eventually(t, "the rename reaches the cache's read by key", func() bool {
		_, err := c.GetActiveByKey(ctx, p.ProjectID, "renamed", prompts.Production)
		return err == nil
	})

	// The feed's connection killed: a loss, then a recovery by itself.
	// (lib/pq reconnects within milliseconds: the counts say what
	// happened, however short the loss.)
	_, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err) // fills
	before := c.Stats()
	_, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.True(c.Stats().Hits > before.Hits) // cached
	// pg_terminate_backend in the select list, where it is called for the
	// rows the WHERE keeps only (in the WHERE it might run for any row).
	var killed []bool
	err = database(t).Select(&killed, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, appName)
	is.NoErr(err)
	is.Equal(killed, []bool{true}) // the feed's connection, killed
	a, err := there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err) // a change while the feed may be down: never replayed
	eventually(t, "a loss and a recovery are reported", func() bool {
		st := c.Stats()
		return st.Losses > before.Losses && st.Recoveries > before.Recoveries
	})
	got, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.True(got.Revision >= a.Revision) // the cache dropped what it held

	// The cache works again: it caches, and a change there reaches it.
	eventually(t, "the cache answers from memory again", func() bool {
		hits := c.Stats().Hits
		_, err := c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		return c.Stats().Hits > hits
	})
	a, err = there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
	is.NoErr(err)
	eventually(t, "a promotion after the recovery reaches the cache", func() bool {
		got, err := c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		return got.Revision == a.Revision && got.ActiveVersion.VersionNumber == 2
	})

	cancel()
	select {
	case err := <-done:
		is.Equal(err, context.Canceled) // Run stops with its context
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}

// BenchmarkFeedPropagation measures how long a promotion made through one
// Store takes to be answered by a cache over another, fed by a Feed: 200
// promotions per run, each awaited by reading the cache in a loop.
// Reports the median and the 99th percentile.
func BenchmarkFeedPropagation(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	here := newSQLStore(b)
	there, err := sqlstore.New(openDB(b, 2, ""), sqlstore.WithSchema(here.Schema()))
	if err != nil {
		b.Fatal(err)
	}
	defer there.Close()
	_, p := fixture(b, here)
	for range 2 {
		if _, err := here.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
			b.Fatal(err)
		}
	}
	c := cache.New(here)
	dsn := os.Getenv(databaseURLVar)
	go func() { _ = sqlstore.NewFeed(dsn, sqlstore.WithSchema(here.Schema())).Run(ctx, c) }()
	poll.For(b, 10*time.Second, "the feed listens", func() bool { return !c.Stats().Lost })
	var lat []time.Duration
	for b.Loop() {
		for i := range 200 {
			a, err := there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1 + i%2)})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for {
				got, err := c.GetActive(ctx, p.ID, prompts.Production)
				if err != nil {
					b.Fatal(err)
				}
				if got.Revision >= a.Revision {
					break
				}
			}
			lat = append(lat, time.Since(start))
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// A Feed takes the Store's WithSchema, and refuses what New refuses, at
// once and naming it, before any I/O.
func TestFeedRefusesABadSchema(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := sqlstore.New(sqlx.NewDb(nil, "postgres"), sqlstore.WithSchema("pg_catalog"))
	is.True(err != nil) // New refuses the schema
	feed := sqlstore.NewFeed("postgres://nowhere.invalid/x", sqlstore.WithSchema("pg_catalog"), sqlstore.WithPing(time.Second))
	err = feed.Run(ctx, cache.New(nil))
	is.True(err != nil)                                    // Run refuses it too
	is.True(strings.Contains(err.Error(), `"pg_catalog"`)) // naming it
	is.True(ctx.Err() == nil)                              // at once
}
