package httpapi

import (
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// createVersion is POST
// /prompts/{prompt_id}/versions.
func (h *Handler) createVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.NewVersion
		if !h.decode(w, body, &req) {
			return
		}
		idem, ok := h.idempotency(w, r, a, body)
		if !ok {
			return
		}
		// The reason is for the records of environments; the guard
		// (allow_variable_change) is a rule of activation: both bind
		// only with environments.
		in := req.Domain(r.PathValue("prompt_id"))
		in.Actor, in.Idempotency = a.Name, idem
		in.AllowProtected = a.Role.allows(RoleAdmin) // a protected environment needs admin
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
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
		// The body's fields are fixed: the format, which a version naming
		// none takes from the latest, goes in a header.
		w.Header()["Template-Format"] = []string{string(v.TemplateFormat.Or(prompts.FormatPlain))}
		writeValue(h, w, v, appendVersion)
	}
}

// listVersions is GET /prompts/{prompt_id}/versions?limit=&after=,
// newest first, each version with its change_summary.
func (h *Handler) listVersions() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
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
		writeList(h, w, r, list, more, err, appendVersionDetail, func(x prompts.PromptVersion) string { return x.ID })
	}
}

// readVersion is GET /prompts/{prompt_id}/versions/{version_number}.
// A version number that is not a positive decimal integer in its plain
// form ("1", not "01" or "+1") names nothing: 404, as a malformed id does.
func (h *Handler) readVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
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
		store := h.reader(r)
		v, err := store.GetVersion(r.Context(), id, n)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		readValue(h, w, v, appendVersionDetail)
	}
}
