package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
)

// listDeployments is GET
// /prompts/{prompt_id}/deployments?environment=&limit=&after=, newest
// first.
func (h *Handler) listDeployments() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
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
		writeList(h, w, r, list, more, err, appendDeployment, func(x prompts.Deployment) string { return x.ID })
	}
}
