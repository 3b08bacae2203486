package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// listProjects is GET /projects?limit=&after=, the projects the key
// may see.
func (h *Handler) listProjects() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		var q queryFields
		f := prompts.ProjectFilter{Page: q.page(r.URL.RawQuery), IDs: a.visible()}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		list, more, err := h.store.ListProjects(r.Context(), f)
		writeList(h, w, r, list, more, err, wire.AppendProject, func(x prompts.Project) string { return x.ID })
	}
}
