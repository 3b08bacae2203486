package readonly_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/internal/readonly"
	"github.com/promptkit/prompts/memstore"
)

// Every ActiveReader of the module answers what its GetActive and
// GetActiveByKey answer, errors included, without a copy: two reads of
// the same share the version the store holds, where GetActive hands out a
// copy each time.
func TestSharedReadsAnswerAsTheStore(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	mem := memstore.New()
	proj, err := mem.CreateProject(ctx, prompts.NewProject{Name: "Shared"})
	is.NoErr(err)
	desc := "greets"
	a, err := mem.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "a", Name: "A", Description: &desc})
	is.NoErr(err)
	summary := "first"
	_, err = mem.CreateVersion(ctx, prompts.NewVersion{PromptID: a.ID, Content: "Hello {{name}}", Metadata: prompts.Metadata(`{"model":"m"}`),
		ChangeSummary: &summary, Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	b, err := mem.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "b", Name: "B"}) // nothing active
	is.NoErr(err)

	type store interface {
		prompts.Store
		readonly.ActiveReader
	}
	for name, s := range map[string]store{"memstore": mem, "cache": cache.New(mem, cache.Standalone())} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			for _, id := range []string{a.ID, b.ID, "01M00000000000000000000000"} {
				for _, env := range []prompts.Environment{prompts.Production, prompts.Staging, "qa"} {
					want, wantErr := s.GetActive(ctx, id, env)
					got, stale, err := s.GetActiveShared(ctx, readonly.Token{}, id, env)
					is.Equal(prompts.ErrorCode(err), prompts.ErrorCode(wantErr))
					is.Equal(got, want)
					is.True(!stale)
				}
			}
			for _, project := range []string{proj.ID, "01M00000000000000000000000"} {
				for _, key := range []string{"a", "b", "c"} {
					want, wantErr := s.GetActiveByKey(ctx, project, key, prompts.Production)
					got, stale, err := s.GetActiveByKeyShared(ctx, readonly.Token{}, project, key, prompts.Production)
					is.Equal(prompts.ErrorCode(err), prompts.ErrorCode(wantErr))
					is.Equal(got, want)
					is.True(!stale)
				}
			}
			one, _, err := s.GetActiveShared(ctx, readonly.Token{}, a.ID, prompts.Production)
			is.NoErr(err)
			again, _, err := s.GetActiveShared(ctx, readonly.Token{}, a.ID, prompts.Production)
			is.NoErr(err)
			is.True(one.ActiveVersion == again.ActiveVersion) // shared, not copied
			byKey, _, err := s.GetActiveByKeyShared(ctx, readonly.Token{}, proj.ID, "a", prompts.Production)
			is.NoErr(err)
			byKeyAgain, _, err := s.GetActiveByKeyShared(ctx, readonly.Token{}, proj.ID, "a", prompts.Production)
			is.NoErr(err)
			is.True(byKey.ActiveVersion == byKeyAgain.ActiveVersion)
			c1, err := s.GetActive(ctx, a.ID, prompts.Production)
			is.NoErr(err)
			c2, err := s.GetActive(ctx, a.ID, prompts.Production)
			is.NoErr(err)
			is.True(c1.ActiveVersion != c2.ActiveVersion && c1.ActiveVersion != one.ActiveVersion) // copies
		})
	}
}

// hiding embeds a store and answers GetActive its own way.
type hiding struct {
	*memstore.Store
	note []string // not comparable
}

func (hiding) GetActive(context.Context, string, prompts.Environment) (prompts.ActivePrompt, error) {
	return prompts.ActivePrompt{}, prompts.NotFound("prompt")
}

// Only a store that has the shared reads itself is read through them: a
// type that embeds one, and so has its methods too, is not.
func TestOfTellsEmbeddingApart(t *testing.T) {
	is := is.New(t)
	mem := memstore.New()
	c := cache.New(mem, cache.Standalone())
	for _, s := range []prompts.Store{mem, c} {
		r, ok := readonly.Of(s)
		is.True(ok)
		is.True(r != nil)
	}
	for _, s := range []prompts.Store{hiding{Store: mem, note: []string{"x"}}, &hiding{Store: mem}, struct{ *cache.Store }{c}, nil} {
		_, ok := readonly.Of(s)
		is.True(!ok)
	}
}
