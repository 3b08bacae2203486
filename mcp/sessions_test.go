package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/mcp"
)

// gate allows each key max sessions.
type gate struct {
	mu   sync.Mutex
	max  int
	open map[string]int
}

func (g *gate) acquire(a httpapi.Access) (func(), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[a.Name] >= g.max {
		return nil, false
	}
	g.open[a.Name]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.open[a.Name]--
	}, true
}

func (g *gate) count(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open[name]
}

func TestSessionGate(t *testing.T) {
	is := is.New(t)
	g := &gate{max: 1, open: map[string]int{}}
	f := newFixture(t, mcp.WithSessionGate(g.acquire))
	first, err := f.dial(readKey, "", keyTransport{"X-API-Key", readKey})
	is.NoErr(err)
	is.Equal(g.count("reader"), 1)

	// One more session of that key is 429 with Retry-After.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("X-API-Key", readKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusTooManyRequests)
	is.True(res.Header.Get("Retry-After") != "")
	// Another key's is not counted with it.
	other, err := f.dial(adminKey, "", keyTransport{"X-API-Key", adminKey})
	is.NoErr(err)
	defer other.Close()

	// A session ended (DELETE) gives its place back.
	is.NoErr(first.Close())
	poll.For(t, 5*time.Second, "the ended session's place given back", func() bool { return g.count("reader") == 0 })
	again, err := f.dial(readKey, "", keyTransport{"X-API-Key", readKey})
	is.NoErr(err)
	defer again.Close()

	// A request refused before it makes a session gives its place back.
	req, _ = http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", adminKey)
	req.Header.Set("Content-Type", "text/plain")
	res, err = http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.True(res.StatusCode >= 400)
	is.Equal(g.count("admin"), 1)
}

func TestTailLivesWithSessions(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	is.True(!f.handler.Following()) // nothing runs before a session
	a := f.connect(t, readKey, "")
	b := f.connect(t, adminKey, "?environment=staging")
	is.True(f.handler.Following())
	is.NoErr(a.Close())
	is.NoErr(b.Ping(context.Background(), nil))
	is.True(f.handler.Following())
	is.NoErr(b.Close())
	poll.For(t, 5*time.Second, "the tail stopped with the last session", func() bool { return !f.handler.Following() })
}

func TestCloseEndsSessions(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	cs := f.connect(t, readKey, "")
	f.handler.Close() // returns once every session has ended
	is.True(!f.handler.Following())
	err := cs.Ping(context.Background(), nil)
	is.True(err != nil) // the session is gone
	_, err = f.dial(readKey, "", keyTransport{"X-API-Key", readKey})
	is.True(err != nil) // and no new one opens
}

// Serve serves one session over any transport, with the access given, and
// returns when Close ends it.
func TestServeEndsAtClose(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "", prompts.Production)
	f.prompt(t, f.other.ID, "elsewhere", "other", "", "", prompts.Production)
	server, client := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() {
		served <- f.handler.Serve(ctx, server, httpapi.Access{Role: httpapi.RoleRead, ProjectIDs: []string{f.demo.ID}})
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, client, nil)
	is.NoErr(err)
	defer cs.Close()
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/greeting"}) // the access's projects only
	is.True(f.handler.Following())
	f.handler.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return at Close")
	}
	is.True(!f.handler.Following())
	is.True(f.handler.Serve(ctx, server, httpapi.Access{Role: httpapi.RoleRead}) != nil) // closed: no new session
}
