package httpapi_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
)

// A project's environments over HTTP: listed, added, protected and
// removed by an admin key; every route that names an environment takes
// them and refuses any other name with a detail that lists them; a
// protected one changes only by an admin key's request.
func TestProjectEnvironments(t *testing.T) {
	is := is.New(t)
	base := newEnv(t)
	e, keys := roleKeys(t, base)
	admin, deploy := keys[httpapi.RoleAdmin], keys[httpapi.RoleDeploy]
	envs := "/v1/integration/projects/" + base.project.ID + "/environments"
	id := base.newPrompt(base.project.ID)["id"].(string)
	base.newVersion(id, `{"content":"one"}`)
	prompt := "/v1/integration/prompts/" + id

	list := e.call(keys[httpapi.RoleRead], "GET", envs, "").arr(t)
	is.Equal(len(list), 2)
	is.Equal(list[0]["name"], "production") // built-in ones first
	is.Equal(list[1]["name"], "staging")
	is.Equal(list[0]["protected"], false)

	r := e.call(admin, "GET", prompt+"?environment=canary", "")
	is.Equal(r.status, 400) // not yet one of the project's
	is.Equal(r.problem(t)["errors"].([]any)[0].(map[string]any)["detail"], "is not an environment of this project: production, staging")
	is.Equal(e.call(deploy, "PUT", envs+"/canary", `{}`).status, 403) // adding one needs admin
	r = e.call(admin, "PUT", envs+"/canary", `{"protected":true}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["name"], "canary")
	is.Equal(r.obj(t)["protected"], true)
	is.Equal(keysOf(r.obj(t)), []string{"created_at", "name", "protected"})
	is.Equal(len(e.call(admin, "GET", envs, "").arr(t)), 3)
	is.Equal(fieldsOf(t, e.call(admin, "PUT", envs+"/Canary", `{}`)), []string{"name"})
	is.Equal(e.call(admin, "PUT", "/v1/integration/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV/environments/canary", `{}`).status, 404)
	is.Equal(e.call(admin, "GET", "/v1/integration/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV/environments", "").status, 404)
	is.Equal(base.call(base.otherKey, "GET", envs, "").status, 404)             // a key that cannot see the project
	is.Equal(base.call(base.otherKey, "PUT", envs+"/canary", `{}`).status, 404) // changes nothing of it

	// Protected: a deploy key is refused, naming admin; an admin key is not.
	r = e.call(deploy, "PUT", prompt+"/environments/canary", `{"version_number":1}`)
	is.Equal(r.status, 403)
	is.True(strings.Contains(r.problem(t)["detail"].(string), "admin"))
	is.Equal(e.call(deploy, "POST", prompt+"/versions", `{"content":"two","environments":["canary"]}`).status, 403)
	is.Equal(e.call(deploy, "DELETE", prompt+"/environments/canary", "").status, 403)
	is.Equal(len(e.call(admin, "GET", prompt+"/versions", "").arr(t)), 1) // nothing was created
	is.Equal(e.call(admin, "PUT", prompt+"/environments/canary", `{"version_number":1}`).status, 200)
	is.True(e.call(deploy, "GET", prompt+"/environments/canary", "").obj(t)["active_version"] != nil)
	r = e.call(admin, "GET", "/v1/integration/projects/"+base.project.ID+"/prompts/"+base.do("GET", prompt, "").obj(t)["key"].(string)+"?environment=canary", "")
	is.Equal(r.status, 200) // read by key
	is.True(strings.Contains(r.header.Get("ETag"), "-canary-"))
	// Unprotected, a deploy key may.
	is.Equal(e.call(admin, "PUT", envs+"/canary", "").obj(t)["protected"], false)            // no body: false
	is.Equal(e.call(deploy, "POST", prompt+"/environments/canary/rollback", "").status, 409) // nothing to roll back to, past the protection
	is.Equal(e.call(deploy, "GET", prompt+"/deployments?environment=canary", "").status, 200)

	// Removal: refused while something is active there, and for a built-in one.
	is.Equal(e.call(admin, "DELETE", envs+"/canary", "").status, 409)
	is.Equal(e.call(admin, "DELETE", envs+"/production", "").status, 409)
	is.Equal(fieldsOf(t, e.call(admin, "DELETE", envs+"/Canary", "")), []string{"name"})
	is.Equal(e.call(admin, "DELETE", envs+"/nope", "").status, 404)
	is.Equal(e.call(deploy, "DELETE", envs+"/canary", "").status, 403)
	is.Equal(e.call(deploy, "DELETE", prompt+"/environments/canary", "").status, 204)
	is.Equal(e.call(admin, "DELETE", envs+"/canary", "").status, 204)
	r = e.call(admin, "GET", prompt+"/environments/canary", "")
	is.Equal(r.status, 400) // gone
	is.Equal(r.problem(t)["errors"].([]any)[0].(map[string]any)["detail"], "is not an environment of this project: production, staging")
	is.Equal(e.call(admin, "POST", prompt+"/render", `{"environment":"canary","variables":{}}`).status, 400)
}
