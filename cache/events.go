package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/promptkit/prompts"
)

// The event log and the webhooks pass through to the store under the
// cache, uncached. Over a store that keeps none (that does not implement
// prompts.EventLog, or prompts.WebhookStore), these methods return an
// error for which errors.Is(err, errors.ErrUnsupported) holds.

var (
	_ prompts.EventLog     = (*Store)(nil)
	_ prompts.WebhookStore = (*Store)(nil)
)

var (
	errNoEventLog = fmt.Errorf("cache: the store under the cache keeps no event log (prompts.EventLog): %w", errors.ErrUnsupported)
	errNoWebhooks = fmt.Errorf("cache: the store under the cache keeps no webhooks (prompts.WebhookStore): %w", errors.ErrUnsupported)
)

func (s *Store) eventLog() (prompts.EventLog, error) {
	if l, ok := s.next.(prompts.EventLog); ok {
		return l, nil
	}
	return nil, errNoEventLog
}

func (s *Store) webhooks() (prompts.WebhookStore, error) {
	if w, ok := s.next.(prompts.WebhookStore); ok {
		return w, nil
	}
	return nil, errNoWebhooks
}

// ListEvents implements prompts.EventLog; it passes through.
func (s *Store) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	l, err := s.eventLog()
	if err != nil {
		return nil, false, err
	}
	return l.ListEvents(ctx, f)
}

// WaitEvents implements prompts.EventLog; it passes through.
func (s *Store) WaitEvents(ctx context.Context, after int64) error {
	l, err := s.eventLog()
	if err != nil {
		return err
	}
	return l.WaitEvents(ctx, after)
}

// LastEventID implements prompts.EventLog; it passes through.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	l, err := s.eventLog()
	if err != nil {
		return 0, err
	}
	return l.LastEventID(ctx)
}

// CreateWebhook implements prompts.WebhookStore; it passes through.
func (s *Store) CreateWebhook(ctx context.Context, in prompts.NewWebhook) (prompts.Webhook, error) {
	w, err := s.webhooks()
	if err != nil {
		return prompts.Webhook{}, err
	}
	return w.CreateWebhook(ctx, in)
}

// GetWebhook implements prompts.WebhookStore; it passes through.
func (s *Store) GetWebhook(ctx context.Context, id string) (prompts.Webhook, error) {
	w, err := s.webhooks()
	if err != nil {
		return prompts.Webhook{}, err
	}
	return w.GetWebhook(ctx, id)
}

// ListWebhooks implements prompts.WebhookStore; it passes through.
func (s *Store) ListWebhooks(ctx context.Context, p prompts.Page) ([]prompts.Webhook, bool, error) {
	w, err := s.webhooks()
	if err != nil {
		return nil, false, err
	}
	return w.ListWebhooks(ctx, p)
}

// DeleteWebhook implements prompts.WebhookStore; it passes through.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	w, err := s.webhooks()
	if err != nil {
		return err
	}
	return w.DeleteWebhook(ctx, id)
}

// ListDeliveryAttempts implements prompts.WebhookStore; it passes through.
func (s *Store) ListDeliveryAttempts(ctx context.Context, webhookID string, p prompts.Page) ([]prompts.DeliveryAttempt, bool, error) {
	w, err := s.webhooks()
	if err != nil {
		return nil, false, err
	}
	return w.ListDeliveryAttempts(ctx, webhookID, p)
}

// ClaimDeliveries implements prompts.WebhookStore; it passes through.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	w, err := s.webhooks()
	if err != nil {
		return nil, err
	}
	return w.ClaimDeliveries(ctx, now, max, lease)
}

// FinishDelivery implements prompts.WebhookStore; it passes through.
func (s *Store) FinishDelivery(ctx context.Context, id string, a prompts.DeliveryAttempt, retryAt time.Time) error {
	w, err := s.webhooks()
	if err != nil {
		return err
	}
	return w.FinishDelivery(ctx, id, a, retryAt)
}
