package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// A project's environments: GET lists them (read), PUT adds one or sets
// its protection and DELETE removes one (admin). An environment that is
// protected changes only by an admin key's requests: the Store refuses
// the others (prompts.Change.AllowProtected, which Handler sets for admin
// keys only), 403.

// listEnvironments is GET /projects/{project_id}/environments: the
// project's environments, the built-in ones first, then oldest first.
func (h *Handler) listEnvironments() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		id := r.PathValue("project_id")
		if !a.Allows(id) {
			h.notFoundAs(w, "project")
			return
		}
		l, err := h.store.ListEnvironments(r.Context(), id)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		writeValue(h, w, l, appendEnvironments)
	}
}

// putEnvironment is PUT /projects/{project_id}/environments/{name} with
// an optional body {"protected": bool} (absent: false): adds the
// environment, or sets its protection. It answers the environment.
func (h *Handler) putEnvironment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.PutEnvironment
		if len(body) > 0 && !h.decode(w, body, &req) {
			return
		}
		in := prompts.NewEnvironment{ProjectID: r.PathValue("project_id"), Name: prompts.Environment(r.PathValue("name")),
			Protected: req.Protected, Actor: a.Name}
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !a.Allows(in.ProjectID) {
			h.notFoundAs(w, "project")
			return
		}
		e, err := h.store.PutEnvironment(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		writeValue(h, w, e, appendEnvironment)
	}
}

// deleteEnvironment is DELETE /projects/{project_id}/environments/{name}:
// 204; 409 for a built-in environment or one a version is active in.
func (h *Handler) deleteEnvironment() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		id, name := r.PathValue("project_id"), prompts.Environment(r.PathValue("name"))
		if err := name.Validate(); err != nil {
			h.invalidInput(w, r, prompts.Invalid("name", err.(*prompts.Error).Fields[0].Detail))
			return
		}
		if !a.Allows(id) {
			h.notFoundAs(w, "project")
			return
		}
		if err := h.store.DeleteEnvironment(r.Context(), id, name); err != nil {
			h.storeError(w, r, err)
			return
		}
		w.Header()["Cache-Control"] = h.hdrCache
		w.WriteHeader(http.StatusNoContent)
	}
}

func appendEnvironment(b []byte, e prompts.ProjectEnvironment) []byte {
	return appendJSON(b, api.FromEnvironment(e))
}

func appendEnvironments(b []byte, l []prompts.ProjectEnvironment) []byte {
	out := make([]api.Environment, len(l))
	for i, e := range l {
		out[i] = api.FromEnvironment(e)
	}
	return appendJSON(b, out)
}
