package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/internal/wire"
	"github.com/promptkit/prompts/webhook"
)

// Webhooks: every route needs RoleAdmin, reads included (a URL may hold a
// token). A key restricted to some projects sees the webhooks whose
// projects are all among its own, and creates webhooks for its projects
// only.

// resolveTimeout bounds the resolution of a new webhook's host.
const resolveTimeout = 5 * time.Second

// noHooks answers 501 for a store that keeps no webhooks, and reports
// whether it did.
func (h *Handler) noHooks(w http.ResponseWriter) bool {
	if h.hooks == nil {
		h.problem(w, kindNotImplemented, "this server's store keeps no webhooks", nil)
		return true
	}
	return false
}

// createWebhook is POST /webhooks.
func (h *Handler) createWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noHooks(w) {
			return
		}
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.NewWebhook
		if !h.decode(w, body, &req) {
			return
		}
		in := prompts.NewWebhook{URL: req.URL, Events: req.Events, Secret: prompts.NewWebhookSecret()}
		projectID := req.ProjectID
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		one := projectID.Set && !projectID.Null
		if !one {
			// Every project the key may see: nil for a key of every
			// project, else its own, which must not be none (a webhook
			// of no project would receive nothing).
			in.ProjectIDs = a.visible()
			if in.ProjectIDs != nil && len(in.ProjectIDs) == 0 {
				h.invalid(w, []prompts.FieldError{{Field: "project_id", Detail: "is required: this key may see no project"}})
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), resolveTimeout)
		err := webhook.CheckURL(ctx, in.URL, h.allowPrivate)
		cancel()
		switch {
		case prompts.ErrorCode(err) == prompts.CodeInvalid: // a field rule
			h.invalidInput(w, r, err)
			return
		case err != nil: // DNS does not answer: 503
			h.storeError(w, r, err)
			return
		}
		if one {
			if !prompts.ValidID(projectID.Value) || !a.Allows(projectID.Value) {
				h.notFoundAs(w, "project")
				return
			}
			in.ProjectIDs = []string{projectID.Value}
		}
		wh, err := h.hooks.CreateWebhook(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		w.Header()["Location"] = []string{"webhooks/" + wh.ID}
		writeValue(h, w, wh, appendNewWebhook)
	}
}

// listWebhooks is GET /webhooks?limit=&after=: the webhooks the key may
// see, oldest first.
func (h *Handler) listWebhooks() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noHooks(w) {
			return
		}
		var q queryFields
		p := q.page(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		if a.AllProjects {
			list, more, err := h.hooks.ListWebhooks(r.Context(), p)
			writeList(h, w, r, list, more, err, appendWebhook, webhookID)
			return
		}
		// Read on until the page is full of webhooks the key may see.
		var out []prompts.Webhook
		more := false
		for {
			list, m, err := h.hooks.ListWebhooks(r.Context(), p)
			if err != nil {
				h.storeError(w, r, err)
				return
			}
			for i, wh := range list {
				if !canSee(a, wh) {
					continue
				}
				out = append(out, wh)
				if len(out) == p.Size() {
					more = m || i < len(list)-1
					break
				}
			}
			if !m || len(out) == p.Size() || len(list) == 0 {
				break
			}
			p.After = list[len(list)-1].ID
		}
		writeList(h, w, r, out, more, nil, appendWebhook, webhookID)
	}
}

// readWebhook is GET /webhooks/{webhook_id}.
func (h *Handler) readWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noHooks(w) {
			return
		}
		wh, ok := h.findWebhook(w, r, a, r.PathValue("webhook_id"))
		if !ok {
			return
		}
		writeValue(h, w, wh, appendWebhook)
	}
}

// deleteWebhook is DELETE /webhooks/{webhook_id}: the webhook and its
// queued deliveries go.
func (h *Handler) deleteWebhook() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noHooks(w) {
			return
		}
		id := r.PathValue("webhook_id")
		if !a.AllProjects {
			if _, ok := h.findWebhook(w, r, a, id); !ok {
				return
			}
		}
		if err := h.hooks.DeleteWebhook(r.Context(), id); err != nil {
			h.storeError(w, r, err)
			return
		}
		w.Header()["Cache-Control"] = h.hdrCache
		w.WriteHeader(http.StatusNoContent)
	}
}

// listDeliveries is GET /webhooks/{webhook_id}/deliveries?limit=&after=:
// the webhook's delivery attempts, newest first.
func (h *Handler) listDeliveries() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noHooks(w) {
			return
		}
		var q queryFields
		p := q.page(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		id := r.PathValue("webhook_id")
		if !a.AllProjects {
			if _, ok := h.findWebhook(w, r, a, id); !ok {
				return
			}
		}
		list, more, err := h.hooks.ListDeliveryAttempts(r.Context(), id, p)
		writeList(h, w, r, list, more, err, appendAttempt, func(x prompts.DeliveryAttempt) string { return x.ID })
	}
}

// findWebhook returns the webhook when it exists and the key may see it,
// else answers 404 itself.
func (h *Handler) findWebhook(w http.ResponseWriter, r *http.Request, a Access, id string) (prompts.Webhook, bool) {
	wh, err := h.hooks.GetWebhook(r.Context(), id)
	if err != nil {
		h.storeError(w, r, err)
		return prompts.Webhook{}, false
	}
	if !canSee(a, wh) {
		h.notFoundAs(w, "webhook")
		return prompts.Webhook{}, false
	}
	return wh, true
}

// canSee reports whether the key may see the webhook: a key of every
// project sees them all; another key those whose projects are all among
// its own (not those of every project).
func canSee(a Access, wh prompts.Webhook) bool {
	if a.AllProjects {
		return true
	}
	if wh.ProjectIDs == nil {
		return false
	}
	for _, id := range wh.ProjectIDs {
		if !a.Allows(id) {
			return false
		}
	}
	return true
}

func webhookID(wh prompts.Webhook) string { return wh.ID }

// appendWebhook appends a webhook as the reads answer it: id, url, events
// (empty: every type), project_id (its one project, or null for several
// or every project) and created_at; never the secret.
func appendWebhook(b []byte, wh prompts.Webhook) []byte { return appendWebhookAs(b, wh, false) }

// appendNewWebhook appends a webhook as its create answers it: with the
// secret, which no other answer shows.
func appendNewWebhook(b []byte, wh prompts.Webhook) []byte { return appendWebhookAs(b, wh, true) }

func appendWebhookAs(b []byte, wh prompts.Webhook, secret bool) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendString(b, wh.ID)
	b = append(b, `,"url":`...)
	b = wire.AppendString(b, wh.URL)
	b = append(b, `,"events":[`...)
	for i, t := range wh.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, string(t))
	}
	b = append(b, `],"project_id":`...)
	if len(wh.ProjectIDs) == 1 {
		b = wire.AppendString(b, wh.ProjectIDs[0])
	} else {
		b = append(b, "null"...)
	}
	if secret {
		b = append(b, `,"secret":`...)
		b = wire.AppendString(b, wh.Secret)
	}
	b = append(b, `,"created_at":`...)
	b = wire.AppendTime(b, wh.CreatedAt)
	return append(b, '}')
}

// appendAttempt appends a delivery attempt: id, event_id (a decimal
// string, as events' ids are), attempt (1 for the first), at,
// status_code (null when no answer came), error (null when one came) and
// duration_ms (a number, to the microsecond).
func appendAttempt(b []byte, x prompts.DeliveryAttempt) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendString(b, x.ID)
	b = append(b, `,"event_id":"`...)
	b = strconv.AppendInt(b, x.EventID, 10)
	b = append(b, `","attempt":`...)
	b = strconv.AppendInt(b, int64(x.Attempt), 10)
	b = append(b, `,"at":`...)
	b = wire.AppendTime(b, x.At)
	b = append(b, `,"status_code":`...)
	if x.StatusCode == 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(x.StatusCode), 10)
	}
	b = append(b, `,"error":`...)
	if x.Error == "" {
		b = append(b, "null"...)
	} else {
		b = wire.AppendString(b, x.Error)
	}
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, float64(x.Duration.Microseconds())/1000, 'f', -1, 64)
	return append(b, '}')
}
