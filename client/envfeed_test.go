package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// An environment removed by another process: the event
// environment.deleted reaches a cache fed by the stream, which then
// refuses its reads of it instead of answering what it held.
func TestTheFeedDropsARemovedEnvironment(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	direct := s.client(t) // another process, writing
	proj, err := direct.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	_, err = direct.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: proj.ID, Name: "canary"})
	is.NoErr(err)

	cl := s.client(t)
	c := cache.New(cl)
	rec := newRecorder(c)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = cl.Feed().Run(fctx, rec) }()
	rec.waitFor(t, "recovered")
	_, err = c.GetActive(ctx, p.ID, "canary")
	is.NoErr(err)
	hits := c.Stats().Hits
	_, err = c.GetActive(ctx, p.ID, "canary")
	is.NoErr(err)
	is.Equal(c.Stats().Hits, hits+1) // cached

	is.NoErr(direct.DeleteEnvironment(ctx, proj.ID, "canary"))
	rec.waitFor(t, "invalidate ") // the project's event: no prompt
	_, err = c.GetActive(ctx, p.ID, "canary")
	is.True(errors.Is(err, prompts.ErrInvalid)) // refused, not the entry held
}
