package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/promptkit/prompts"
)

// routes lists the whole interface, with the role each route needs; each
// handler is named after its operationId in openapi.yaml. Every route
// answers 401 before anything else when the key is missing or unknown; a
// known path with another method answers 405 with Allow, any other path
// 404 (see register); then a key whose role is below the route's is 403.
func (h *Handler) routes() []route {
	return []route{
		{"POST /v1/integration/prompts", RoleWrite, h.createPrompt()},
		{"GET /v1/integration/prompts", RoleRead, h.listPrompts()},
		{"GET /v1/integration/prompts/{prompt_id}", RoleRead, h.readPrompt()},
		// A PATCH that changes the key needs RoleDeploy: updatePrompt
		// checks that after the field rules.
		{"PATCH /v1/integration/prompts/{prompt_id}", RoleWrite, h.updatePrompt()},
		// A version created active in environments needs RoleDeploy too:
		// createVersion checks that after the field rules.
		{"POST /v1/integration/prompts/{prompt_id}/versions", RoleWrite, h.createVersion()},
		{"GET /v1/integration/prompts/{prompt_id}/versions", RoleRead, h.listVersions()},
		{"GET /v1/integration/prompts/{prompt_id}/versions/{version_number}", RoleRead, h.readVersion()},
		{"PUT /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleDeploy, h.activate()},
		{"DELETE /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleDeploy, h.deactivate()},
		{"GET /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleRead, h.readEnvironment()},
		{"POST /v1/integration/prompts/{prompt_id}/environments/{environment}/rollback", RoleDeploy, h.rollback()},
		{"GET /v1/integration/prompts/{prompt_id}/deployments", RoleRead, h.listDeployments()},
		{"POST /v1/integration/prompts/{prompt_id}/render", RoleRead, h.render()},
		{"GET /v1/integration/projects/{project_id}/prompts/{key...}", RoleRead, h.readByKey()},
		{"GET /v1/integration/projects", RoleRead, h.listProjects()},
		// Only a key of every project may create one: createProject
		// checks that.
		{"POST /v1/integration/projects", RoleAdmin, h.createProject()},
		{"GET /v1/integration/projects/{project_id}", RoleRead, h.readProject()},
		{"GET /v1/integration/projects/{project_id}/snapshot", RoleRead, h.readSnapshot()},
		{"GET /v1/integration/projects/{project_id}/environments", RoleRead, h.listEnvironments()},
		{"PUT /v1/integration/projects/{project_id}/environments/{name}", RoleAdmin, h.putEnvironment()},
		{"DELETE /v1/integration/projects/{project_id}/environments/{name}", RoleAdmin, h.deleteEnvironment()},
		// The event log; with Accept: text/event-stream, its stream.
		{"GET /v1/integration/events", RoleRead, h.listEvents()},
		// Webhooks need RoleAdmin, reads included: a URL may hold a token.
		{"POST /v1/integration/webhooks", RoleAdmin, h.createWebhook()},
		{"GET /v1/integration/webhooks", RoleAdmin, h.listWebhooks()},
		{"GET /v1/integration/webhooks/{webhook_id}", RoleAdmin, h.readWebhook()},
		{"DELETE /v1/integration/webhooks/{webhook_id}", RoleAdmin, h.deleteWebhook()},
		{"GET /v1/integration/webhooks/{webhook_id}/deliveries", RoleAdmin, h.listDeliveries()},
		// API keys need RoleAdmin; a key makes none above its own role.
		{"POST /v1/integration/keys", RoleAdmin, h.createKey()},
		{"GET /v1/integration/keys", RoleAdmin, h.listKeys()},
		{"DELETE /v1/integration/keys/{key_id}", RoleAdmin, h.revokeKey()},
	}
}

// handlerFunc is a route's handler, called once the key is known.
type handlerFunc func(w http.ResponseWriter, r *http.Request, a Access)

// lastFunc is the handler of a route whose path has one wildcard, one
// segment, and literal segments around it ("GET
// /v1/integration/prompts/{prompt_id}", "POST
// /v1/integration/prompts/{prompt_id}/render"), called once the key is
// known with that segment's value. ServeHTTP matches such a route itself,
// before the ServeMux (see direct).
type lastFunc func(w http.ResponseWriter, r *http.Request, a Access, value string)

// endpoint is a route's handler: a handlerFunc or a lastFunc.
type endpoint interface{ isEndpoint() }

func (handlerFunc) isEndpoint() {}
func (lastFunc) isEndpoint()    {}

// route is one method and path of the interface.
type route struct {
	pattern string // "METHOD /path", a ServeMux pattern
	role    Role   // the least role that may use it
	handle  endpoint
}

// direct is a route that ServeHTTP matches without the ServeMux: a GET or
// POST route whose path is literal segments, one wildcard segment, and
// literal segments again or nothing: read 3 and render, the two requests
// an application makes on its hot path. Such a path is matched by
// comparing a prefix and a suffix and finding no slash between them,
// where the ServeMux cleans the path, unescapes every segment, walks its
// tree and makes the slice of the wildcards' values: about a third of the
// API's own cost of read 3. It answers exactly what the ServeMux would
// (TestDirectRoutesAnswerAsTheMux): it takes only requests of its method
// (and HEAD for a GET) whose path needs no unescaping (URL.RawPath
// empty), where the segment's value is the path's own, and whose
// wildcard's segment is one segment of a clean path; it sets r.Pattern as
// the ServeMux does. The wildcard's value goes to the handler as an
// argument, and to r.PathValue only when the error observer is to see
// the request (report): setting it costs a map.
type direct struct {
	pattern string // as the ServeMux sets r.Pattern
	method  string // GET (which takes HEAD too) or POST
	prefix  string // the path up to the wildcard, with its slash
	suffix  string // the path after the wildcard, from its slash; "" when the wildcard ends the path
	name    string // the wildcard's name
	role    Role
	last    lastFunc
}

// newDirect returns the direct route of rt, whose handler is last. It
// panics unless rt's pattern is a GET or a POST of literal segments, one
// wildcard segment, and literal segments or nothing: a route table that
// does not hold is a programming error, seen at New.
func newDirect(rt route, last lastFunc) direct {
	method, path, _ := strings.Cut(rt.pattern, " ")
	open, shut := strings.IndexByte(path, '{'), strings.IndexByte(path, '}')
	ok := open > 0 && shut > open && path[open-1] == '/'
	var prefix, name, suffix string
	if ok {
		prefix, name, suffix = path[:open], path[open+1:shut], path[shut+1:]
	}
	if !ok || (method != http.MethodGet && method != http.MethodPost) || name == "" || name == "$" || strings.ContainsAny(name, "{}./") ||
		strings.ContainsAny(suffix, "{}") || (suffix != "" && (suffix[0] != '/' || suffix == "/" || !isCleanPath(suffix))) ||
		!isCleanPath(prefix) {
		panic("httpapi: route " + rt.pattern + " cannot be matched directly: want GET or POST, literal segments, one wildcard segment, and literal segments or nothing")
	}
	return direct{pattern: rt.pattern, method: method, prefix: prefix, suffix: suffix, name: name, role: rt.role, last: last}
}

// value returns the wildcard's value in path, when path is d's: the one
// segment between d's prefix and suffix, neither empty nor "." nor "..".
func (d *direct) value(path string) (string, bool) {
	v, ok := strings.CutPrefix(path, d.prefix)
	if ok && d.suffix != "" {
		v, ok = strings.CutSuffix(v, d.suffix)
	}
	if !ok || v == "" || v == "." || v == ".." || strings.IndexByte(v, '/') >= 0 {
		return "", false
	}
	return v, true
}

// matchDirect returns the direct route that r's path matches, with its
// wildcard's value, or nil: then the ServeMux routes r.
func (h *Handler) matchDirect(r *http.Request) (*direct, string) {
	if r.URL.RawPath != "" {
		return nil, ""
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	for i := range h.direct {
		d := &h.direct[i]
		if d.method != method {
			continue
		}
		if v, ok := d.value(r.URL.Path); ok {
			return d, v
		}
	}
	return nil, ""
}

// serveDirect serves r, whose path matched d with the value v, as the
// ServeMux's route would: authentication, the role, the handler.
func (h *Handler) serveDirect(w http.ResponseWriter, r *http.Request, d *direct, v string) {
	r.Pattern = d.pattern
	if a, ok := h.authenticate(w, r); ok && h.allowed(w, r, a, d.role) {
		d.last(w, r, a, v)
	}
}

// report tells the error observer (WithErrorObserver) of err, with r's
// path values set as the ServeMux sets them, also when a direct route
// served r.
func (h *Handler) report(r *http.Request, err error) {
	if h.observe == nil {
		return
	}
	for i := range h.direct {
		d := &h.direct[i]
		if r.Pattern == d.pattern && r.PathValue(d.name) == "" {
			if v, ok := d.value(r.URL.Path); ok {
				r.SetPathValue(d.name, v)
			}
		}
	}
	h.observe(r, err)
}

// register adds the routes to the mux, each behind authentication, and
// answers everything else as problems: a known path with another method
// is 405 with the Allow header listing the path's methods, any other path
// 404. Authentication runs first in every case. The routes of a lastFunc
// are also matched directly (see direct).
func (h *Handler) register(routes []route) {
	checkDirect(routes)
	var paths []string
	allow := map[string][]string{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		var handle handlerFunc
		switch f := rt.handle.(type) {
		case handlerFunc:
			handle = f
		case lastFunc:
			d := newDirect(rt, f)
			h.direct = append(h.direct, d)
			handle = func(w http.ResponseWriter, r *http.Request, a Access) { f(w, r, a, r.PathValue(d.name)) }
		default:
			panic("httpapi: route " + rt.pattern + " has no handler")
		}
		h.mux.Handle(rt.pattern, h.authed(h.permitted(rt.role, handle)))
		if _, ok := allow[path]; !ok {
			paths = append(paths, path)
		}
		allow[path] = append(allow[path], method)
		if method == http.MethodGet {
			allow[path] = append(allow[path], http.MethodHead)
		}
	}
	for _, path := range paths {
		methods := allow[path]
		slices.Sort(methods)
		h.mux.Handle(path, h.authed(h.methodNotAllowed(strings.Join(methods, ", "))))
	}
	h.mux.Handle("/", h.authed(h.notFound))
}

// checkDirect panics unless every route of a lastFunc can be matched
// directly (see newDirect) and is the only route of its paths: no other
// route may have a segment of its own, or another wildcard, where its
// wildcard is, with the same segments around it (the ServeMux could
// prefer it).
func checkDirect(routes []route) {
	for _, rt := range routes {
		f, ok := rt.handle.(lastFunc)
		if !ok {
			continue
		}
		d := newDirect(rt, f)
		for _, o := range routes {
			_, path, _ := strings.Cut(o.pattern, " ")
			rest, ok := strings.CutPrefix(path, d.prefix)
			if ok && d.suffix != "" {
				rest, ok = strings.CutSuffix(rest, d.suffix)
			}
			if ok && rest != "{"+d.name+"}" && !strings.Contains(rest, "/") {
				panic("httpapi: route " + o.pattern + " shares the paths of " + d.pattern + ", which is matched directly")
			}
		}
	}
}

func (h *Handler) notFound(w http.ResponseWriter, _ *http.Request, _ Access) {
	h.problem(w, kindOf(prompts.CodeNotFound), "no such resource", nil)
}

func (h *Handler) methodNotAllowed(allow string) handlerFunc {
	v := []string{allow}
	return func(w http.ResponseWriter, r *http.Request, _ Access) {
		w.Header()["Allow"] = v
		h.problem(w, kindMethodNotAllowed, "method "+r.Method+" is not allowed here; allowed: "+allow, nil)
	}
}
