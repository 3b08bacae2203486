package cache_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/sqlstore"
)

// cutProxy forwards TCP to PostgreSQL until cut: then it closes every
// connection and refuses new ones, as a database that went away. The
// shared PostgreSQL server is never touched.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.cut {
				p.mu.Unlock()
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { _, _ = copyConn(up, c); up.Close(); c.Close() }()
			go func() { _, _ = copyConn(c, up); up.Close(); c.Close() }()
		}
	}()
	return p
}

func copyConn(dst, src net.Conn) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if err != nil {
			return n, err
		}
	}
}

func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		p.conns = map[net.Conn]bool{}
	}
}

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
		t.Skip("needs PostgreSQL: set PROMPTS_TEST_DATABASE_URL (see README)")
	}
	is := is.New(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("needs a TCP postgres:// URL: %q", dsn)
	}
	proxy := startCutProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.ln.Addr().String()
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

	proxy.setCut(true) // the application starts while the database cannot be reached
	a, stale, err := c.GetActiveByKeyStale(ctx, proj.ID, "support/greeting", prompts.Production)
	is.NoErr(err) // it serves
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "one") // what the snapshot holds
	_, err = c.GetActiveByKey(ctx, proj.ID, "nope", prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // what it does not hold fails

	proxy.setCut(false)
	a, stale, err = c.GetActiveByKeyStale(ctx, proj.ID, "support/greeting", prompts.Production)
	is.NoErr(err)
	is.True(!stale)
	is.Equal(a.ActiveVersion.Content, "two") // fresh as soon as it can

	proxy.setCut(true)
	a, stale, err = c.GetActiveByKeyStale(ctx, proj.ID, "support/greeting", prompts.Production)
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "two") // the database's value, not the snapshot's
	is.Equal(c.Stats().Stale, int64(2))
}
