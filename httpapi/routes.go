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
		// The event log; with Accept: text/event-stream, its stream.
		{"GET /v1/integration/events", RoleRead, h.listEvents()},
		// Webhooks need RoleAdmin, reads included: a URL may hold a token.
		{"POST /v1/integration/webhooks", RoleAdmin, h.createWebhook()},
		{"GET /v1/integration/webhooks", RoleAdmin, h.listWebhooks()},
		{"GET /v1/integration/webhooks/{webhook_id}", RoleAdmin, h.readWebhook()},
		{"DELETE /v1/integration/webhooks/{webhook_id}", RoleAdmin, h.deleteWebhook()},
		{"GET /v1/integration/webhooks/{webhook_id}/deliveries", RoleAdmin, h.listDeliveries()},
	}
}

// handlerFunc is a route's handler, called once the key is known.
type handlerFunc func(w http.ResponseWriter, r *http.Request, a Access)

// route is one method and path of the interface.
type route struct {
	pattern string // "METHOD /path", a ServeMux pattern
	role    Role   // the least role that may use it
	handle  handlerFunc
}

// register adds the routes to the mux, each behind authentication, and
// answers everything else as problems: a known path with another method
// is 405 with the Allow header listing the path's methods, any other path
// 404. Authentication runs first in every case.
func (h *Handler) register(routes []route) {
	var paths []string
	allow := map[string][]string{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		h.mux.Handle(rt.pattern, h.authed(h.permitted(rt.role, rt.handle)))
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
