package httpapi

import (
	"net/http"
	"slices"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// API keys: every route needs RoleAdmin. POST /keys creates a key kept in
// the Store and answers its secret, which no other answer shows; GET
// /keys lists the keys kept and, on its first page, the keys of the
// configuration (read-only); DELETE /keys/{key_id} revokes a kept key.
// A key of some projects sees, makes and revokes only keys of its
// projects (a kept key whose projects are all among its own), and no
// key makes a key above its own role: the Store checks that in the step
// that makes the change (prompts.Grant).

// keyForgetter is an Authenticator that remembers keys (a StoreKeys):
// the handler tells it of a revocation at once.
type keyForgetter interface{ Forget(id string) }

// keyLister is an Authenticator that lists the keys of its configuration
// (Keys, StoreKeys), without secrets.
type keyLister interface{ ConfiguredKeys() []Access }

// noKeys answers 501 for a store that keeps no keys, and reports whether
// it did.
func (h *Handler) noKeys(w http.ResponseWriter) bool {
	if h.keys == nil {
		h.problem(w, kindNotImplemented, "this server's store keeps no API keys", nil)
		return true
	}
	return false
}

// grant is what a key may do, as the Store checks it.
func (a Access) grant() prompts.Grant {
	g := prompts.Grant{Role: prompts.KeyRole(a.Role.String())}
	if !a.AllProjects {
		g.ProjectIDs = slices.Clone(a.ProjectIDs)
		if g.ProjectIDs == nil {
			g.ProjectIDs = []string{}
		}
	}
	return g
}

// createKey is POST /keys.
func (h *Handler) createKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noKeys(w) {
			return
		}
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.NewKey
		if !h.decode(w, body, &req) {
			return
		}
		in := prompts.NewAPIKey{Name: req.Name, Role: prompts.KeyRole(req.Role), ProjectIDs: req.ProjectIDs, ExpiresAt: req.ExpiresAt, Creator: a.grant()}
		if in.ProjectIDs == nil {
			// Every project the key may see.
			in.ProjectIDs = in.Creator.ProjectIDs
		}
		if in.ProjectIDs != nil && len(in.ProjectIDs) == 0 && req.ProjectIDs == nil {
			h.invalid(w, []prompts.FieldError{{Field: "project_ids", Detail: "is required: this key may see no project"}})
			return
		}
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		for _, id := range in.ProjectIDs {
			if !a.Allows(id) {
				h.notFoundAs(w, "project")
				return
			}
		}
		if h.configured(in.Name) {
			h.problem(w, kindOf(prompts.CodeConflict), "a key named "+in.Name+" exists", nil)
			return
		}
		k, secret, err := h.keys.CreateKey(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		writeValue(h, w, api.FromNewAPIKey(k, secret), appendJSON[api.Key])
	}
}

// configured reports whether a key of the configuration has this name.
func (h *Handler) configured(name string) bool {
	l, ok := h.auth.(keyLister)
	if !ok {
		return false
	}
	for _, c := range l.ConfiguredKeys() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// listKeys is GET /keys?limit=&after=: the keys the key may see, the
// configuration's first (on the first page, beyond limit), then the kept
// ones, oldest first.
func (h *Handler) listKeys() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noKeys(w) {
			return
		}
		var q queryFields
		p := q.page(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		g := a.grant()
		var out []api.Key
		if l, ok := h.auth.(keyLister); ok && p.After == "" {
			for _, c := range l.ConfiguredKeys() {
				var projects []string
				if !c.AllProjects {
					projects = slices.Clone(c.ProjectIDs)
				}
				if !g.Covers(projects) {
					continue
				}
				out = append(out, api.Key{Name: c.Name, Role: c.Role.String(), ProjectIDs: projects, Source: api.KeySourceConfig})
			}
		}
		list, more, err := h.keys.ListKeys(r.Context(), prompts.KeyFilter{Page: p, Within: g.ProjectIDs})
		for _, k := range list {
			out = append(out, api.FromAPIKey(k))
		}
		if out == nil {
			out = []api.Key{}
		}
		writeList(h, w, r, out, more, err, appendJSON[api.Key], func(k api.Key) string {
			if k.ID == nil {
				return ""
			}
			return *k.ID
		})
	}
}

// revokeKey is DELETE /keys/{key_id}: the key is refused from then on,
// here at once, on the other processes of the Store within a second.
func (h *Handler) revokeKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.noKeys(w) {
			return
		}
		id := r.PathValue("key_id")
		if _, err := h.keys.RevokeKey(r.Context(), prompts.KeyRevocation{ID: id, Revoker: a.grant()}); err != nil {
			h.storeError(w, r, err)
			return
		}
		if f, ok := h.auth.(keyForgetter); ok {
			f.Forget(id)
		}
		w.Header()["Cache-Control"] = h.hdrCache
		w.WriteHeader(http.StatusNoContent)
	}
}
