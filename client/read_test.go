package client_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// ReadActive with Fresh asks the server for an answer from its store
// (Cache-Control: no-cache), by id and by key; without, it does not.
func TestReadActiveFreshAsksForNoCache(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	writer := s.client(t)
	proj, err := writer.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := writer.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	reader := s.client(t) // no write of its own: no window of fresh reads
	for _, q := range []prompts.ActiveQuery{
		{PromptID: p.ID, Environment: prompts.Production},
		{ProjectID: proj.ID, Key: "k", Environment: prompts.Production},
	} {
		for _, fresh := range []bool{false, true} {
			q.Fresh = fresh
			_, _, _ = reader.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Staging}) // the memo filled
			s.requests()
			a, stale, err := reader.ReadActive(ctx, q)
			is.NoErr(err)
			is.True(!stale)
			is.Equal(a.ID, p.ID)
			seen := s.requests()
			is.Equal(len(seen), 1)                                             // one request
			is.Equal(seen[0].header.Get("Cache-Control") == "no-cache", fresh) // no-cache when fresh
		}
	}
}

// ReadActive with FailFast tries its request once where a read is
// retried: the caller has an answer to give.
func TestReadActiveFailFastIsTriedOnce(t *testing.T) {
	var down atomic.Bool
	var asked atomic.Int64
	s := newServerWith(t, setup{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				asked.Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	is := is.New(t)
	ctx := t.Context()
	c := s.client(t, fast)
	proj, err := c.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := c.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	down.Store(true)
	for _, q := range []prompts.ActiveQuery{
		{PromptID: p.ID, Environment: prompts.Production},
		{ProjectID: proj.ID, Key: "k", Environment: prompts.Production},
	} {
		for _, tc := range []struct {
			failFast bool
			attempts int64
		}{{false, 4}, {true, 1}} {
			q.FailFast = tc.failFast
			asked.Store(0)
			_, _, err := c.ReadActive(ctx, q)
			is.True(errors.Is(err, prompts.ErrUnavailable))
			is.Equal(asked.Load(), tc.attempts) // tried once with FailFast, else with the retries
		}
	}
}
