package api

import (
	"time"

	"github.com/promptkit/prompts"
)

// Webhook is a webhook as the reads answer it: events (empty: every
// type), project_id (its one project, or null for several or every
// project); the secret only in the answer to its create.
type Webhook struct {
	ID        string              `json:"id"`
	URL       string              `json:"url"`
	Events    []prompts.EventType `json:"events"`
	ProjectID *string             `json:"project_id"`
	Secret    string              `json:"secret,omitempty"`
	CreatedAt time.Time           `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromWebhook returns the JSON form of wh, without its secret.
func FromWebhook(wh prompts.Webhook) Webhook {
	out := Webhook{ID: wh.ID, URL: wh.URL, Events: wh.Events, CreatedAt: utc(wh.CreatedAt)}
	if out.Events == nil {
		out.Events = []prompts.EventType{}
	}
	if len(wh.ProjectIDs) == 1 {
		out.ProjectID = &wh.ProjectIDs[0]
	}
	return out
}

// FromNewWebhook returns the JSON form of wh as its create answers it:
// with the secret.
func FromNewWebhook(wh prompts.Webhook) Webhook {
	out := FromWebhook(wh)
	out.Secret = wh.Secret
	return out
}

// DeliveryAttempt is one attempt to deliver an event to a webhook:
// event_id a decimal string (as events' ids are), attempt 1 for the
// first, status_code null when no answer came, error null when one came,
// duration_ms to the microsecond.
type DeliveryAttempt struct {
	ID         string    `json:"id"`
	EventID    string    `json:"event_id"`
	Attempt    int       `json:"attempt"`
	At         time.Time `json:"at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	StatusCode *int      `json:"status_code"`
	Error      *string   `json:"error"`
	DurationMS float64   `json:"duration_ms"`
}

// FromDeliveryAttempt returns the JSON form of a.
func FromDeliveryAttempt(a prompts.DeliveryAttempt) DeliveryAttempt {
	out := DeliveryAttempt{
		ID: a.ID, EventID: eventID(a.EventID), Attempt: a.Attempt, At: utc(a.At),
		DurationMS: float64(a.Duration.Microseconds()) / 1000,
	}
	if a.StatusCode != 0 {
		code := a.StatusCode
		out.StatusCode = &code
	}
	if a.Error != "" {
		e := a.Error
		out.Error = &e
	}
	return out
}
