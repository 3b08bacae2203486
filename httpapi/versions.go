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
			reason           prompts.Optional[string]
		)
		if bad := decodeObject(body, []member{
			{"content", "a string", &content},
			{"change_summary", "a string or null", &summary},
			{"metadata_", "a JSON object or null", &metadata},
			{"environments", "an array of environment names (strings) or null", &envs},
			{"allow_variable_change", "true or false", &allow},
			{"reason", "a string or null", &reason},
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
			Reason:        reason.Value, // for the records of environments
			// The guard is a rule of activation: it binds only with
			// environments.
			AllowVariableChange: allow,
			Idempotency:         idem,
		}
		for _, e := range envs {
			in.Environments = append(in.Environments, prompts.Environment(e))
		}
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
		store := h.reader(r)
		v, err := store.GetVersion(r.Context(), id, n)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		readValue(h, w, v, wire.AppendVersionDetail)
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
