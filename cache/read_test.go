package cache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// A Fresh read is the store's answer, by id and by key, while other reads
// answer what the cache holds; the cache keeps nothing of it, and it is
// never stale: with the store down it fails where the cache would answer
// its last value.
func TestFreshReadsTheStoreUnderTheCache(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	greeting := list[0]
	d := &down{Store: ms}
	c := cache.New(d, cache.Standalone())
	byID := prompts.ActiveQuery{PromptID: greeting.ID, Environment: prompts.Production}
	byKey := prompts.ActiveQuery{ProjectID: proj.ID, Key: greeting.Key, Environment: prompts.Production}
	content := func(q prompts.ActiveQuery) string {
		a, stale, err := c.ReadActive(ctx, q)
		is.NoErr(err)
		is.True(!stale)
		return a.ActiveVersion.Content
	}
	is.Equal(content(byID), "Hi {{name}}")
	is.Equal(content(byKey), "Hi {{name}}")
	_, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: greeting.ID, Content: "Yo {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // another process's write, which the cache has not heard of
	reads := d.reads.Load()
	for _, q := range []prompts.ActiveQuery{byID, byKey} {
		is.Equal(content(q), "Hi {{name}}") // the cache's
		fresh := q
		fresh.Fresh = true
		is.Equal(content(fresh), "Yo {{name}}") // the store's
		is.Equal(content(q), "Hi {{name}}")     // the cache kept nothing of it
	}
	is.Equal(d.reads.Load(), reads+2) // the fresh reads, and only they, asked the store

	c.Lost()
	d.isDown.Store(true)
	a, stale, err := c.ReadActive(ctx, byID)
	is.NoErr(err)
	is.True(stale) // the last value known
	is.Equal(a.ActiveVersion.Content, "Hi {{name}}")
	byID.Fresh = true
	_, stale, err = c.ReadActive(ctx, byID)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // never stale
	is.True(!stale)
}

// A Shared read answers the value the cache holds, the same for every
// caller; any other read, a copy of it.
func TestSharedReadsShareTheCachesValue(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	c := cache.New(ms, cache.Standalone())
	for _, q := range []prompts.ActiveQuery{
		{PromptID: list[0].ID, Environment: prompts.Production},
		{ProjectID: proj.ID, Key: list[0].Key, Environment: prompts.Production},
	} {
		copied, _, err := c.ReadActive(ctx, q)
		is.NoErr(err)
		q.Shared = true
		one, _, err := c.ReadActive(ctx, q)
		is.NoErr(err)
		two, _, err := c.ReadActive(ctx, q)
		is.NoErr(err)
		is.Equal(one, copied)                           // the same answer
		is.True(one.ActiveVersion == two.ActiveVersion) // shared
		is.True(one.Description == two.Description)
		is.True(copied.ActiveVersion != one.ActiveVersion) // a copy
		is.True(copied.Description != one.Description)
	}
}

// A caller's FailFast goes down to the store the cache reads, with the
// query's prompt; an answer a cache under this one gave stale is stale.
func TestFailFastGoesDownAndStaleComesUp(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	d := &down{Store: ms}
	c := cache.New(d) // never fed: every read asks the store
	_, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: list[0].Key, Environment: prompts.Staging, FailFast: true})
	is.NoErr(err)
	is.True(!stale)
	is.Equal(d.fast.Load(), int64(1)) // asked to fail fast
	_, _, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[0].ID, Environment: prompts.Staging})
	is.NoErr(err)
	is.Equal(d.fast.Load(), int64(1)) // not asked: nothing to answer with

	under := cache.New(d, cache.WithFallback(embedded(t, ms, proj.ID)))
	over := cache.New(under)
	d.isDown.Store(true)
	a, stale, err := over.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[0].ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale) // the fallback's, from the cache under
	is.Equal(a.ActiveVersion.Content, "Hi {{name}}")

	// GetPrompt, which GetActive's prompt answers too, asks with FailFast
	// when the cache has an answer (a new cache, which has not found the
	// store down yet, asks).
	fast := d.fast.Load()
	got, err := cache.New(d, cache.WithFallback(embedded(t, ms, proj.ID))).GetPrompt(ctx, list[1].ID)
	is.NoErr(err) // the fallback's
	is.Equal(got.Key, list[1].Key)
	is.Equal(d.fast.Load(), fast+1) // asked to fail fast
}
