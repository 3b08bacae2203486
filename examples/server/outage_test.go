package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// cutProxy forwards TCP to PostgreSQL until cut: then it closes every
// connection and refuses new ones, as a database that went away; restore
// lets connections through again. The shared PostgreSQL server is never
// touched.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
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
			go func() { _, _ = io.Copy(up, c); up.Close(); c.Close() }()
			go func() { _, _ = io.Copy(c, up); up.Close(); c.Close() }()
		}
	}()
	return p
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

// TestServerThroughAnOutage runs the built server on PostgreSQL through a
// proxy that the test cuts: cached reads answer 200 marked stale, other
// reads and writes 503 with Retry-After; once the proxy is back, writes
// work and their changes reach the cache again within 2 s.
func TestServerThroughAnOutage(t *testing.T) {
	dsn := os.Getenv("PROMPTS_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("PROMPTS_TEST_REQUIRE_DATABASE") != "" {
			t.Fatal("PROMPTS_TEST_DATABASE_URL is not set")
		}
		t.Skip("needs PostgreSQL: set PROMPTS_TEST_DATABASE_URL (see README)")
	}
	is := is.New(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("needs a TCP postgres:// URL: %q", dsn)
	}
	proxy := startCutProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.ln.Addr().String()
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	schema := "server_test_" + hex.EncodeToString(rnd)
	t.Cleanup(func() {
		if db, err := sqlx.Open("postgres", dsn); err == nil {
			_, _ = db.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
			db.Close()
		}
	})
	s := start(t, []string{"PROMPTS_DSN=" + viaProxy.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey})
	s.key = testKey
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p, q prompt
	is.Equal(s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"k","name":"K"}`, &p).StatusCode, 200)
	is.Equal(s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"q","name":"Q"}`, &q).StatusCode, 200)
	for _, v := range []string{"one", "two"} {
		is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"`+v+`","environments":["production"]}`, nil).StatusCode, 200)
	}
	waitFor(t, "the feed listens", func() bool { return strings.Contains(s.out.String(), "feed listening") })
	// A rename by another process: once the server reads it, its feed has
	// delivered every notification of the writes above (they come in
	// commit order), and that read is cached.
	db, err := sqlx.Open("postgres", dsn)
	is.NoErr(err)
	defer db.Close()
	other, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	is.NoErr(err)
	defer other.Close()
	_, err = other.UpdatePrompt(context.Background(), p.ID, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
	is.NoErr(err)
	var read struct {
		Name          string `json:"name"`
		ActiveVersion *struct {
			VersionNumber int `json:"version_number"`
		} `json:"active_version"`
	}
	waitFor(t, "the rename reaches the server", func() bool {
		return s.call(t, "GET", "/prompts/"+p.ID, "", &read).StatusCode == 200 && read.Name == "Renamed"
	})
	// That read may have come from the database before the rename's
	// notification reached the feed, which then drops the entry. Give the
	// notification its time (milliseconds at p99, BENCHMARKS.md), then
	// read again to cache. Waited, not asserted: nothing here is timed.
	time.Sleep(500 * time.Millisecond)
	s.call(t, "GET", "/prompts/"+p.ID, "", &read)
	is.Equal(read.ActiveVersion.VersionNumber, 2) // cached now
	s.call(t, "GET", "/prompts/"+p.ID, "", &read) // a hit

	is.Equal(probe(t, s, "/readyz"), 200) // ready
	_, scrape := s.get(t, "/metrics")
	is.Equal(metric(t, scrape, "prompts_cache_feed_connected"), "1")
	is.True(metricValue(t, scrape, "prompts_cache_hits_total") >= 1) // the read of p above, once cached
	metric(t, scrape, "prompts_cache_misses_total")
	metric(t, scrape, "prompts_cache_evictions_total")
	is.True(metricValue(t, scrape, "prompts_cache_bytes") > 0)
	is.Equal(metric(t, scrape, "prompts_store_up"), "1")
	proxy.setCut(true)
	waitFor(t, "the feed reports the loss", func() bool { return strings.Contains(s.out.String(), "feed lost") })
	is.Equal(probe(t, s, "/readyz"), 503) // the database does not answer
	is.Equal(probe(t, s, "/livez"), 200)  // the process does
	resp := s.call(t, "GET", "/prompts/"+p.ID, "", &read)
	if resp.StatusCode != 200 {
		t.Logf("server:\n%s", s.out.String())
	}
	is.Equal(resp.StatusCode, 200)                                          // a cached read
	is.Equal(resp.Header.Get("Cache-Status"), "prompts; hit; detail=stale") // marked stale
	is.Equal(read.ActiveVersion.VersionNumber, 2)
	resp = s.call(t, "GET", "/prompts/"+q.ID, "", nil)
	is.Equal(resp.StatusCode, http.StatusServiceUnavailable) // a read never cached
	is.True(resp.Header.Get("Retry-After") != "")
	resp = s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil)
	is.Equal(resp.StatusCode, http.StatusServiceUnavailable) // a write
	is.True(resp.Header.Get("Retry-After") != "")
	for range 20 {
		is.Equal(s.call(t, "GET", "/prompts/"+q.ID, "", nil).StatusCode, http.StatusServiceUnavailable)
	}
	_, scrape = s.get(t, "/metrics")
	is.Equal(metric(t, scrape, "prompts_cache_feed_connected"), "0")
	is.Equal(metric(t, scrape, "prompts_store_up"), "0")
	is.True(metricValue(t, scrape, `prompts_store_errors_total{code="unavailable"}`) >= 22)
	is.True(metricValue(t, scrape, `prompts_http_requests_total{method="GET",route="/v1/integration/prompts/{prompt_id}",status="503"}`) >= 21)
	// However many requests fail, the outage is one line in the log.
	is.Equal(strings.Count(s.out.String(), `msg="store unavailable`), 1)

	proxy.setCut(false)
	restored := time.Now()
	waitFor(t, "writes work again", func() bool {
		return s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil).StatusCode == 200
	})
	waitFor(t, "the feed is back", func() bool {
		return strings.Count(s.out.String(), "feed listening") >= 2
	})
	if d := time.Since(restored); d > 2*time.Second {
		t.Logf("the feed came back %v after the database", d) // the target is 2 s; the proxy's timing, not a rule, so logged
	}
	s.call(t, "GET", "/prompts/"+p.ID, "", &read)
	is.Equal(read.ActiveVersion.VersionNumber, 1) // the change is read, fresh
	is.Equal(probe(t, s, "/readyz"), 200)         // ready again
	is.Equal(strings.Count(s.out.String(), `msg="store unavailable`), 1)
	is.Equal(strings.Count(s.out.String(), `msg="store recovered"`), 1)
	_, scrape = s.get(t, "/metrics")
	is.Equal(metric(t, scrape, "prompts_store_up"), "1")
	is.NoErr(s.stop(t))
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// probe answers the status of a GET of path on the server, without a key.
func probe(t *testing.T, s *server, path string) int {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(s.base, "/v1/integration") + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
