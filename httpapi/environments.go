package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// readEnvironment is GET /prompts/{prompt_id}/environments/{environment}?subject=:
// readPrompt with the environment in the path.
func (h *Handler) readEnvironment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		env := prompts.Environment(r.PathValue("environment"))
		if err := env.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		var q queryFields
		subject := q.subject(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		ap, stale, err := h.readActive(r, prompts.ActiveQuery{PromptID: r.PathValue("prompt_id"), Environment: env, Subject: subject})
		h.answerRead(w, r, a, ap, stale, err)
	}
}

// activate is PUT /prompts/{prompt_id}/environments/{environment}
// with {"version_id": …}, {"version_number": …} or {"split": […]},
// exactly one of them. It answers as readPrompt does for that
// environment (without a subject: a split's first entry).
func (h *Handler) activate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.Activation
		if !h.decode(w, body, &req) {
			return
		}
		in := prompts.Activation{
			PromptID:      r.PathValue("prompt_id"),
			Environment:   prompts.Environment(r.PathValue("environment")),
			VersionID:     req.VersionID.Domain(),
			VersionNumber: prompts.Optional[int](req.VersionNumber),
			Split:         req.Split.Domain(),
			Change:        h.change(r, a, req.Reason.Value, req.AllowVariableChange),
		}
		in.AllowMissingPartials = req.AllowMissingPartials
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !h.canSeePrompt(w, r, a, in.PromptID) {
			return
		}
		ap, err := h.store.Activate(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		h.writeChanged(w, ap)
	}
}

// deactivate is DELETE /prompts/{prompt_id}/environments/{environment}
// leaves nothing active there: 204, also when nothing was.
func (h *Handler) deactivate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		var q queryFields
		reason, _, fe := queryParam(r.URL.RawQuery, "reason")
		q.add(fe)
		force, _, fe := queryParam(r.URL.RawQuery, "force")
		q.add(fe)
		if fe == nil && force != "" && force != "true" && force != "false" {
			q.add(&prompts.FieldError{Field: "force", Detail: "must be true or false"})
		}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		in := prompts.Deactivation{
			PromptID:    r.PathValue("prompt_id"),
			Environment: prompts.Environment(r.PathValue("environment")),
			Change:      h.change(r, a, reason, false),
			Force:       force == "true",
		}
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !h.canSeePrompt(w, r, a, in.PromptID) {
			return
		}
		if _, err := h.store.Deactivate(r.Context(), in); err != nil {
			h.storeError(w, r, err)
			return
		}
		w.Header()["Cache-Control"] = h.hdrCache
		w.WriteHeader(http.StatusNoContent)
	}
}

// rollback is POST /prompts/{prompt_id}/environments/{environment}/rollback,
// with an optional body {"reason": …}. It answers as activate does.
func (h *Handler) rollback() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.Rollback
		if len(body) > 0 && !h.decode(w, body, &req) { // the body is optional
			return
		}
		idem, ok := h.idempotency(w, r, a, body)
		if !ok {
			return
		}
		in := prompts.Rollback{
			PromptID:    r.PathValue("prompt_id"),
			Environment: prompts.Environment(r.PathValue("environment")),
			Change:      h.change(r, a, req.Reason.Value, req.AllowVariableChange),
			Idempotency: idem,
		}
		in.AllowMissingPartials = req.AllowMissingPartials
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !h.canSeePrompt(w, r, a, in.PromptID) {
			return
		}
		ap, err := h.store.Rollback(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		replayed(w, ap.Replayed)
		h.writeChanged(w, ap)
	}
}

// change returns what a change of an environment carries: the key's name
// as its actor, reason, the revision its If-Match asks for, and whether
// the promotion guard is off.
func (h *Handler) change(r *http.Request, a Access, reason string, allowVariableChange bool) prompts.Change {
	return prompts.Change{
		Actor:               a.Name,
		Reason:              reason,
		IfRevision:          ifRevision(r.Header["If-Match"], r.PathValue("prompt_id"), prompts.Environment(r.PathValue("environment"))),
		AllowVariableChange: allowVariableChange,
		AllowProtected:      a.Role.allows(RoleAdmin),
	}
}
