package client_test

import (
	"context"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
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

// A cache over a client of a server that is not there yet starts from its
// snapshot, marked stale, and reads fresh values as soon as the server is
// there, at the same address.
func TestColdStartWithNothingListening(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	store, projectID, snap := coldProject(t)
	addr := freePort(t)
	cl := newClient(t, "http://"+addr, adminKey)
	c := cache.New(cl, cache.WithFallback(snap))
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = cl.Feed().Run(fctx, c); close(done) }()
	defer func() { stop(); <-done }()

	began := time.Now()
	a, stale, err := c.GetActiveByKeyStale(ctx, projectID, "support/greeting", prompts.Production)
	cold := time.Since(began)
	is.NoErr(err)                                                // the snapshot answers
	is.True(stale)                                               // and says so
	is.Equal(a.ActiveVersion.Content, "Hello from the snapshot") // the snapshot's value
	is.True(cold < 2*time.Second)                                // within the client's tries (TestColdStartTriedOnce)
	t.Logf("cold read with nothing listening: %v", cold)

	serveAt(t, addr, store)
	up := time.Now()
	for {
		a, stale, err = c.GetActiveByKeyStale(ctx, projectID, "support/greeting", prompts.Production)
		if err == nil && !stale && a.ActiveVersion.Content == "Hello from the server" {
			break
		}
		if time.Since(up) > 2*time.Second {
			t.Fatalf("2 s after the server came: %q, stale %v, %v", a.ActiveVersion.Content, stale, err)
		}
	}
	t.Logf("fresh %v after the server came", time.Since(up))
}

// A refused connection is retried as any other (RetryPolicy), so that with
// the defaults a read the snapshot answers waits for the client's four
// tries, about half a second; a client that tries once answers from the
// snapshot at once.
func TestColdStartTriedOnce(t *testing.T) {
	is := is.New(t)
	_, projectID, snap := coldProject(t)
	cl := newClient(t, "http://"+freePort(t), adminKey, client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
	c := cache.New(cl, cache.WithFallback(snap))
	began := time.Now()
	a, stale, err := c.GetActiveByKeyStale(t.Context(), projectID, "support/greeting", prompts.Production)
	cold := time.Since(began)
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "Hello from the snapshot")
	is.True(cold < 100*time.Millisecond) // at once
	t.Logf("cold read with nothing listening, one try: %v", cold)
}

// BenchmarkColdReadNothingListening is what a read costs that the
// snapshot answers because nothing listens at the server's address: the
// client's tries of the connection, then the snapshot.
func BenchmarkColdReadNothingListening(b *testing.B) {
	_, projectID, snap := coldProject(b)
	cl := newClient(b, "http://"+freePort(b), adminKey)
	c := cache.New(cl, cache.WithFallback(snap))
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, stale, err := c.GetActiveByKeyStale(ctx, projectID, "support/greeting", prompts.Production); err != nil || !stale {
			b.Fatalf("stale %v, %v", stale, err)
		}
	}
}
