package httpapi

import (
	"errors"
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// render is POST /prompts/{prompt_id}/render with {"environment": …} or
// {"version_number": N} (at most one; neither means production) and
// "variables": the values (strings for a plain version), "allow_unused",
// and for a dotprompt version "history" and "context". It renders the
// version's template with its partials (prompts.Renderer: each version
// parsed once), and changes nothing. It is matched directly (see direct),
// as read 3 is: it is an application's other hot path.
func (h *Handler) render() lastFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access, id string) {
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
		in := req.Domain(id)
		in.Shared = true // encoded below, and dropped
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !h.canSeePrompt(w, r, a, in.PromptID) {
			return // before a render that would tell what the prompt is
		}
		v, out, err := h.renderer.Render(r.Context(), in)
		if err != nil {
			if errors.Is(err, prompts.ErrInvalid) {
				h.invalidInput(w, r, err) // one entry a missing or unused variable, or the size
			} else {
				h.storeError(w, r, err) // not found, a partial unavailable (409), the store's
			}
			return
		}
		readValue(h, w, rendered{v, out}, appendRendered)
	}
}

// rendered is the answer of a render: the version and what it rendered.
type rendered struct {
	v   prompts.PromptVersion
	out prompts.Rendered
}

// appendRendered writes a render's answer as api.FromRendered's JSON,
// without reflection (api.AppendRendered).
func appendRendered(b []byte, r rendered) []byte { return api.AppendRendered(b, r.v, r.out) }
