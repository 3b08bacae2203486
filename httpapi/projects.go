package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// createProject is POST /projects, for admin keys of every project: a
// key limited to some projects could not see the project it made, so it
// is 403. There is no Idempotency-Key (prompts.NewProject has none): a
// repeat finds its slug taken, given or derived from the name, and is 409.
func (h *Handler) createProject() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if !a.AllProjects {
			h.problem(w, kindForbidden, "creating a project needs a key for every project", nil)
			return
		}
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.NewProject
		if !h.decode(w, body, &req) {
			return
		}
		in := req.Domain()
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		p, err := h.store.CreateProject(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		w.Header()["Location"] = []string{"projects/" + p.ID}
		writeValue(h, w, p, appendProject)
	}
}

// readProject is GET /projects/{project_id}: one project, as the list
// has it.
func (h *Handler) readProject() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		id := r.PathValue("project_id")
		if !a.Allows(id) {
			h.notFoundAs(w, "project")
			return
		}
		store := h.reader(r)
		p, err := store.GetProject(r.Context(), id)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		writeValue(h, w, p, appendProject)
	}
}

// listProjects is GET /projects?limit=&after=, the projects the key
// may see.
func (h *Handler) listProjects() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
		var q queryFields
		f := prompts.ProjectFilter{Page: q.page(r.URL.RawQuery), IDs: a.visible()}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		list, more, err := h.store.ListProjects(r.Context(), f)
		writeList(h, w, r, list, more, err, appendProject, func(x prompts.Project) string { return x.ID })
	}
}
