package httpapi

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// createVersion is POST
// /prompts/{prompt_id}/versions.
func (h *Handler) createVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var (
			content, summary prompts.Optional[string]
			metadata         prompts.Metadata
			envs             []string
			allow            bool
		)
		if bad := decodeObject(body, []member{
			{"content", "a string", &content},
			{"change_summary", "a string or null", &summary},
			{"metadata_", "a JSON object or null", &metadata},
			{"environments", "an array of environment names (strings) or null", &envs},
			{"allow_variable_change", "true or false", &allow},
		}); bad != nil {
			h.badRequest(w, bad)
			return
		}
		idem, ok := h.idempotency(w, r, a, body)
		if !ok {
			return
		}
		in := prompts.NewVersion{
			PromptID:      r.PathValue("prompt_id"),
			Content:       content.Value,
			ChangeSummary: optString(summary),
			Metadata:      metadata,
			Actor:         a.Name,
			// The guard is a rule of activation: it binds only with
			// environments.
			AllowVariableChange: allow,
			Idempotency:         idem,
		}
		for _, e := range envs {
			in.Environments = append(in.Environments, prompts.Environment(e))
		}
		if err := in.Validate(); err != nil {
			h.storeError(w, r, err)
			return
		}
		if len(in.Environments) > 0 && !a.Role.allows(RoleDeploy) {
			h.forbidden(w, RoleDeploy) // activating is deploying
			return
		}
		if !h.canSeePrompt(w, r, a, in.PromptID) {
			return
		}
		v, err := h.store.CreateVersion(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		replayed(w, v.Replayed)
		w.Header()["Location"] = []string{"versions/" + strconv.Itoa(v.VersionNumber)}
		writeValue(h, w, v, wire.AppendVersion)
	}
}

// listVersions is GET /prompts/{prompt_id}/versions?limit=&after=,
// newest first, each version with its change_summary.
func (h *Handler) listVersions() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		var q queryFields
		page := q.page(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		id := r.PathValue("prompt_id")
		if !h.canSeePrompt(w, r, a, id) {
			return
		}
		list, more, err := h.store.ListVersions(r.Context(), id, page)
		writeList(h, w, r, list, more, err, wire.AppendVersionDetail, func(x prompts.PromptVersion) string { return x.ID })
	}
}

// readVersion is GET /prompts/{prompt_id}/versions/{version_number}.
// A version number that is not a positive decimal integer in its plain
// form ("1", not "01" or "+1") names nothing: 404, as a malformed id does.
func (h *Handler) readVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		id := r.PathValue("prompt_id")
		if !h.canSeePrompt(w, r, a, id) {
			return
		}
		s := r.PathValue("version_number")
		n, ok := parseCount(s)
		if !ok || n < 1 || s[0] == '0' {
			h.notFoundAs(w, "version")
			return
		}
		v, err := h.store.GetVersion(r.Context(), id, n)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		writeValue(h, w, v, wire.AppendVersionDetail)
	}
}

// activate is PUT /prompts/{prompt_id}/environments/{environment}
// with {"version_id": …} or {"version_number": …}, exactly one of them.
// It answers as readPrompt does for that environment.
func (h *Handler) activate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var versionID, reason prompts.Optional[string]
		var number versionNumberField
		var allow bool
		if bad := decodeObject(body, []member{
			{"version_id", "a string", &versionID},
			{"version_number", "an integer", &number},
			{"reason", "a string or null", &reason},
			{"allow_variable_change", "true or false", &allow},
		}); bad != nil {
			h.badRequest(w, bad)
			return
		}
		in := prompts.Activation{
			PromptID:      r.PathValue("prompt_id"),
			Environment:   prompts.Environment(r.PathValue("environment")),
			VersionID:     versionID,
			VersionNumber: prompts.Optional[int](number),
			Change:        h.change(r, a, reason.Value, allow),
		}
		if err := in.Validate(); err != nil {
			h.storeError(w, r, err)
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

// rollback is POST /prompts/{prompt_id}/environments/{environment}/rollback,
// with an optional body {"reason": …}. It answers as activate does.
func (h *Handler) rollback() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var reason prompts.Optional[string]
		var allow bool
		if len(body) > 0 { // the body is optional
			if bad := decodeObject(body, []member{
				{"reason", "a string or null", &reason},
				{"allow_variable_change", "true or false", &allow},
			}); bad != nil {
				h.badRequest(w, bad)
				return
			}
		}
		idem, ok := h.idempotency(w, r, a, body)
		if !ok {
			return
		}
		in := prompts.Rollback{
			PromptID:    r.PathValue("prompt_id"),
			Environment: prompts.Environment(r.PathValue("environment")),
			Change:      h.change(r, a, reason.Value, allow),
			Idempotency: idem,
		}
		if err := in.Validate(); err != nil {
			h.storeError(w, r, err)
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

// listDeployments is GET
// /prompts/{prompt_id}/deployments?environment=&limit=&after=, newest
// first.
func (h *Handler) listDeployments() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		raw := r.URL.RawQuery
		var q queryFields
		f := prompts.DeploymentFilter{PromptID: r.PathValue("prompt_id"), Page: q.page(raw)}
		env, given, fe := queryParam(raw, "environment")
		q.add(fe)
		if given && fe == nil {
			f.Environment = prompts.Environment(env)
			if err := f.Environment.Validate(); err != nil {
				q.addErr(err)
			}
		}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		if !h.canSeePrompt(w, r, a, f.PromptID) {
			return
		}
		list, more, err := h.store.ListDeployments(r.Context(), f)
		writeList(h, w, r, list, more, err, wire.AppendDeployment, func(x prompts.Deployment) string { return x.ID })
	}
}

// readEnvironment is GET /prompts/{prompt_id}/environments/{environment}:
// readPrompt with the environment in the path.
func (h *Handler) readEnvironment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		env := prompts.Environment(r.PathValue("environment"))
		if err := env.Validate(); err != nil {
			h.storeError(w, r, err)
			return
		}
		ap, stale, err := h.getActive(r.Context(), r.PathValue("prompt_id"), env)
		h.answerRead(w, r, a, ap, stale, err)
	}
}

// deactivate is DELETE /prompts/{prompt_id}/environments/{environment}
// leaves nothing active there: 204, also when nothing was.
func (h *Handler) deactivate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		var q queryFields
		reason, _, fe := queryParam(r.URL.RawQuery, "reason")
		q.add(fe)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		in := prompts.Deactivation{
			PromptID:    r.PathValue("prompt_id"),
			Environment: prompts.Environment(r.PathValue("environment")),
			Change:      h.change(r, a, reason, false),
		}
		if err := in.Validate(); err != nil {
			h.storeError(w, r, err)
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

// versionNumberField decodes version_number: null, or an integer. A
// positive integer too large for an int names no version, as it does in
// a path (404), rather than failing to decode (400).
type versionNumberField prompts.Optional[int]

func (f *versionNumberField) UnmarshalJSON(b []byte) error {
	var o prompts.Optional[int]
	err := o.UnmarshalJSON(b)
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && isDigits(b) {
		o, err = prompts.Some(math.MaxInt), nil // no store has such a version
	}
	*f = versionNumberField(o)
	return err
}

// isDigits reports whether b is a JSON integer without a sign.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
