package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// render is POST /prompts/{prompt_id}/render with {"environment": …} or
// {"version_number": N} (at most one; neither means production) and
// "variables": the values, strings. It renders strictly
// (prompts.PromptVersion.Render) and changes nothing.
func (h *Handler) render() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.Render
		if !h.decode(w, body, &req) {
			return
		}
		in := req.Domain(r.PathValue("prompt_id"))
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		var v prompts.PromptVersion
		if env := in.Target(); env == "" {
			if !h.canSeePrompt(w, r, a, in.PromptID) {
				return
			}
			var err error
			if v, err = h.store.GetVersion(r.Context(), in.PromptID, in.VersionNumber.Value); err != nil {
				h.storeError(w, r, err)
				return
			}
		} else {
			ap, err := h.store.GetActive(r.Context(), in.PromptID, env)
			if err != nil {
				h.storeError(w, r, err)
				return
			}
			if !a.Allows(ap.ProjectID) {
				h.notFoundAs(w, "prompt")
				return
			}
			if ap.ActiveVersion == nil {
				h.problem(w, kindOf(prompts.CodeNotFound), "no version is active in "+string(env), nil)
				return
			}
			v = *ap.ActiveVersion
		}
		text, err := v.Render(in.Variables)
		if err != nil {
			h.invalidInput(w, r, err) // one entry a missing or unused variable, or the size
			return
		}
		readValue(h, w, api.Rendered{PromptID: v.PromptID, VersionID: v.ID, VersionNumber: v.VersionNumber, Text: text}, appendJSON[api.Rendered])
	}
}
