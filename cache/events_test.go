package cache_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

// The event log and webhooks are the store's: a cache claims neither,
// and prompts.EventLogOf and prompts.WebhookStoreOf find those of the
// store under it, which writes through the cache reach (TestStore runs
// their conformance suites so); over a store that keeps none, none.
func TestEventsAndWebhooksAreTheStores(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	c := cache.New(ms, cache.Standalone())
	var s prompts.Store = c
	_, ok := s.(prompts.EventLog)
	is.True(!ok) // the cache claims no event log
	_, ok = s.(prompts.WebhookStore)
	is.True(!ok) // nor webhooks
	is.True(c.Unwrap() == prompts.Store(ms))

	log, ok := prompts.EventLogOf(c)
	is.True(ok)
	is.True(log == prompts.EventLog(ms)) // the store's
	hooks, ok := prompts.WebhookStoreOf(c)
	is.True(ok)
	is.True(hooks == prompts.WebhookStore(ms))
	p, err := c.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	events, _, err := log.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(events), 1)
	is.Equal(events[0].ProjectID, p.ID) // the write through the cache

	for _, under := range []prompts.Store{bare{ms}, cache.New(bare{ms})} {
		c := cache.New(under, cache.Standalone())
		_, ok := prompts.EventLogOf(c)
		is.True(!ok) // a store without an event log has none under a cache
		_, ok = prompts.WebhookStoreOf(c)
		is.True(!ok) // nor webhooks
	}
}

// bare is a Store without the optional interfaces.
type bare struct{ prompts.Store }
