package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
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
		if h.refused(w) {
			return
		}
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
		if h.refused(w) {
			return
		}
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

// appendWebhook appends a webhook as the reads answer it (never the
// secret); appendNewWebhook as its create answers it, with the secret,
// which no other answer shows.
func appendWebhook(b []byte, wh prompts.Webhook) []byte { return appendJSON(b, api.FromWebhook(wh)) }

func appendNewWebhook(b []byte, wh prompts.Webhook) []byte {
	return appendJSON(b, api.FromNewWebhook(wh))
}

// appendAttempt appends a delivery attempt.
func appendAttempt(b []byte, x prompts.DeliveryAttempt) []byte {
	return appendJSON(b, api.FromDeliveryAttempt(x))
}
