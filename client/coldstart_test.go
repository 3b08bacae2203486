package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/memstore"
)

// freePort returns an address on 127.0.0.1 with nothing listening on it,
// where a server may be started later: the one a client was pointed at.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// serveAt starts httpapi over store at addr, with the admin key; it stops
// with the test.
func serveAt(t testing.TB, addr string, store prompts.Store) {
	t.Helper()
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(store, httpapi.WithAuthenticator(keys))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(h.CloseStreams)
}

// coldProject makes a project with the prompt "support/greeting" active in
// production at "Hello from the snapshot", takes the project's snapshot,
// then activates "Hello from the server": what the snapshot answers and
// what the server answers differ.
func coldProject(t testing.TB) (store *memstore.Store, projectID string, snap *cache.Snapshot) {
	t.Helper()
	ctx := context.Background()
	store = memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Cold"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	if err != nil {
		t.Fatal(err)
	}
	prod := []prompts.Environment{prompts.Production}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello from the snapshot", Environments: prod}); err != nil {
		t.Fatal(err)
	}
	if snap, err = cache.TakeSnapshot(ctx, store, proj.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello from the server", Environments: prod}); err != nil {
		t.Fatal(err)
	}
	return store, proj.ID, snap
}

// attempts is an http.RoundTripper that counts the attempts a client
// makes (a refused connection is an attempt too): those of its event
// stream, with their times, and the others. after, when set, is called
// after each attempt that is not the stream's, with its error.
type attempts struct {
	next http.RoundTripper

	mu     sync.Mutex
	calls  int
	stream []time.Time
	after  func(err error)
}

func (a *attempts) RoundTrip(r *http.Request) (*http.Response, error) {
	isStream := strings.HasSuffix(r.URL.Path, "/events") && r.Header.Get("Accept") == "text/event-stream"
	a.mu.Lock()
	if isStream {
		a.stream = append(a.stream, time.Now())
	} else {
		a.calls++
	}
	after := a.after
	a.mu.Unlock()
	res, err := a.next.RoundTrip(r)
	if after != nil && !isStream {
		after(err)
	}
	return res, err
}

func (a *attempts) counts() (calls, stream int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls, len(a.stream)
}

// countedClient returns a client of base whose attempts a counts.
func countedClient(t testing.TB, base string, opts ...client.Option) (*client.Client, *attempts) {
	a := &attempts{next: http.DefaultTransport.(*http.Transport).Clone()}
	return newClient(t, base, adminKey, append([]client.Option{client.WithHTTPClient(&http.Client{Transport: a})}, opts...)...), a
}

// A cache over a client of a server that is not there yet, with the
// client's default retries, starts from its snapshot at once: its first
// read tries the server once (no retries: the cache has an answer), and
// the reads after it do not try the server at all (it was found down).
// The feed keeps trying, at most a second apart however long the server
// is gone; once the server is there, at the same address, the cache reads
// fresh values, fed again, within 2 s.
//
// In a synctest bubble, on a network in memory (memNet): the waits of the
// retries and of the feed take no real time, and their lengths are exact.
func TestColdStartWithNothingListening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ctx := t.Context()
		store, projectID, snap := coldProject(t)
		var n memNet
		const addr = "prompts.test:80"
		tries := &attempts{next: n.transport()}
		cl := newClient(t, "http://"+addr, adminKey, client.WithHTTPClient(&http.Client{Transport: tries}))
		c := cache.New(cl, cache.WithFallback(snap))
		fctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = cl.Feed().Run(fctx, c); close(done) }()
		defer func() { stop(); <-done; tries.next.(*http.Transport).CloseIdleConnections() }()
		read := func() (prompts.ActivePrompt, bool, error) {
			return c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: "support/greeting", Environment: prompts.Production})
		}

		began := time.Now()
		a, stale, err := read()
		is.NoErr(err)                                                // the snapshot answers
		is.True(stale)                                               // and says so
		is.Equal(a.ActiveVersion.Content, "Hello from the snapshot") // the snapshot's value
		calls, _ := tries.counts()
		is.Equal(calls, 1)                               // one attempt: no retries
		is.True(time.Since(began) < 50*time.Millisecond) // so at once: a retry waits 50 ms at least

		reads := func() {
			t.Helper()
			for range 100 {
				a, stale, err = read()
				is.NoErr(err)
				is.True(stale)
				is.Equal(a.ActiveVersion.Content, "Hello from the snapshot")
			}
		}
		reads()
		calls, _ = tries.counts()
		is.Equal(calls, 1) // the server, found down, is not asked again within the second

		// A long outage: the feed's waits have grown to their bound
		// (without it, the seventh would be 3.2 to 6.4 s).
		poll.For(t, time.Minute, "seven attempts of the feed", func() bool { _, n := tries.counts(); return n >= 7 })
		is.True(time.Since(began) > time.Second)
		reads()
		calls, _ = tries.counts()
		is.Equal(calls, 2) // more than a second later, asked once again

		serveMem(t, &n, addr, store)
		up := time.Now()
		poll.For(t, 2*time.Second, "fresh values, fed again", func() bool {
			a, stale, err = read()
			return err == nil && !stale && a.ActiveVersion.Content == "Hello from the server" && !c.Stats().Lost
		})
		t.Logf("fresh %v after the server came", time.Since(up))
		tries.mu.Lock()
		defer tries.mu.Unlock()
		for i := 1; i < len(tries.stream); i++ {
			gap := tries.stream[i].Sub(tries.stream[i-1])
			t.Logf("feed attempt %d: %v after the one before", i+1, gap)
			is.True(gap <= time.Second) // at most a second apart
		}
	})
}

// Without an answer at hand, a refused connection is retried as the
// policy says: a plain client's read, and a cache's read of what it
// neither holds nor has in a snapshot.
func TestARefusedConnectionIsRetriedWithNothingToAnswer(t *testing.T) {
	is := is.New(t)
	_, projectID, snap := coldProject(t)
	cl, tries := countedClient(t, "http://"+freePort(t), fast)
	_, err := cl.GetActiveByKey(t.Context(), projectID, "support/greeting", prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable))
	calls, _ := tries.counts()
	is.Equal(calls, 4) // the default attempts

	c := cache.New(cl, cache.WithFallback(snap))
	_, err = c.GetActiveByKey(t.Context(), projectID, "not/in/the/snapshot", prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable))
	calls, _ = tries.counts()
	is.Equal(calls, 8) // four more
}

// A server that restarts refuses connections for a moment: a write made
// then is retried and goes through once it is back, done once.
func TestAWriteDuringARestartGoesThrough(t *testing.T) {
	is := is.New(t)
	store, projectID, _ := coldProject(t)
	p, err := store.GetActiveByKey(t.Context(), projectID, "support/greeting", prompts.Production)
	is.NoErr(err)
	addr := freePort(t)
	cl, tries := countedClient(t, "http://"+addr, fast)
	tries.after = func(err error) {
		if err != nil {
			tries.after = nil       // (the client's calls are sequential here)
			serveAt(t, addr, store) // back after the first refusal
		}
	}
	v, err := cl.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "During the restart"})
	is.NoErr(err) // retried
	is.Equal(v.VersionNumber, 3)
	calls, _ := tries.counts()
	is.Equal(calls, 2) // refused, then done
	vs, _, err := store.ListVersions(t.Context(), p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 3) // once
}

// BenchmarkColdStartFirstRead is the first read of an application that
// starts with nothing listening at the server's address: a cache over a
// client (the default retries) with its snapshot, made anew for each
// read: one refused connection, then the snapshot.
func BenchmarkColdStartFirstRead(b *testing.B) {
	_, projectID, snap := coldProject(b)
	cl := newClient(b, "http://"+freePort(b), adminKey)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		c := cache.New(cl, cache.WithFallback(snap))
		if _, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: "support/greeting", Environment: prompts.Production}); err != nil || !stale {
			b.Fatalf("stale %v, %v", stale, err)
		}
	}
}

// BenchmarkColdReadNothingListening is what the reads after the first
// cost while nothing listens at the server's address: the server was
// found down, so the snapshot answers from memory (but for one read a
// second, which tries the server once).
func BenchmarkColdReadNothingListening(b *testing.B) {
	_, projectID, snap := coldProject(b)
	cl := newClient(b, "http://"+freePort(b), adminKey)
	c := cache.New(cl, cache.WithFallback(snap))
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: "support/greeting", Environment: prompts.Production}); err != nil || !stale {
			b.Fatalf("stale %v, %v", stale, err)
		}
	}
}
