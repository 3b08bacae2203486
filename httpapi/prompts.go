package httpapi

import (
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// createPrompt is POST /prompts.
func (h *Handler) createPrompt() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.NewPrompt
		if !h.decode(w, body, &req) {
			return
		}
		idem, ok := h.idempotency(w, r, a, body)
		if !ok {
			return
		}
		in := req.Domain()
		in.Idempotency = idem
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		if !a.Allows(in.ProjectID) {
			h.notFoundAs(w, "project")
			return
		}
		p, err := h.store.CreatePrompt(r.Context(), in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		replayed(w, p.Replayed)
		w.Header()["Location"] = []string{"prompts/" + p.ID}
		h.setPromptETag(w, r, p)
		writeValue(h, w, p, appendPrompt)
	}
}

// readPrompt is GET /prompts/{prompt_id}?environment=&subject=, the
// hot path of every application. It costs one store call; the key's access
// is checked on the prompt the store returns. ServeHTTP routes it without
// the ServeMux (see direct). With a subject, an environment that holds a
// split answers the version it serves the subject.
func (h *Handler) readPrompt() lastFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access, id string) {
		var q queryFields
		env, subject := q.read(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		ap, stale, err := h.readActive(r, prompts.ActiveQuery{PromptID: id, Environment: env, Subject: subject})
		h.answerRead(w, r, a, ap, stale, err)
	}
}

// readByKey is GET /projects/{project_id}/prompts/{key...}?environment=&subject=:
// readPrompt for the prompt with that key in that project. The key is the
// rest of the path, slashes included.
func (h *Handler) readByKey() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		var q queryFields
		env, subject := q.read(r.URL.RawQuery)
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		projectID := r.PathValue("project_id")
		if !a.Allows(projectID) {
			h.notFoundAs(w, "project")
			return
		}
		ap, stale, err := h.readActive(r, prompts.ActiveQuery{ProjectID: projectID, Key: r.PathValue("key"), Environment: env, Subject: subject})
		h.answerRead(w, r, a, ap, stale, err)
	}
}

// answerRead answers a read of a prompt in an environment: the store's
// error, 404 for a prompt the key may not see, else the prompt with its
// ETag (or 304), and Cache-Status when a cache answered with a stale
// value.
func (h *Handler) answerRead(w http.ResponseWriter, r *http.Request, a Access, ap prompts.ActivePrompt, stale bool, err error) {
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	if !a.Allows(ap.ProjectID) {
		h.notFoundAs(w, "prompt")
		return
	}
	if stale {
		w.Header()["Cache-Status"] = hdrStale
	}
	h.writeActive(w, r, ap)
}

// hdrStale is the Cache-Status (RFC 9211) of an answer a cache gave from
// what it last knew, the store being unavailable.
var hdrStale = []string{"prompts; hit; detail=stale"}

// readActive reads q from the handler's store, sharing its answer (the
// caller must change none of it), and fresh when the request asks for a
// fresh answer (see wantsFresh). The store is read without the subject
// and the answer picked here, once, whatever the store (the pick, a
// SHA-256, is most of what a subject costs). The store is read as
// prompts.ReadActive reads it, with its ActiveReader found once
// (h.active), and a read without a subject is not picked at all: an
// ActivePrompt is 200 bytes, and each call that passes or returns it by
// value copies it.
func (h *Handler) readActive(r *http.Request, q prompts.ActiveQuery) (a prompts.ActivePrompt, stale bool, err error) {
	subject := q.Subject
	q.Shared, q.Fresh, q.Subject = true, wantsFresh(r.Header), ""
	if h.active != nil {
		a, stale, err = h.active.ReadActive(r.Context(), q)
	} else {
		a, stale, err = prompts.ReadActive(r.Context(), h.store, q)
	}
	if subject != "" {
		a = a.Pick(subject)
	}
	return a, stale, err
}

// updatePrompt is PATCH /prompts/{prompt_id}.
func (h *Handler) updatePrompt() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		body, ok := h.readBody(w, r)
		if !ok {
			return
		}
		var req api.PromptUpdate
		if !h.decode(w, body, &req) {
			return
		}
		in := req.Domain()
		if err := in.Validate(); err != nil {
			h.invalidInput(w, r, err)
			return
		}
		id := r.PathValue("prompt_id")
		if in.Key.Set && !a.Role.allows(RoleDeploy) {
			// Renaming is deploying: a new key changes what the reads by
			// key answer. Whether the key changes depends on the prompt,
			// so an unknown prompt (or one the key may not see) is 404
			// before this check can answer.
			p, ok := h.findPrompt(w, r, a, id)
			if !ok {
				return
			}
			if p.Key != in.Key.Value {
				h.forbidden(w, RoleDeploy)
				return
			}
			// The key the prompt has: dropped from the update, so that
			// this request cannot rename it even if another renamed it
			// meanwhile.
			in.Key = prompts.Optional[string]{}
		} else if !h.canSeePrompt(w, r, a, id) {
			return
		}
		p, err := h.store.UpdatePrompt(r.Context(), id, in)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		h.setPromptETag(w, r, p)
		writeValue(h, w, p, appendPrompt)
	}
}

// listPrompts is GET /prompts?project_id=&key=&limit=&after=.
func (h *Handler) listPrompts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
		raw := r.URL.RawQuery
		var q queryFields
		f := prompts.PromptFilter{Page: q.page(raw)}
		key, keyGiven, fe := queryParam(raw, "key")
		q.add(fe)
		switch {
		case keyGiven && fe == nil && key == "": // given, yet no key
			q.add(&prompts.FieldError{Field: "key", Detail: "must not be empty"})
		case keyGiven && fe == nil:
			f.Key = key
		}
		projectID, projectGiven, fe := queryParam(raw, "project_id")
		q.add(fe)
		if projectGiven && fe == nil {
			f.ProjectIDs = []string{projectID}
		}
		if len(q) == 0 {
			q.addErr(f.Validate()) // the domain's rules of a filter
		}
		if len(q) > 0 {
			h.invalid(w, q)
			return
		}
		if projectGiven {
			if !a.Allows(projectID) {
				h.notFoundAs(w, "project")
				return
			}
			if _, err := h.store.GetProject(r.Context(), projectID); err != nil {
				h.storeError(w, r, err)
				return
			}
		} else {
			f.ProjectIDs = a.visible()
		}
		list, more, err := h.store.ListPrompts(r.Context(), f)
		writeList(h, w, r, list, more, err, appendPrompt, func(x prompts.Prompt) string { return x.ID })
	}
}

// canSeePrompt checks that the prompt exists and that the key may see its
// project, answering 404 itself when not. A key for every project needs no
// look-up: the store's own call answers an unknown prompt.
func (h *Handler) canSeePrompt(w http.ResponseWriter, r *http.Request, a Access, id string) bool {
	if a.AllProjects {
		return true
	}
	_, ok := h.findPrompt(w, r, a, id)
	return ok
}

// findPrompt returns the prompt when it exists and the key may see its
// project, else answers 404 itself.
func (h *Handler) findPrompt(w http.ResponseWriter, r *http.Request, a Access, id string) (prompts.Prompt, bool) {
	p, err := h.store.GetPrompt(r.Context(), id)
	if err != nil {
		h.storeError(w, r, err)
		return prompts.Prompt{}, false
	}
	if !a.Allows(p.ProjectID) {
		h.notFoundAs(w, "prompt")
		return prompts.Prompt{}, false
	}
	return p, true
}
