package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// The webhooks, s.webhooks, and their outbox: s.deliveries, one per event
// and webhook that it matches, queued in the step that appends the event
// and removed when delivered or failed for good; and the attempts of each
// webhook, s.attempts, kept as long as events are.

// delivery is an event on its way to a webhook.
type delivery struct {
	id          string
	webhookID   string
	event       prompts.Event // shares its resource with the log's: never changed, copied out
	queuedAt    time.Time
	nextAt      time.Time // due then
	leasedUntil time.Time // claimed until then
	attempts    int
}

// queue queues a delivery of e to every webhook that matches it, due at
// once; s.mu is held.
func (s *Store) queue(e prompts.Event) {
	for _, wid := range s.webhookOrder {
		if !s.webhooks[wid].Matches(e) {
			continue
		}
		d := &delivery{id: prompts.NewIDAfter(e.CreatedAt, s.lastDelivery), webhookID: wid, event: e, queuedAt: e.CreatedAt, nextAt: e.CreatedAt}
		s.addDelivery(d)
		s.stepDelivery(d.id, true)
	}
}

// addDelivery keeps d, the newest delivery; s.mu is held.
func (s *Store) addDelivery(d *delivery) {
	s.deliveries[d.id] = d
	s.deliveryOrder = append(s.deliveryOrder, d.id)
	s.lastDelivery = d.id
}

// removeDelivery removes the delivery id; s.mu is held.
func (s *Store) removeDelivery(id string) {
	delete(s.deliveries, id)
	s.tidyDeliveryOrder()
}

// tidyDeliveryOrder drops the ids of removed deliveries from
// s.deliveryOrder once they are as many as those kept (until then they
// go when they reach the front, in expireEvents); s.mu is held.
func (s *Store) tidyDeliveryOrder() {
	if len(s.deliveryOrder) > 2*len(s.deliveries)+64 {
		s.deliveryOrder = slices.DeleteFunc(s.deliveryOrder, func(id string) bool { _, ok := s.deliveries[id]; return !ok })
	}
}

// change runs body, a write of the webhooks or of their outbox, under the
// write lock, as write does for the Store's own writes: the retention is
// applied after it, and with a file, its record (the entry body returns,
// with what the step changed besides) is on disk before change returns.
// now is the Store's clock.
func (s *Store) change(body func(now time.Time) (entry, error)) error {
	pos, err := s.changeLocked(body)
	if err != nil || s.journal == nil {
		return err
	}
	return s.journal.wait(pos)
}

func (s *Store) changeLocked(body func(now time.Time) (entry, error)) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return 0, err
	}
	s.step = step{}
	now := s.clock.Now()
	e, err := body(now)
	if err != nil {
		return 0, err
	}
	s.expireIdem(now)
	s.expireEvents(now)
	if s.journal == nil {
		return 0, nil
	}
	return s.journalEntry(e)
}

// CreateWebhook implements prompts.WebhookStore. An unknown project in
// in.ProjectIDs is ErrNotFound.
func (s *Store) CreateWebhook(ctx context.Context, in prompts.NewWebhook) (prompts.Webhook, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.Webhook{}, err
	}
	var w prompts.Webhook
	err := s.change(func(now time.Time) (entry, error) {
		for _, id := range in.ProjectIDs {
			if _, ok := s.projects[id]; !ok {
				return entry{}, prompts.NotFound("project")
			}
		}
		last := ""
		if n := len(s.webhookOrder); n > 0 {
			last = s.webhookOrder[n-1]
		}
		stored := copyWebhook(prompts.Webhook{
			ID:         prompts.NewIDAfter(now, last),
			URL:        in.URL,
			Events:     in.Events,
			ProjectIDs: in.ProjectIDs,
			Secret:     in.Secret,
			CreatedAt:  now,
		})
		s.addWebhook(&stored)
		w = copyWebhook(stored)
		return entry{Webhook: (*fileWebhook)(&stored)}, nil
	})
	if err != nil {
		return prompts.Webhook{}, err
	}
	return w, nil
}

// addWebhook keeps w; s.mu is held.
func (s *Store) addWebhook(w *prompts.Webhook) {
	if _, ok := s.webhooks[w.ID]; !ok {
		s.webhookOrder = insertSorted(s.webhookOrder, w.ID)
	}
	s.webhooks[w.ID] = w
}

// GetWebhook implements prompts.WebhookStore.
func (s *Store) GetWebhook(ctx context.Context, id string) (prompts.Webhook, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return prompts.Webhook{}, err
	}
	defer s.mu.RUnlock()
	w, ok := s.webhooks[id]
	if !ok {
		return prompts.Webhook{}, prompts.NotFound("webhook")
	}
	return copyWebhook(*w), nil
}

// ListWebhooks implements prompts.WebhookStore.
func (s *Store) ListWebhooks(ctx context.Context, p prompts.Page) ([]prompts.Webhook, bool, error) {
	if err := s.rlock(ctx, p.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	page, more := pageAfter(s.webhookOrder, p)
	out := make([]prompts.Webhook, len(page))
	for i, id := range page {
		out[i] = copyWebhook(*s.webhooks[id])
	}
	return out, more, nil
}

// DeleteWebhook implements prompts.WebhookStore. Its attempts go with it.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	if err := begin(ctx, nil); err != nil {
		return err
	}
	return s.change(func(time.Time) (entry, error) {
		if _, ok := s.webhooks[id]; !ok {
			return entry{}, prompts.NotFound("webhook")
		}
		s.deleteWebhook(id)
		return entry{Unhook: id}, nil
	})
}

// deleteWebhook removes the webhook, its deliveries and its attempts;
// s.mu is held.
func (s *Store) deleteWebhook(id string) {
	delete(s.webhooks, id)
	if i, ok := slices.BinarySearch(s.webhookOrder, id); ok {
		s.webhookOrder = slices.Delete(s.webhookOrder, i, i+1)
	}
	delete(s.attempts, id)
	for did, d := range s.deliveries {
		if d.webhookID == id {
			delete(s.deliveries, did)
		}
	}
	s.tidyDeliveryOrder()
}

// ListDeliveryAttempts implements prompts.WebhookStore.
func (s *Store) ListDeliveryAttempts(ctx context.Context, webhookID string, p prompts.Page) ([]prompts.DeliveryAttempt, bool, error) {
	if err := s.rlock(ctx, p.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	if _, ok := s.webhooks[webhookID]; !ok {
		return nil, false, prompts.NotFound("webhook")
	}
	as := s.attempts[webhookID]
	// Newest first: walk down from the newest attempt older than After.
	end := len(as)
	if p.After != "" {
		end, _ = slices.BinarySearchFunc(as, p.After, func(a prompts.DeliveryAttempt, id string) int { return strings.Compare(a.ID, id) })
	}
	n := min(end, p.Size())
	out := make([]prompts.DeliveryAttempt, 0, n)
	for i := end - 1; i >= end-n; i-- {
		out = append(out, as[i])
	}
	return out, end > n, nil
}

// ClaimDeliveries implements prompts.WebhookStore: each webhook in turn,
// the one with the fewest deliveries leased first. A lease is kept in
// memory only: with Open, a claim writes nothing to the file (the
// attempt's record, by FinishDelivery, says what the attempt changed),
// so a delivery claimed when the process stopped is due at once after a
// restart.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	if err := begin(ctx, prompts.ValidateClaim(now, max, lease)); err != nil {
		return nil, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	var out []prompts.Delivery
	err := s.change(func(clock time.Time) (entry, error) {
		s.expireEvents(clock) // nothing past the retention is handed out
		for _, d := range s.fairTurns(now, max) {
			d.leasedUntil = now.Add(lease) // in memory only
			out = append(out, prompts.Delivery{ID: d.id, Webhook: copyWebhook(*s.webhooks[d.webhookID]), Event: copyEvent(d.event), Attempts: d.attempts, QueuedAt: d.queuedAt})
		}
		return entry{}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fairTurns returns up to max deliveries due at now, in turns: the next
// one is always the oldest due of the webhook with the fewest deliveries
// leased (at now, or taken by this turn), the webhook whose oldest is
// the oldest among equals. So a webhook whose receiver hangs, holding
// many leases, never keeps another webhook's deliveries waiting behind
// its own. s.mu is held.
func (s *Store) fairTurns(now time.Time, max int) []*delivery {
	type hook struct {
		leased int
		due    []*delivery // oldest first
	}
	hooks := make(map[string]*hook)
	get := func(id string) *hook {
		h, ok := hooks[id]
		if !ok {
			h = &hook{}
			hooks[id] = h
		}
		return h
	}
	for _, id := range s.deliveryOrder {
		d, ok := s.deliveries[id]
		switch {
		case !ok:
		case d.leasedUntil.After(now):
			get(d.webhookID).leased++
		case !d.nextAt.After(now):
			if h := get(d.webhookID); len(h.due) < max {
				h.due = append(h.due, d)
			}
		}
	}
	var out []*delivery
	for len(out) < max {
		var next *hook
		for _, h := range hooks {
			if len(h.due) > 0 && (next == nil || h.leased < next.leased || h.leased == next.leased && h.due[0].id < next.due[0].id) {
				next = h
			}
		}
		if next == nil {
			break
		}
		out = append(out, next.due[0])
		next.due, next.leased = next.due[1:], next.leased+1
	}
	return out
}

// FinishDelivery implements prompts.WebhookStore.
func (s *Store) FinishDelivery(ctx context.Context, id string, a prompts.DeliveryAttempt, retryAt time.Time) error {
	if err := begin(ctx, a.Validate()); err != nil {
		return err
	}
	return s.change(func(now time.Time) (entry, error) {
		d, ok := s.deliveries[id]
		if !ok {
			return entry{}, prompts.NotFound("delivery")
		}
		d.attempts++
		as := s.attempts[d.webhookID]
		last := ""
		if len(as) > 0 {
			last = as[len(as)-1].ID
		}
		a.ID, a.WebhookID, a.EventID, a.Attempt = prompts.NewIDAfter(now, last), d.webhookID, d.event.ID, d.attempts
		if a.At.IsZero() {
			a.At = now
		}
		a.At = a.At.UTC().Truncate(time.Microsecond)
		s.attempts[d.webhookID] = append(as, a)
		if retryAt.IsZero() {
			s.removeDelivery(id)
		} else {
			d.nextAt, d.leasedUntil = retryAt.UTC().Truncate(time.Microsecond), time.Time{}
		}
		s.stepDelivery(id, false)
		return entry{Attempts: fileAttempts([]prompts.DeliveryAttempt{a})}, nil
	})
}

// copyWebhook returns w with slices of its own; no event types is nil.
func copyWebhook(w prompts.Webhook) prompts.Webhook {
	if len(w.Events) == 0 {
		w.Events = nil
	} else {
		w.Events = slices.Clone(w.Events)
	}
	if w.ProjectIDs != nil {
		w.ProjectIDs = append([]string{}, w.ProjectIDs...)
	}
	return w
}
