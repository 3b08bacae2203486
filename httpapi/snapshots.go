package httpapi

import (
	"errors"
	"net/http"

	"github.com/promptkit/prompts/cache"
)

// readSnapshot is GET /projects/{project_id}/snapshot: every prompt of
// the project with the version active in each environment, as
// cache.Snapshot holds them, in cache.SnapshotFormat. It reads the store
// under the server's cache, if any: the snapshot is consistent (each
// prompt as of one revision) and does not crowd out of the cache what
// applications read. A project past the bounds of cache.TakeSnapshot is
// 413, naming the bound.
func (h *Handler) readSnapshot() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		id := r.PathValue("project_id")
		if !a.Allows(id) {
			h.notFoundAs(w, "project")
			return
		}
		store := h.store
		if h.fresh != nil {
			store = h.fresh
		}
		s, err := cache.TakeSnapshot(r.Context(), store, id)
		switch {
		case errors.Is(err, cache.ErrSnapshotTooLarge):
			h.problem(w, kindTooLarge, err.Error(), nil)
			return
		case err != nil:
			h.storeError(w, r, err)
			return
		}
		b, _ := s.MarshalJSON() // it never fails
		h.writeJSON(w, b)
	}
}
