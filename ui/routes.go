package ui

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/promptkit/prompts/httpapi"
)

// routes lists every page and action.
func (h *Handler) routes() {
	p := h.prefix
	m := http.NewServeMux()
	m.HandleFunc("GET "+p+"{$}", h.index)
	m.HandleFunc("POST "+p+"signin", h.signIn)
	m.HandleFunc("POST "+p+"signout", h.signOut)
	m.HandleFunc("GET "+p+"static/{name}", h.serveStatic)
	if h.oidc != nil {
		m.HandleFunc("GET "+p+"oidc/start", h.oidcStart)
		m.HandleFunc("GET "+p+"oidc/callback", h.oidcCallback)
	}

	m.HandleFunc("GET "+p+"projects/{project_id}", h.page(httpapi.RoleRead, (*call).project))
	m.HandleFunc("GET "+p+"projects/{project_id}/prompts/new", h.page(httpapi.RoleWrite, (*call).newPromptForm))
	m.HandleFunc("POST "+p+"projects/{project_id}/prompts", h.action(httpapi.RoleWrite, (*call).createPrompt))
	m.HandleFunc("GET "+p+"projects/{project_id}/environments", h.page(httpapi.RoleRead, (*call).environments))
	m.HandleFunc("POST "+p+"projects/{project_id}/environments", h.action(httpapi.RoleAdmin, (*call).putEnvironment))
	m.HandleFunc("POST "+p+"projects/{project_id}/environments/{name}/remove", h.action(httpapi.RoleAdmin, (*call).removeEnvironment))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}", h.page(httpapi.RoleRead, (*call).prompt))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/versions/{number}", h.page(httpapi.RoleRead, (*call).version))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/compare", h.page(httpapi.RoleRead, (*call).compare))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/versions/new", h.page(httpapi.RoleWrite, (*call).newVersionForm))
	m.HandleFunc("POST "+p+"prompts/{prompt_id}/versions", h.action(httpapi.RoleWrite, (*call).createVersion))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/promote", h.page(httpapi.RoleDeploy, (*call).promoteForm))
	m.HandleFunc("POST "+p+"prompts/{prompt_id}/promote", h.action(httpapi.RoleDeploy, (*call).promote))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/rollback", h.page(httpapi.RoleDeploy, (*call).rollbackForm))
	m.HandleFunc("POST "+p+"prompts/{prompt_id}/rollback", h.action(httpapi.RoleDeploy, (*call).rollback))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/deactivate", h.page(httpapi.RoleDeploy, (*call).deactivateForm))
	m.HandleFunc("POST "+p+"prompts/{prompt_id}/deactivate", h.action(httpapi.RoleDeploy, (*call).deactivate))
	m.HandleFunc("GET "+p+"prompts/{prompt_id}/versions/{number}/render", h.page(httpapi.RoleRead, (*call).renderForm))
	// Rendering changes nothing, but its values may be secret: a POST
	// keeps them out of URLs and logs.
	m.HandleFunc("POST "+p+"prompts/{prompt_id}/versions/{number}/render", h.action(httpapi.RoleRead, (*call).renderVersion))
	m.HandleFunc("GET "+p+"keys", h.page(httpapi.RoleAdmin, (*call).keys))
	m.HandleFunc("POST "+p+"keys", h.action(httpapi.RoleAdmin, (*call).createKey))
	m.HandleFunc("POST "+p+"keys/{key_id}/revoke", h.action(httpapi.RoleAdmin, (*call).revokeKey))

	// The URLs of actions, fetched (a reload, a bookmark): where they
	// act, not a 404.
	for _, r := range []struct{ from, to string }{
		{"signin", ""}, {"signout", ""},
		{"projects/{project_id}/prompts", "projects/{project_id}"},
		{"projects/{project_id}/environments/{name}/remove", "projects/{project_id}/environments"},
		{"prompts/{prompt_id}/versions", "prompts/{prompt_id}"},
	} {
		m.HandleFunc("GET "+p+r.from, func(w http.ResponseWriter, req *http.Request) {
			to := r.to
			for _, id := range []string{"project_id", "prompt_id"} {
				to = strings.ReplaceAll(to, "{"+id+"}", url.PathEscape(req.PathValue(id)))
			}
			http.Redirect(w, req, p+to, http.StatusSeeOther)
		})
	}

	// Anything else under the prefix: a page that says so.
	m.HandleFunc(p, h.unrouted)
	h.mux = m
}

// unrouted answers a request no route takes: 405 with the Allow header
// when the path is a page or action of other methods (as the HTTP
// interface answers, OPTIONS included), else 404.
func (h *Handler) unrouted(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		probe := r.WithContext(r.Context())
		probe.Method = method
		if _, pattern := h.mux.Handler(probe); pattern != h.prefix {
			allow = append(allow, method)
			if method == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) == 0 {
		h.notFound(w, r, nil)
		return
	}
	slices.Sort(allow)
	list := strings.Join(allow, ", ")
	w.Header().Set("Allow", list)
	h.fail(w, r, nil, http.StatusMethodNotAllowed, "Method not allowed",
		"This address answers "+list+" only, not "+strings.ToValidUTF8(r.Method, "\uFFFD")+". Nothing was changed.")
}

// page returns a GET page for signed-in keys of role need at least.
// Without a session it sends the browser to sign in, and back here after.
func (h *Handler) page(need httpapi.Role, f func(*call)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{h: h, w: w, r: r}
		ok, err := h.signedIn(c)
		if err != nil {
			c.storeError(err)
			return
		}
		if !ok {
			http.Redirect(w, r, h.prefix+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if !allows(c.access.Role, need) {
			c.forbidden(need)
			return
		}
		if !c.fieldsOK() {
			return
		}
		f(c)
	}
}

// action returns a POST action for signed-in keys of role need at least:
// without a session (or with one whose key the Authenticator no longer
// knows) it is 401; without the session's CSRF token, 403; with a role
// that does not allow it, 403 too; in each case before the form is read
// further, and nothing changes.
func (h *Handler) action(need httpapi.Role, f func(*call)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := &call{h: h, w: w, r: r}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		ok, err := h.signedIn(c)
		if err != nil {
			c.storeError(err)
			return
		}
		if !ok {
			c.fail(http.StatusUnauthorized, errorData{Title: "Signed out", Message: "The session has ended, so nothing was changed. Sign in again, then repeat what you did."})
			return
		}
		if err := r.ParseForm(); err != nil {
			c.fail(http.StatusBadRequest, errorData{Title: "Invalid form", Message: "The form could not be read (at most 1 MiB). Nothing was changed."})
			return
		}
		if !validToken(r.PostForm.Get("csrf"), c.s.CSRF) {
			c.fail(http.StatusForbidden, errorData{Title: "Refused", Message: "The form's security token is missing or wrong (was it sent from an old page or another site?). Nothing was changed. Reload the page and try again."})
			return
		}
		if !allows(c.access.Role, need) {
			c.forbidden(need)
			return
		}
		if !c.fieldsOK() {
			return
		}
		f(c)
	}
}

// fieldsOK checks every field of the request's form and query, as every
// page and action reads them: a field given twice, or whose name or
// value is not valid UTF-8, is 400, naming it, before anything is read
// or changed. The interface's own forms never send either; taking the
// first of two values, or bytes that a page in UTF-8 cannot show, would
// act on what nobody saw.
func (c *call) fieldsOK() bool {
	query, err := url.ParseQuery(c.r.URL.RawQuery)
	if err != nil {
		c.fail(http.StatusBadRequest, errorData{Title: "Invalid address", Message: "The query of the address could not be read. Nothing was changed."})
		return false
	}
	for _, in := range []struct {
		vals url.Values
		what string
	}{{c.r.PostForm, "The form's field"}, {query, "The address's query parameter"}} {
		if name, problem := badField(in.vals); problem != "" {
			c.fail(http.StatusBadRequest, errorData{Title: "Invalid input", Message: in.what + " “" + name + "” " + problem + ". Nothing was changed."})
			return false
		}
	}
	return true
}

// badField returns the first field of vals, by name, that is given more
// than once or is not valid UTF-8, named for people, and what is wrong
// with it; problem is "" when every field is fine.
func badField(vals url.Values) (name, problem string) {
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		vs := vals[k]
		switch {
		case !utf8.ValidString(k):
			problem = "has a name that is not valid UTF-8"
		case len(vs) > 1:
			problem = "is given more than once"
		case !utf8.ValidString(vs[0]):
			problem = "is not valid UTF-8"
		default:
			continue
		}
		name = strings.ToValidUTF8(k, "\uFFFD")
		if r := []rune(name); len(r) > 64 {
			name = string(r[:64]) + "…"
		}
		return name, problem
	}
	return "", ""
}

// maxForm is the largest form read: the content of a version and its
// metadata fit with room to spare.
const maxForm = 1 << 20

// form returns the form value name with its line ends made \n: browsers
// send \r\n.
func (c *call) form(name string) string {
	return normalizeNewlines(c.r.PostForm.Get(name))
}

func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// safeNext returns next when it is a path under the prefix (where to go
// after signing in), else the prefix: never another site.
func (h *Handler) safeNext(next string) string {
	if !strings.HasPrefix(next, h.prefix) || strings.ContainsAny(next, "\\\r\n") || strings.HasPrefix(next, "//") ||
		strings.Contains(next, "/../") || strings.Contains(next, "/./") || strings.HasSuffix(next, "/..") {
		return h.prefix
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return h.prefix
	}
	return next
}
