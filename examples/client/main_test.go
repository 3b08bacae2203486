package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/internal/tcpproxy"
	"github.com/promptkit/prompts/memstore"
)

var update = flag.Bool("update", false, "write snapshot.json afresh from the demo project")

const readKey = "example-read-key-0123"

// seed creates the demo project: the prompt "greeting" with one version
// in production.
func seed(ctx context.Context, store prompts.Store) (projectID string, err error) {
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Greeter"})
	if err != nil {
		return "", err
	}
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: promptKey, Name: "Greeting"})
	if err != nil {
		return "", err
	}
	_, err = store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:     p.ID,
		Content:      "Hello, {{name}}!",
		Environments: []prompts.Environment{prompts.Production},
	})
	return proj.ID, err
}

// The embedded snapshot is one the cache reads, of the demo project, and
// its greeting fits the service. With -update the test writes it afresh.
func TestSnapshotFile(t *testing.T) {
	is := is.New(t)
	if *update {
		store := memstore.New()
		projectID, err := seed(t.Context(), store)
		is.NoErr(err)
		snap, err := cache.TakeSnapshot(t.Context(), store, projectID)
		is.NoErr(err)
		data, err := json.MarshalIndent(snap, "", "  ")
		is.NoErr(err)
		is.NoErr(os.WriteFile("snapshot.json", append(data, '\n'), 0o644))
		snapshotJSON = append(data, '\n')
	}
	snap, err := client.ParseSnapshot(snapshotJSON)
	is.NoErr(err) // the file is a snapshot
	is.Equal(snap.Project.Name, "Greeter")
	is.Equal(len(snap.Prompts), 1)
	is.Equal(snap.Prompts[0].Prompt.Key, promptKey)
	v := snap.Prompts[0].ActiveIn(prompts.Production).ActiveVersion
	is.True(v != nil) // a greeting in production
	text, err := v.Render(map[string]string{"name": "Ada"})
	is.NoErr(err)
	is.Equal(text, "Hello, Ada!")
}

// server is httpapi over a memstore holding the demo project, with a read
// key.
func server(t *testing.T) (store *memstore.Store, url, projectID string) {
	t.Helper()
	store = memstore.New()
	projectID, err := seed(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "example", Role: httpapi.RoleRead, Secret: readKey}); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(store, httpapi.WithAuthenticator(keys))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.CloseStreams)
	return store, srv.URL, projectID
}

// startService runs the service's handler and its feed for the test.
func startService(t *testing.T, cfg config) (*service, string) {
	t.Helper()
	s, err := newService(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.follow(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// hello asks the service to greet Ada, and returns its answer and
// whether it says it is stale.
func hello(t *testing.T, base string) (code int, body string, stale bool) {
	t.Helper()
	resp, err := http.Get(base + "/hello?name=Ada")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header.Get("Prompt-Stale") == "true"
}

// With the server there, the service greets with what is in production,
// from its cache, and a promotion reaches it through the feed.
func TestServiceReadsTheServer(t *testing.T) {
	is := is.New(t)
	store, url, projectID := server(t)
	s, base := startService(t, config{url: url, apiKey: readKey, project: projectID})
	code, body, stale := hello(t, base)
	is.Equal(code, 200)
	is.Equal(body, "Hello, Ada!\n")
	is.True(!stale) // the server answered

	poll.For(t, 10*time.Second, "the feed connects", func() bool { return !s.cache.Stats().Lost })
	a, err := store.GetActiveByKey(t.Context(), projectID, promptKey, prompts.Production)
	is.NoErr(err)
	_, err = store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: a.ID, Content: "Hi, {{name}}.", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	for deadline := time.Now().Add(2 * time.Second); ; {
		if _, body, _ = hello(t, base); body == "Hi, Ada.\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("2 s after the promotion the service says %q", body)
		}
	}
	_, _, stale = hello(t, base)
	is.True(!stale)
	// Once the event of the promotion is in, a read fills the cache and
	// the next ones are answered from memory.
	for deadline := time.Now().Add(2 * time.Second); s.cache.Stats().Hits == 0; {
		if _, body, _ = hello(t, base); body != "Hi, Ada.\n" {
			t.Fatalf("after the promotion the service says %q", body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no read came from memory: %+v", s.cache.Stats())
		}
	}
}

// With nothing listening where the server should be, the service answers
// from its embedded snapshot, at once, and says so.
func TestServiceStartsWithoutTheServer(t *testing.T) {
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	addr := ln.Addr().String()
	is.NoErr(ln.Close())
	_, base := startService(t, config{url: "http://" + addr, apiKey: readKey})
	began := time.Now()
	code, body, stale := hello(t, base)
	is.Equal(code, 200)
	is.Equal(body, "Hello, Ada!\n") // the snapshot's greeting
	is.True(stale)                  // marked so
	is.True(time.Since(began) < time.Second)
}

// PROMPTS_PROJECT may be the project's slug, as for the prompts command:
// the service finds its id on the server, among several projects, and
// reads there, not in the snapshot's project of the same slug (whose id
// differs: each demo project is made afresh).
func TestServiceFindsTheProjectBySlug(t *testing.T) {
	is := is.New(t)
	store, url, projectID := server(t)
	other, err := store.CreateProject(t.Context(), prompts.NewProject{Name: "Other"})
	is.NoErr(err)
	op, err := store.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: other.ID, Key: promptKey, Name: "Greeting"})
	is.NoErr(err)
	_, err = store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: op.ID, Content: "Wrong project, {{name}}.", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	a, err := store.GetActiveByKey(t.Context(), projectID, promptKey, prompts.Production)
	is.NoErr(err)
	_, err = store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: a.ID, Content: "Hi, {{name}}.", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)

	s, base := startService(t, config{url: url, apiKey: readKey, project: "greeter"})
	code, body, stale := hello(t, base)
	is.Equal(code, 200)
	is.Equal(body, "Hi, Ada.\n") // the server's project greeter
	is.True(!stale)
	is.Equal(foundID(s), projectID) // found, and remembered

	_, base = startService(t, config{url: url, apiKey: readKey, project: "nope"})
	code, _, _ = hello(t, base)
	is.Equal(code, http.StatusServiceUnavailable) // no such project
}

// With the server away, a slug not yet found is the snapshot's project
// when the snapshot has that slug, at once; once the server is back, the
// slug is found there.
func TestServiceSlugWithoutTheServer(t *testing.T) {
	is := is.New(t)
	store, url, projectID := server(t)
	a, err := store.GetActiveByKey(t.Context(), projectID, promptKey, prompts.Production)
	is.NoErr(err)
	_, err = store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: a.ID, Content: "Back, {{name}}.", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	proxy := tcpproxy.Start(t, strings.TrimPrefix(url, "http://"))
	proxy.Cut(true) // the server is away

	_, base := startService(t, config{url: "http://" + proxy.Addr(), apiKey: readKey, project: "other"})
	code, _, _ := hello(t, base)
	is.Equal(code, http.StatusServiceUnavailable) // not the snapshot's project

	s, base := startService(t, config{url: "http://" + proxy.Addr(), apiKey: readKey, project: "greeter"})
	for range 3 {
		began := time.Now()
		code, body, stale := hello(t, base)
		is.Equal(code, 200)
		is.Equal(body, "Hello, Ada!\n") // the snapshot's greeting
		is.True(stale)
		is.True(time.Since(began) < time.Second)
	}

	proxy.Cut(false) // the server is back
	poll.For(t, 10*time.Second, "the service answers from the server once it is back", func() bool {
		_, body, _ := hello(t, base)
		return body == "Back, Ada.\n"
	})
	is.Equal(foundID(s), projectID)
}

// foundID returns the project's id as the service knows it.
func foundID(s *service) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projectID
}

// run serves until its context ends, and stops with an error naming the
// event stream when the server refuses its key.
func TestRun(t *testing.T) {
	is := is.New(t)
	_, url, projectID := server(t)
	logger := slog.New(slog.DiscardHandler)
	err := run(t.Context(), "127.0.0.1:0", config{url: url, apiKey: "not-a-key-0123456789", project: projectID}, logger)
	is.True(err != nil && strings.Contains(err.Error(), "event stream")) // a bad key stops the service

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", config{url: url, apiKey: readKey, project: projectID}, logger)
	}()
	cancel()
	is.NoErr(<-done) // a clean stop
}
