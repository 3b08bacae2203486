package prompts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"strings"
	"time"
)

// Webhook is a subscription to the event log: every event it matches is
// delivered to URL as a POST signed with Secret (see package webhook).
type Webhook struct {
	ID         string
	URL        string
	Events     []EventType // empty: every type
	ProjectIDs []string    // nil: every project
	// Secret is "whsec_" and the base64 of 32 random bytes. The Store
	// keeps it as it is, since signing needs it; the HTTP interface shows
	// it in the answer to the create only.
	Secret    string
	CreatedAt time.Time
}

// Matches reports whether the webhook subscribes to e.
func (w Webhook) Matches(e Event) bool {
	if len(w.Events) > 0 {
		found := false
		for _, t := range w.Events {
			found = found || t == e.Type
		}
		if !found {
			return false
		}
	}
	return EventFilter{ProjectIDs: w.ProjectIDs}.Keeps(e.ProjectID)
}

// WebhookSecretPrefix starts every webhook secret.
const WebhookSecretPrefix = "whsec_"

// NewWebhookSecret returns a new secret: WebhookSecretPrefix and the
// base64 of 32 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// MaxWebhookURL is the longest webhook URL, in bytes.
const MaxWebhookURL = 2048

// NewWebhook is the input of CreateWebhook.
type NewWebhook struct {
	URL        string
	Events     []EventType // empty: every type
	ProjectIDs []string    // nil: every project
	Secret     string      // NewWebhookSecret's
}

// Validate checks the URL (absolute http or https, a host, no user
// information, at most MaxWebhookURL bytes), the event types (known, each
// once), the project ids (well-formed) and the secret. Whether the host
// is one the server may reach is the HTTP interface's and the
// dispatcher's to check: it needs the network.
func (in NewWebhook) Validate() error {
	var fe fieldErrors
	switch u, err := url.Parse(in.URL); {
	case in.URL == "":
		fe.add("url", "is required")
	case len(in.URL) > MaxWebhookURL:
		fe.add("url", "must be at most 2048 bytes")
	case err != nil || !u.IsAbs() || u.Opaque != "":
		fe.add("url", "must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		fe.add("url", "must be http or https")
	case u.Hostname() == "":
		fe.add("url", "must name a host")
	case u.User != nil:
		fe.add("url", "must not hold a user name or password")
	case u.Fragment != "" || strings.Contains(in.URL, "#"):
		fe.add("url", "must not hold a fragment")
	}
	seen := map[EventType]bool{}
	for _, t := range in.Events {
		switch {
		case !t.Valid():
			fe.add("events", "unknown event type "+strings.ToValidUTF8(string(t), "?")+"; want project.created, prompt.created, prompt.updated, version.created, deployment.created, key.created or key.revoked")
		case seen[t]:
			fe.add("events", "event type "+string(t)+" is given twice")
		}
		seen[t] = true
	}
	for _, id := range in.ProjectIDs {
		if !ValidID(id) {
			fe.add("project_ids", "must be well-formed ids")
			break
		}
	}
	if b, ok := strings.CutPrefix(in.Secret, WebhookSecretPrefix); !ok {
		fe.add("secret", "must start with "+WebhookSecretPrefix)
	} else if raw, err := base64.StdEncoding.DecodeString(b); err != nil || len(raw) < 24 || len(raw) > 64 {
		fe.add("secret", "must be "+WebhookSecretPrefix+" and the base64 of 24 to 64 bytes")
	}
	return fe.err()
}

// Delivery is an event on its way to a webhook, as ClaimDeliveries hands
// it to a dispatcher.
type Delivery struct {
	ID       string // ULID
	Webhook  Webhook
	Event    Event
	Attempts int       // the attempts made so far
	QueuedAt time.Time // when the event was appended: retries stop a day after
}

// DeliveryAttempt is the record of one attempt to deliver an event.
type DeliveryAttempt struct {
	ID         string // ULID; the attempts of a webhook grow with time
	WebhookID  string
	EventID    int64
	Attempt    int // 1 for the first
	At         time.Time
	StatusCode int    // 0 when no answer came
	Error      string // why it failed, when no answer came
	Duration   time.Duration
}

// Validate checks what the dispatcher reports of an attempt: a status code
// of 0 (no answer) or 100 to 599, and a duration not below 0.
func (a DeliveryAttempt) Validate() error {
	var fe fieldErrors
	if a.StatusCode != 0 && (a.StatusCode < 100 || a.StatusCode > 599) {
		fe.add("status_code", "must be an HTTP status code (100 to 599), or 0 when no answer came")
	}
	if a.Duration < 0 {
		fe.add("duration", "must not be negative")
	}
	return fe.err()
}

// ValidateClaim checks the arguments of WebhookStore.ClaimDeliveries: a
// time, a max from 1 to MaxLimit, and a positive lease.
func ValidateClaim(now time.Time, max int, lease time.Duration) error {
	var fe fieldErrors
	if now.IsZero() {
		fe.add("now", "is required")
	}
	if max < 1 || max > MaxLimit {
		fe.add("max", "must be between 1 and 1000")
	}
	if lease <= 0 {
		fe.add("lease", "must be positive")
	}
	return fe.err()
}

// WebhookStore is what a Store that keeps webhooks and their deliveries
// offers besides Store; memstore's and sqlstore's do. Find it with
// WebhookStoreOf, which also finds it under a wrapper that passes it
// through (a cache).
//
// In the same atomic step as each event, the Store queues a Delivery to
// every webhook that matches it, due at once. Queued deliveries outlive a
// restart.
type WebhookStore interface {
	// CreateWebhook stores a new webhook. An unknown project in
	// in.ProjectIDs is ErrNotFound.
	CreateWebhook(ctx context.Context, in NewWebhook) (Webhook, error)
	// GetWebhook returns the webhook with this id, or ErrNotFound.
	GetWebhook(ctx context.Context, id string) (Webhook, error)
	// ListWebhooks returns one page of the webhooks, oldest first.
	ListWebhooks(ctx context.Context, p Page) (page []Webhook, more bool, err error)
	// DeleteWebhook removes the webhook and its queued deliveries; its
	// attempts may be kept a while. An unknown id is ErrNotFound.
	DeleteWebhook(ctx context.Context, id string) error
	// ListDeliveryAttempts returns one page of a webhook's attempts,
	// newest first (After moves to older ones). An unknown webhook is
	// ErrNotFound.
	ListDeliveryAttempts(ctx context.Context, webhookID string, p Page) (page []DeliveryAttempt, more bool, err error)

	// ClaimDeliveries returns up to max deliveries due at now and leases
	// them to the caller until now+lease: no other claim, in any
	// process, returns them before then. It takes the webhooks in turn,
	// the one with the fewest deliveries leased at now (those this claim
	// takes included) first, and the deliveries of each webhook oldest
	// first, so that a webhook whose receiver never answers, holding
	// leases until its attempts time out, cannot keep another webhook's
	// deliveries waiting behind its own. Arguments that ValidateClaim
	// refuses are ErrInvalid.
	ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]Delivery, error)
	// FinishDelivery records attempt a of the claimed delivery id. With
	// a zero retryAt the delivery ends (delivered when a.StatusCode is
	// 2xx, else failed for good); otherwise it is due again at retryAt.
	// The Store sets a's ID (a new ULID), WebhookID, EventID and Attempt
	// (Attempts+1), and At when it is zero; a.Validate refusing it is
	// ErrInvalid. A delivery that ended already, or whose webhook was
	// deleted meanwhile, is ErrNotFound.
	FinishDelivery(ctx context.Context, id string, a DeliveryAttempt, retryAt time.Time) error
}
