package httpapi

import (
	"errors"
	"net/http"
	"sync"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// render is POST /prompts/{prompt_id}/render with {"environment": …} or
// {"version_number": N} (at most one; neither means production) and
// "variables": the values (strings for a plain version), "allow_unused",
// and for a dotprompt version "history" and "context". It renders the
// version's template, parsed once a version (prompts.Template.Render),
// and changes nothing.
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
		t, err := h.templates.get(v)
		if err != nil {
			h.invalidInput(w, r, err) // cannot happen: a stored version parses
			return
		}
		out, err := t.Render(r.Context(), in.Input())
		if err != nil {
			if errors.Is(err, prompts.ErrInvalid) {
				h.invalidInput(w, r, err) // one entry a missing or unused variable, or the size
			} else {
				h.storeError(w, r, err)
			}
			return
		}
		readValue(h, w, api.FromRendered(v, out), appendJSON[api.Rendered])
	}
}

// maxTemplates bounds templateCache: when full, it starts again.
const maxTemplates = 1024

// templateCache keeps parsed templates by version id (a version never
// changes, so an entry is never stale). It is safe for concurrent use;
// its zero value is empty.
type templateCache struct {
	mu sync.Mutex
	m  map[string]*prompts.Template
}

// get returns v's parsed template, parsing it on its first render.
func (c *templateCache) get(v prompts.PromptVersion) (*prompts.Template, error) {
	c.mu.Lock()
	t, ok := c.m[v.ID]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := prompts.ParseTemplate(v) // outside the lock: it reads the whole content
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxTemplates {
		c.m = make(map[string]*prompts.Template)
	}
	c.m[v.ID] = t
	return t, nil
}
