package cache_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// After a loss that lost nothing, Resumed keeps what the cache holds (hits
// again at once, no store read) while the invalidations the feed replays
// drop what changed; Recovered, after a loss that lost changes, drops
// everything.
func TestResumedKeepsWhatRecoveredDrops(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, h, p := fixture(t)
	q, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "q", Name: "Q"})
	is.NoErr(err)
	c := cache.New(h)
	c.Recovered()
	read := func(id string) string {
		t.Helper()
		a, err := c.GetActive(ctx, id, prompts.Production)
		is.NoErr(err)
		if a.ActiveVersion == nil {
			return ""
		}
		return a.ActiveVersion.Content
	}
	is.Equal(read(p.ID), "one")
	is.Equal(read(q.ID), "")
	is.Equal(c.Stats().Entries, int64(2))

	c.Lost()
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: q.ID, Content: "q1", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // a change while lost
	calls := h.calls.Load()
	is.Equal(read(p.ID), "one")                                                // while lost, the store answers
	is.Equal(h.calls.Load(), calls+1)                                          //
	c.Resumed()                                                                // the feed is back, having lost nothing
	c.Invalidate(prompts.Invalidation{PromptID: q.ID, ProjectID: q.ProjectID}) // and replays the change
	st := c.Stats()
	is.True(!st.Lost)
	is.Equal(st.Resumptions, int64(1))
	is.Equal(st.Recoveries, int64(1)) // not a recovery
	is.Equal(st.Entries, int64(1))    // p's entry kept; q's dropped by the replayed change
	calls = h.calls.Load()
	is.Equal(read(p.ID), "one")       // a hit
	is.Equal(h.calls.Load(), calls)   // no store read
	is.Equal(read(q.ID), "q1")        // the change made while lost
	is.Equal(h.calls.Load(), calls+1) // read anew

	c.Resumed() // not lost: nothing to do
	is.Equal(c.Stats().Resumptions, int64(1))

	c.Lost()
	c.Recovered() // changes were lost for good
	is.Equal(c.Stats().Entries, int64(0))

	fresh := cache.New(h) // never fed: a Resumed is a first recovery
	is.Equal(read(p.ID), "one")
	fresh.Resumed()
	st = fresh.Stats()
	is.True(!st.Lost)
	is.Equal(st.Recoveries, int64(1))
	is.Equal(st.Resumptions, int64(0))
}
