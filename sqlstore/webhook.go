package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/lib/pq"
	"github.com/oklog/ulid/v2"

	"github.com/promptkit/prompts"
)

// The webhooks (tables webhooks and webhook_routes) and their outbox
// (deliveries, delivery_attempts).

var _ prompts.WebhookStore = (*Store)(nil)

// CreateWebhook implements prompts.WebhookStore.
func (s *Store) CreateWebhook(ctx context.Context, in prompts.NewWebhook) (prompts.Webhook, error) {
	return bounded(ctx, func() (prompts.Webhook, error) { return s.createWebhook(ctx, in) })
}

func (s *Store) createWebhook(ctx context.Context, in prompts.NewWebhook) (prompts.Webhook, error) {
	if err := in.Validate(); err != nil {
		return prompts.Webhook{}, err
	}
	now := s.clock.Now()
	w := prompts.Webhook{ID: prompts.NewID(now), URL: in.URL, Secret: in.Secret, CreatedAt: now}
	if len(in.Events) > 0 {
		w.Events = append([]prompts.EventType{}, in.Events...)
	}
	if in.ProjectIDs != nil {
		w.ProjectIDs = append([]string{}, in.ProjectIDs...)
	}
	routes := w.Events
	if len(routes) == 0 {
		routes = prompts.EventTypes
	}
	var projects any // NULL: every project
	if w.ProjectIDs != nil {
		projects = pq.StringArray(w.ProjectIDs)
	}
	st, err := s.stmt(ctx, qCreateWebhook)
	if err != nil {
		return prompts.Webhook{}, s.fail(ctx, err)
	}
	var n int
	err = st.QueryRowContext(ctx, w.ID, w.URL, eventTypes(w.Events), projects, w.Secret, w.CreatedAt, eventTypes(routes)).Scan(&n)
	if err != nil {
		return prompts.Webhook{}, s.fail(ctx, err)
	}
	if n == 0 {
		return prompts.Webhook{}, prompts.NotFound("project")
	}
	return w, nil
}

// eventTypes returns ts as a text[] parameter, never NULL.
func eventTypes(ts []prompts.EventType) pq.StringArray {
	out := make(pq.StringArray, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// GetWebhook implements prompts.WebhookStore.
func (s *Store) GetWebhook(ctx context.Context, id string) (prompts.Webhook, error) {
	return bounded(ctx, func() (prompts.Webhook, error) { return s.getWebhook(ctx, id) })
}

func (s *Store) getWebhook(ctx context.Context, id string) (prompts.Webhook, error) {
	if !prompts.ValidID(id) {
		return prompts.Webhook{}, prompts.NotFound("webhook")
	}
	st, err := s.stmt(ctx, qGetWebhook)
	if err != nil {
		return prompts.Webhook{}, s.fail(ctx, err)
	}
	w, err := scanWebhook(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.Webhook{}, prompts.NotFound("webhook")
	}
	if err != nil {
		return prompts.Webhook{}, s.fail(ctx, err)
	}
	return w, nil
}

// ListWebhooks implements prompts.WebhookStore. It pages on the primary
// key.
func (s *Store) ListWebhooks(ctx context.Context, p prompts.Page) ([]prompts.Webhook, bool, error) {
	return boundedPage(ctx, func() ([]prompts.Webhook, bool, error) {
		if err := p.Validate(); err != nil {
			return nil, false, err
		}
		n := p.Size()
		return listPage(ctx, s, qListWebhooks, []any{p.After, n + 1}, n, scanWebhook)
	})
}

// DeleteWebhook implements prompts.WebhookStore. Its queued deliveries and
// its attempts go with it.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.deleteWebhook(ctx, id) })
	return err
}

func (s *Store) deleteWebhook(ctx context.Context, id string) error {
	if !prompts.ValidID(id) {
		return prompts.NotFound("webhook")
	}
	st, err := s.stmt(ctx, qDeleteWebhook)
	if err != nil {
		return s.fail(ctx, err)
	}
	var n int
	if err := st.QueryRowContext(ctx, id).Scan(&n); err != nil {
		return s.fail(ctx, err)
	}
	if n == 0 {
		return prompts.NotFound("webhook")
	}
	return nil
}

// webhookRow receives the columns webhookCols.
type webhookRow struct {
	w                prompts.Webhook
	events, projects pq.StringArray
}

func (r *webhookRow) dest() []any {
	return []any{&r.w.ID, &r.w.URL, &r.events, &r.projects, &r.w.Secret, &r.w.CreatedAt}
}

// webhook returns the webhook; no event types is nil.
func (r *webhookRow) webhook() prompts.Webhook {
	w := r.w
	for _, t := range r.events {
		w.Events = append(w.Events, prompts.EventType(t))
	}
	if r.projects != nil {
		w.ProjectIDs = append([]string{}, r.projects...)
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return w
}

// scanWebhook scans the columns webhookCols.
func scanWebhook(sc scanner) (prompts.Webhook, error) {
	var r webhookRow
	if err := sc.Scan(r.dest()...); err != nil {
		return prompts.Webhook{}, err
	}
	return r.webhook(), nil
}

// ListDeliveryAttempts implements prompts.WebhookStore. It reads the index
// (webhook_id, id) backwards from the page's position.
func (s *Store) ListDeliveryAttempts(ctx context.Context, webhookID string, p prompts.Page) ([]prompts.DeliveryAttempt, bool, error) {
	return boundedPage(ctx, func() ([]prompts.DeliveryAttempt, bool, error) { return s.listDeliveryAttempts(ctx, webhookID, p) })
}

func (s *Store) listDeliveryAttempts(ctx context.Context, webhookID string, p prompts.Page) ([]prompts.DeliveryAttempt, bool, error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	if !prompts.ValidID(webhookID) {
		return nil, false, prompts.NotFound("webhook")
	}
	before := p.After
	if before == "" {
		before = afterAll
	}
	n := p.Size()
	st, err := s.stmt(ctx, qListDeliveryAttempts)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, webhookID, before, n+1)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	defer rows.Close()
	found := false
	out := make([]prompts.DeliveryAttempt, 0, min(n+1, 16))
	for rows.Next() {
		found = true
		var (
			id, errText     sql.NullString
			event, duration sql.NullInt64
			attempt, status sql.NullInt64
			at              sql.NullTime
		)
		if err := rows.Scan(&id, &event, &attempt, &at, &status, &errText, &duration); err != nil {
			return nil, false, s.fail(ctx, err)
		}
		if !id.Valid {
			continue // the webhook, without attempts on this page
		}
		out = append(out, prompts.DeliveryAttempt{
			ID:         id.String,
			WebhookID:  webhookID,
			EventID:    event.Int64,
			Attempt:    int(attempt.Int64),
			At:         at.Time.UTC(),
			StatusCode: int(status.Int64),
			Error:      errText.String,
			Duration:   time.Duration(duration.Int64),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if !found {
		return nil, false, prompts.NotFound("webhook")
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

// ClaimDeliveries implements prompts.WebhookStore: the webhooks in
// turn, the one with the fewest deliveries leased first, and of each
// webhook those due the longest first. Claims in any number of processes skip the deliveries another
// claim holds (FOR UPDATE SKIP LOCKED) and find those it leased no longer
// due. A delivery queued longer ago than the event retention, by the
// Store's clock, is never handed out.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	return bounded(ctx, func() ([]prompts.Delivery, error) { return s.claimDeliveries(ctx, now, max, lease) })
}

func (s *Store) claimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	if err := prompts.ValidateClaim(now, max, lease); err != nil {
		return nil, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	st, err := s.stmt(ctx, qClaimDeliveries)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, now, max, now.Add(lease), s.cutoff())
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	var out []prompts.Delivery
	for rows.Next() {
		var (
			n int64
			d prompts.Delivery
			w webhookRow
			e eventRow
		)
		dest := append([]any{&n, &d.Attempts, &d.QueuedAt}, w.dest()...)
		if err := rows.Scan(append(dest, e.dest()...)...); err != nil {
			return nil, s.fail(ctx, err)
		}
		if d.Event, err = e.event(); err != nil {
			return nil, prompts.Internal(err)
		}
		d.Webhook = w.webhook()
		d.QueuedAt = d.QueuedAt.UTC()
		d.ID = deliveryID(n, d.QueuedAt)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	return out, nil
}

// FinishDelivery implements prompts.WebhookStore. It also removes a few
// attempts past the event retention.
func (s *Store) FinishDelivery(ctx context.Context, id string, a prompts.DeliveryAttempt, retryAt time.Time) error {
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.finishDelivery(ctx, id, a, retryAt) })
	return err
}

func (s *Store) finishDelivery(ctx context.Context, id string, a prompts.DeliveryAttempt, retryAt time.Time) error {
	if err := a.Validate(); err != nil {
		return err
	}
	n, ok := deliveryNumber(id)
	if !ok {
		return prompts.NotFound("delivery")
	}
	now := s.clock.Now()
	if a.At.IsZero() {
		a.At = now
	}
	var retry any // NULL: the delivery ends
	if !retryAt.IsZero() {
		retry = retryAt.UTC().Truncate(time.Microsecond)
	}
	st, err := s.stmt(ctx, qFinishDelivery)
	if err != nil {
		return s.fail(ctx, err)
	}
	var recorded int
	err = st.QueryRowContext(ctx, n, prompts.NewID(now), a.At.UTC().Truncate(time.Microsecond), a.StatusCode, a.Error,
		int64(a.Duration), retry, firstIDOf(s.cutoff())).Scan(&recorded)
	if err != nil {
		return s.fail(ctx, err)
	}
	if recorded == 0 {
		return prompts.NotFound("delivery")
	}
	return nil
}

// deliveryID is the id of the delivery numbered n (its row's), queued at
// t: a ULID of t's time whose last 8 bytes are n.
func deliveryID(n int64, t time.Time) string {
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(t)) // fails only after the year 10889
	binary.BigEndian.PutUint64(u[8:], uint64(n))
	return u.String()
}

// deliveryNumber returns the number deliveryID put in id, or false when
// id is not such an id.
func deliveryNumber(id string) (int64, bool) {
	if !prompts.ValidID(id) {
		return 0, false
	}
	u, err := ulid.ParseStrict(id)
	if err != nil || u[6] != 0 || u[7] != 0 {
		return 0, false
	}
	n := binary.BigEndian.Uint64(u[8:])
	if n == 0 || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// firstIDOf returns the smallest ULID of t's millisecond: the ids made
// from a clock before t sort below it.
func firstIDOf(t time.Time) string {
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(t))
	return u.String()
}
