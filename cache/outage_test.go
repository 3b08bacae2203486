package cache_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/tcpproxy"
	"github.com/promptkit/prompts/sqlstore"
)

// The fallback through a real outage: a cache over PostgreSQL, reached
// through a proxy the test cuts, starts cold while the database cannot be
// reached and answers from its embedded snapshot; once the database is
// back, the cache reads its values, which win from then on.
func TestFallbackThroughAnOutageOfPostgreSQL(t *testing.T) {
	dsn := os.Getenv("PROMPTS_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("PROMPTS_TEST_REQUIRE_DATABASE") != "" {
			t.Fatal("PROMPTS_TEST_REQUIRE_DATABASE is set: set PROMPTS_TEST_DATABASE_URL")
		}
		t.Skip("needs PostgreSQL: set PROMPTS_TEST_DATABASE_URL (see docs/testing.md)")
	}
	is := is.New(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("needs a TCP postgres:// URL: %q", dsn)
	}
	proxy := tcpproxy.Start(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.Addr()
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	schema := "cache_test_" + hex.EncodeToString(rnd)

	direct, err := sqlx.Open("postgres", dsn)
	is.NoErr(err)
	t.Cleanup(func() {
		_, _ = direct.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
		direct.Close()
	})
	other, err := sqlstore.New(direct, sqlstore.WithSchema(schema)) // another process, never cut off
	is.NoErr(err)
	is.NoErr(other.Migrate(ctx))
	proj, err := other.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	is.NoErr(err)
	p, err := other.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	is.NoErr(err)
	_, err = other.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: prompts.Environments})
	is.NoErr(err)
	snap := embedded(t, other, proj.ID) // taken at build time, embedded in the binary
	_, err = other.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // deployed since

	db, err := sqlx.Open("postgres", viaProxy.String())
	is.NoErr(err)
	t.Cleanup(func() { db.Close() })
	store, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	is.NoErr(err)
	c := cache.New(store, cache.WithFallback(snap))
	clock := newFakeNow()
	cache.SetNow(c, clock.now)

	proxy.Cut(true) // the application starts while the database cannot be reached
	a, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "support/greeting", Environment: prompts.Production})
	is.NoErr(err) // it serves
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "one") // what the snapshot holds
	_, err = c.GetActiveByKey(ctx, proj.ID, "nope", prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // what it does not hold fails

	proxy.Cut(false)
	clock.add(time.Second) // the next read asks the database again (no feed runs here to say it is back)
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "support/greeting", Environment: prompts.Production})
	is.NoErr(err)
	is.True(!stale)
	is.Equal(a.ActiveVersion.Content, "two") // fresh as soon as it can

	proxy.Cut(true)
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "support/greeting", Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "two") // the database's value, not the snapshot's
	is.Equal(c.Stats().Stale, int64(2))
}
