package client_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// The base URL is where the interface is mounted, a path included; keys
// with slashes are read by key, those with an empty, "." or ".." segment
// (which no path can hold: routers clean them away) too.
func TestTheInterfaceMountedUnderAPrefix(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}))
	mux := http.NewServeMux()
	mux.Handle("/prompts/", http.StripPrefix("/prompts", httpapi.New(memstore.New(), httpapi.WithAuthenticator(keys))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, base := range []string{srv.URL + "/prompts", srv.URL + "/prompts/"} {
		cl := newClient(t, base, adminKey)
		proj, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P " + base[len(base)-1:]})
		is.NoErr(err)
		for _, key := range []string{"support/greeting", "a//b", "a/./b", "x/../y"} {
			p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: key, Name: "N"})
			is.NoErr(err)
			a, err := cl.GetActiveByKey(ctx, proj.ID, key, prompts.Production)
			is.NoErr(err)        // read by its key
			is.Equal(a.ID, p.ID) // the prompt with that key
		}
	}
}

// An Idempotency-Key is sent as the caller's key, exactly: spaces at its
// ends and quotes around it make other keys than without.
func TestIdempotencyKeysAreTheCallers(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	cl := s.client(t)
	proj, _ := cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	p, _ := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	s.requests()
	for i, key := range []string{"k", " k", "k ", `"k"`, `"k`} {
		in := prompts.NewVersion{PromptID: p.ID, Content: "c", Idempotency: prompts.Idempotency{Key: key}}
		v, err := cl.CreateVersion(ctx, in)
		is.NoErr(err)
		is.True(!v.Replayed)           // a key of its own
		is.Equal(v.VersionNumber, i+1) // a version of its own
		v, err = cl.CreateVersion(ctx, in)
		is.NoErr(err)
		is.True(v.Replayed) // the same key again: a replay
	}
	var sent []string
	for _, r := range s.requests() {
		if r.method == http.MethodPost {
			sent = append(sent, r.header.Get("Idempotency-Key"))
		}
	}
	is.Equal(sent[0], "k") // as it is, when it can be
	for _, k := range sent {
		is.True(strings.Contains(k, "k"))
	}
}

// LastEventID finds the newest event of a long log in a few requests of
// one event each.
func TestLastEventIDOfALongLog(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	cl := s.client(t)
	for i := range 300 {
		_, err := s.store.CreateProject(ctx, prompts.NewProject{Name: "P", Slug: "p-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)})
		is.NoErr(err)
	}
	want, err := s.store.LastEventID(ctx)
	is.NoErr(err)
	s.requests()
	got, err := cl.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(got, want)
	n := len(s.requests())
	t.Logf("%d requests for a log of %d events", n, want)
	is.True(n <= 2*9+2) // about 2·log2(300)
}

// Requests carry the client's User-Agent, and its logger hears of its
// retries.
func TestUserAgentAndLogger(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	f := &failing{status: http.StatusBadGateway, suffix: "/projects"}
	s := newServerWith(t, setup{wrap: f.wrap})
	_, _, err := s.client(t).ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(s.requests()[0].header.Get("User-Agent"), client.DefaultUserAgent)

	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.set(1, "")
	cl := s.client(t, fast, client.WithUserAgent("my-service/2"), client.WithLogger(logger))
	_, _, err = cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err) // a 502 from a proxy is retried
	got := s.requests()
	is.Equal(len(got), 2)
	is.Equal(got[0].header.Get("User-Agent"), "my-service/2")
	is.True(strings.Contains(logs.String(), "client: retrying")) // logged
	is.True(!strings.Contains(logs.String(), adminKey))          // never the key
}
