package cache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// An environment added to the project is read through the cache at once
// (the cache never keeps an answer that it is unknown), and one removed
// is refused at once: through the cache by its own removal, and from
// another process by the feed's invalidation that names it.
func TestCacheFollowsTheProjectsEnvironments(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	greeting := list[0]
	c := cache.New(ms, cache.Standalone())

	_, err := c.GetActive(ctx, greeting.ID, "canary")
	is.True(errors.Is(err, prompts.ErrInvalid)) // not yet an environment of the project
	_, err = ms.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: proj.ID, Name: "canary"})
	is.NoErr(err) // added by another process
	for range 2 { // the second read is a hit
		a, err := c.GetActive(ctx, greeting.ID, "canary")
		is.NoErr(err)
		is.True(a.ActiveVersion == nil) // nothing active there yet
		a, err = c.GetActiveByKey(ctx, proj.ID, greeting.Key, "canary")
		is.NoErr(err)
		is.True(a.ActiveVersion == nil)
	}

	// Removed through the cache: its entries of the environment go.
	is.NoErr(c.DeleteEnvironment(ctx, proj.ID, "canary"))
	_, err = c.GetActive(ctx, greeting.ID, "canary")
	is.True(errors.Is(err, prompts.ErrInvalid)) // refused at once
	_, err = c.GetActiveByKey(ctx, proj.ID, greeting.Key, "canary")
	is.True(errors.Is(err, prompts.ErrInvalid))

	// Removed by another process: the feed's invalidation names it.
	_, err = c.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: proj.ID, Name: "canary"})
	is.NoErr(err)
	_, err = c.GetActive(ctx, greeting.ID, "canary")
	is.NoErr(err) // cached again
	is.NoErr(ms.DeleteEnvironment(ctx, proj.ID, "canary"))
	_, err = c.GetActive(ctx, greeting.ID, "canary")
	is.NoErr(err) // the cache has not heard of it: its last answer
	c.Invalidate(prompts.Invalidation{ProjectID: proj.ID, Environment: "canary"})
	_, err = c.GetActive(ctx, greeting.ID, "canary")
	is.True(errors.Is(err, prompts.ErrInvalid)) // refused once told
	a, err := c.GetActive(ctx, greeting.ID, prompts.Production)
	is.NoErr(err) // the other environments answer as before
	is.Equal(a.ActiveVersion.Content, "Hi {{name}}")
}
