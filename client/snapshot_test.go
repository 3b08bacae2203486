package client_test

import (
	"context"
	"encoding/json"
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
