package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

// The event log and webhooks pass through to a store that keeps them
// (TestStore runs their conformance suites over the cache), and over one
// that keeps none, every method says errors.ErrUnsupported.
func TestEventsAndWebhooksPassThrough(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	c := cache.New(ms, cache.Standalone())
	p, err := c.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	last, err := c.LastEventID(ctx)
	is.NoErr(err)
	is.True(last > 0) // the project's event, through the cache
	events, _, err := c.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(events), 1)
	is.Equal(events[0].ProjectID, p.ID)
	is.NoErr(c.WaitEvents(ctx, 0)) // an event after 0 exists: at once
	wh, err := c.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	got, err := ms.GetWebhook(ctx, wh.ID)
	is.NoErr(err)
	is.Equal(got.URL, "https://example.com/hook") // in the store under the cache
}

// bare is a Store without the optional interfaces.
type bare struct{ prompts.Store }

func TestWithoutEventsOrWebhooksUnsupported(t *testing.T) {
	ctx := context.Background()
	c := cache.New(bare{memstore.New()}, cache.Standalone())
	for name, call := range map[string]func() error{
		"ListEvents":  func() error { _, _, err := c.ListEvents(ctx, prompts.EventFilter{}); return err },
		"WaitEvents":  func() error { return c.WaitEvents(ctx, 0) },
		"LastEventID": func() error { _, err := c.LastEventID(ctx); return err },
		"CreateWebhook": func() error {
			_, err := c.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com", Secret: prompts.NewWebhookSecret()})
			return err
		},
		"GetWebhook":           func() error { _, err := c.GetWebhook(ctx, "x"); return err },
		"ListWebhooks":         func() error { _, _, err := c.ListWebhooks(ctx, prompts.Page{}); return err },
		"DeleteWebhook":        func() error { return c.DeleteWebhook(ctx, "x") },
		"ListDeliveryAttempts": func() error { _, _, err := c.ListDeliveryAttempts(ctx, "x", prompts.Page{}); return err },
		"ClaimDeliveries":      func() error { _, err := c.ClaimDeliveries(ctx, time.Now(), 1, time.Second); return err },
		"FinishDelivery":       func() error { return c.FinishDelivery(ctx, "x", prompts.DeliveryAttempt{}, time.Time{}) },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			is.True(errors.Is(call(), errors.ErrUnsupported)) // unsupported, not a failure of the store
		})
	}
}
