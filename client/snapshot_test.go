package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/memstore"
)

// A snapshot written by the server's format reads back through the
// client, and a malformed one is refused with an error.
func TestParseSnapshot(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Snap"})
	is.NoErr(err)
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "G"})
	is.NoErr(err)
	_, err = store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "hello", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	snap, err := cache.TakeSnapshot(ctx, store, proj.ID)
	is.NoErr(err)
	data, err := json.Marshal(snap)
	is.NoErr(err)
	got, err := client.ParseSnapshot(data)
	is.NoErr(err)
	is.Equal(len(got.Prompts), 1)
	is.Equal(got.Prompts[0].ActiveIn(prompts.Production).ActiveVersion.Content, "hello")
	_, err = client.ParseSnapshot([]byte(`{"format":"nope"}`))
	is.True(err != nil) // refused
}

// Snapshot reads the server's snapshot of a project, as the server takes
// it; an unknown project is not found.
func TestSnapshot(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	srv := newServer(t)
	proj, err := srv.store.CreateProject(ctx, prompts.NewProject{Name: "Snap"})
	is.NoErr(err)
	p, err := srv.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "G"})
	is.NoErr(err)
	_, err = srv.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "hello", Environments: []prompts.Environment{prompts.Staging}})
	is.NoErr(err)

	snap, err := srv.client(t).Snapshot(ctx, proj.ID)
	is.NoErr(err)
	is.Equal(snap.Project.ID, proj.ID)
	is.Equal(len(snap.Prompts), 1)
	is.Equal(snap.Prompts[0].ActiveIn(prompts.Staging).ActiveVersion.Content, "hello")
	is.Equal(snap.Prompts[0].ActiveIn(prompts.Production).ActiveVersion, nil)

	_, err = srv.client(t).Snapshot(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	is.True(errors.Is(err, prompts.ErrNotFound)) // unknown project
	_, err = srv.client(t).Snapshot(ctx, "nope")
	is.True(errors.Is(err, prompts.ErrNotFound)) // not an id
}
