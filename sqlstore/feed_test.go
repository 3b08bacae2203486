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

// twoReplicas returns a Store on a schema of its own, and another on the
// same schema with a pool of its own (another process, as far as
// PostgreSQL can tell), closed when the test ends.
func twoReplicas(t *testing.T) (here, there *sqlstore.Store) {
	t.Helper()
	here = newSQLStore(t)
	there, err := sqlstore.New(openDB(t, 2, ""), sqlstore.WithSchema(here.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })
	return here, there
}

// TestFeed: a cache over one Store, fed by a Feed, sees what another Store
// on its own pool (another process, as far as PostgreSQL can tell) writes;
// a feed whose connection is killed reports a loss and a recovery, and
// the cache drops what it held and works on.
func TestFeed(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	here, there := twoReplicas(t)
	_, p := fixture(t, here)
	var err error
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
	feedPropagation(b, func(ctx context.Context, s *sqlstore.Store, promptID string, i int) (prompts.ActivePrompt, error) {
		return s.Activate(ctx, prompts.Activation{PromptID: promptID, Environment: prompts.Production, VersionNumber: prompts.Some(1 + i%2)})
	})
}

// BenchmarkFeedPropagationSplit is BenchmarkFeedPropagation of splits:
// each change sets another split (90/10, then 10/90) of the two versions.
func BenchmarkFeedPropagationSplit(b *testing.B) {
	feedPropagation(b, func(ctx context.Context, s *sqlstore.Store, promptID string, i int) (prompts.ActivePrompt, error) {
		w := 10 + 80*(i%2)
		return s.Activate(ctx, prompts.Activation{PromptID: promptID, Environment: prompts.Production, Split: split(1, w, 2, 100-w)})
	})
}

// feedPropagation is the benchmark of a change, the i-th, that another
// Store makes to a prompt with two versions.
func feedPropagation(b *testing.B, change func(ctx context.Context, s *sqlstore.Store, promptID string, i int) (prompts.ActivePrompt, error)) {
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
			a, err := change(ctx, there, p.ID, i)
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

// seenSink reports what a Feed tells it on a channel, once the sink it
// wraps was told, until stop is closed.
type seenSink struct {
	prompts.Sink
	seen chan prompts.Invalidation // a zero Invalidation: Recovered
	stop <-chan struct{}
}

func (s seenSink) Invalidate(i prompts.Invalidation) { s.Sink.Invalidate(i); s.tell(i) }
func (s seenSink) Recovered()                        { s.Sink.Recovered(); s.tell(prompts.Invalidation{}) }

func (s seenSink) tell(i prompts.Invalidation) {
	select {
	case s.seen <- i:
	case <-s.stop:
	}
}

// TestFeedSplits: a cache over one Store, fed by a Feed, learns of the
// splits another Store on a pool of its own (another replica, as far as
// PostgreSQL can tell) sets, replaces and rolls back, as it learns of an
// activation: by the notification of the write's commit, which the test
// waits for, after which the cache's read answers the split and picks
// each subject's version from it.
func TestFeedSplits(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	here, there := twoReplicas(t)
	_, p := fixture(t, here)
	var err error
	for range 2 {
		_, err := here.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
	}

	c := cache.New(here)
	sink := seenSink{c, make(chan prompts.Invalidation, 64), ctx.Done()}
	dsn, _ := feedDSN(t)
	done := make(chan error, 1)
	go func() { done <- sqlstore.NewFeed(dsn, sqlstore.WithSchema(here.Schema())).Run(ctx, sink) }()
	// next returns what the feed tells next, failing the test when it
	// tells nothing for a minute (it should within milliseconds).
	next := func() prompts.Invalidation {
		t.Helper()
		select {
		case i := <-sink.seen:
			return i
		case err := <-done:
			t.Fatalf("the feed stopped: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("the feed told nothing for a minute")
		}
		return prompts.Invalidation{}
	}
	for next() != (prompts.Invalidation{}) {
	} // listening
	_, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err) // cached: version 2

	subjects := []string{"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "jo"}
	// reached waits for the feed's word of the write that moved the
	// prompt to revision rev, then checks what the cache answers.
	reached := func(rev int64, want prompts.Split) {
		t.Helper()
		for {
			if i := next(); i.PromptID != p.ID {
				continue
			}
			got, err := c.GetActive(ctx, p.ID, prompts.Production)
			is.NoErr(err)
			if got.Revision < rev {
				continue // an earlier write's word
			}
			is.Equal(got.Revision, rev)
			is.Equal(got.Split, want) // the split, or none
			for _, sub := range subjects {
				a, _, err := prompts.ReadActive(ctx, c, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: sub})
				is.NoErr(err)
				if want == nil {
					is.Equal(a.ActiveVersion.VersionNumber, 2)
				} else {
					is.Equal(a.ActiveVersion.VersionNumber, want[want.Entry(p.ID, prompts.Production, sub)].VersionNumber) // picked from the split
				}
			}
			return
		}
	}
	a, err := there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 50, 2, 50)})
	is.NoErr(err) // a split there
	reached(a.Revision, a.Split)
	hits := c.Stats().Hits
	_, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.True(c.Stats().Hits > hits) // from memory again, until the next change

	a, err = there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(2, 10, 1, 90)})
	is.NoErr(err) // another split
	reached(a.Revision, a.Split)
	a, err = there.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
	is.NoErr(err) // one version over it
	reached(a.Revision, nil)
	a, err = there.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err) // back to the split
	is.Equal(len(a.Split), 2)
	reached(a.Revision, a.Split)
	a, err = there.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err) // and none
	for {
		if i := next(); i.PromptID == p.ID {
			got, err := c.GetActive(ctx, p.ID, prompts.Production)
			is.NoErr(err)
			if got.Revision == a.Revision {
				is.Equal(got.ActiveVersion, nil)
				is.Equal(got.Split, nil)
				break
			}
		}
	}
	cancel()
	is.Equal(<-done, context.Canceled)
}
