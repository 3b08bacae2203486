package prompts_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// remembering is a third party's ActiveReader: it answers from the store
// it wraps and records the queries it was asked.
type remembering struct {
	prompts.Store
	asked []prompts.ActiveQuery
}

func (r *remembering) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	r.asked = append(r.asked, q)
	a, _, err := prompts.ReadActive(ctx, r.Store, q)
	return a, q.FailFast, err // stale when asked to fail fast, so the test can tell
}

// ReadActive asks an ActiveReader with the query as given, and reads any
// other store with GetActive or GetActiveByKey, never stale.
func TestReadActive(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	mem := memstore.New()
	proj, err := mem.CreateProject(ctx, prompts.NewProject{Name: "Read"})
	is.NoErr(err)
	p, err := mem.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "a", Name: "A"})
	is.NoErr(err)
	_, err = mem.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi", Environments: []prompts.Environment{prompts.Staging}})
	is.NoErr(err)

	plain := struct{ prompts.Store }{mem} // no ReadActive
	for _, q := range []prompts.ActiveQuery{
		{PromptID: p.ID, Environment: prompts.Staging, Shared: true, Fresh: true, FailFast: true},
		{ProjectID: proj.ID, Key: "a", Environment: prompts.Staging},
		{PromptID: p.ID, ProjectID: "ignored", Key: "ignored", Environment: prompts.Staging},
	} {
		a, stale, err := prompts.ReadActive(ctx, plain, q)
		is.NoErr(err)
		is.True(!stale)                          // a plain store is never stale
		is.Equal(a.ID, p.ID)                     // by id, else by key
		is.Equal(a.ActiveVersion.Content, "Hi")  // in the environment asked
		is.Equal(a.Environment, prompts.Staging) // q.Environment
	}
	for _, q := range []prompts.ActiveQuery{
		{PromptID: "01M00000000000000000000000", Environment: prompts.Staging},
		{ProjectID: proj.ID, Key: "b", Environment: prompts.Staging},
		{PromptID: p.ID, Environment: "qa"},
	} {
		want, wantErr := mem.GetActive(ctx, q.PromptID, q.Environment)
		if q.PromptID == "" {
			want, wantErr = mem.GetActiveByKey(ctx, q.ProjectID, q.Key, q.Environment)
		}
		_, _, err := prompts.ReadActive(ctx, plain, q)
		is.True(wantErr != nil)
		is.Equal(prompts.ErrorCode(err), prompts.ErrorCode(wantErr)) // the store's error
		is.Equal(want, prompts.ActivePrompt{})
	}

	r := &remembering{Store: mem}
	q := prompts.ActiveQuery{ProjectID: proj.ID, Key: "a", Environment: prompts.Staging, FailFast: true}
	a, stale, err := prompts.ReadActive(ctx, r, q)
	is.NoErr(err)
	is.True(stale) // the reader's own answer
	is.Equal(a.ID, p.ID)
	is.Equal(r.asked, []prompts.ActiveQuery{q}) // asked once, with the query as given
}

// An application reads a prompt by key, sharing the store's value (it
// changes nothing of it); through a cache, stale would say that the answer
// is the last one known while the store is away.
func ExampleReadActive() {
	ctx := context.Background()
	store := memstore.New()
	proj, _ := store.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	p, _ := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Greeting"})
	_, _ = store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}})

	a, stale, err := prompts.ReadActive(ctx, store, prompts.ActiveQuery{
		ProjectID:   proj.ID,
		Key:         "greeting",
		Environment: prompts.Production,
		Shared:      true, // read-only use: no copy needed
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.ActiveVersion.Content, stale)
	// Output: Hi {{name}} false
}
