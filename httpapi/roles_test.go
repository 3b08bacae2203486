package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// roleKeys returns an env whose handler knows a key of each role, for
// every project, and those keys by role.
func roleKeys(t *testing.T, e *env) (*env, map[httpapi.Role]string) {
	t.Helper()
	keys := httpapi.NewKeys()
	secrets := map[httpapi.Role]string{}
	for r := httpapi.RoleRead; r <= httpapi.RoleAdmin; r++ {
		secrets[r] = r.String() + "-key-0123456789"
		if err := keys.Add(httpapi.Key{Name: r.String(), Role: r, Secret: secrets[r]}); err != nil {
			t.Fatal(err)
		}
	}
	return e.withHandler(httpapi.WithAuthenticator(keys)), secrets
}

// Every role against every route: a role below the route's is 403, naming
// the role needed, and changes nothing; the others pass the check.
func TestRolesOnEveryRoute(t *testing.T) {
	base := newEnv(t)
	e, keys := roleKeys(t, base)
	id := base.newPrompt(base.project.ID)["id"].(string)
	base.newVersion(id, `{"content":"c","environments":["production","staging"]}`)
	base.newVersion(id, `{"content":"d","environments":["staging"]}`) // something to roll back
	hook := base.newWebhook(base.project.ID)
	for i, rt := range allRoutes {
		if lacks(base.store, rt.pattern) {
			continue
		}
		path := strings.ReplaceAll(fill(rt.pattern, e.project.ID, id, i), "{webhook_id}", hook)
		body := fill(rt.body, e.project.ID, id, i)
		for role := httpapi.RoleRead; role <= httpapi.RoleAdmin; role++ {
			t.Run(rt.method+" "+rt.pattern+" as "+role.String(), func(t *testing.T) {
				is := is.New(t)
				before := e.state(t)
				r := e.call(keys[role], rt.method, path, body)
				if role < rt.role {
					is.Equal(r.status, 403) // forbidden
					is.Equal(r.problem(t)["code"], "forbidden")
					is.Equal(r.problem(t)["detail"], "this request needs the "+rt.role.String()+" role") // naming the role
					is.Equal(e.state(t), before)                                                         // and nothing changed
					return
				}
				is.True(r.status != 403) // allowed
				is.True(r.status < 500)
			})
		}
	}
}

// A version created active in environments needs deploy, checked after
// the field rules; "environments": [] needs only write.
func TestCreatingAnActiveVersionIsDeploying(t *testing.T) {
	is := is.New(t)
	base := newEnv(t)
	e, keys := roleKeys(t, base)
	id := base.newPrompt(base.project.ID)["id"].(string)
	path := "/v1/integration/prompts/" + id + "/versions"
	before := e.state(t)
	r := e.call(keys[httpapi.RoleWrite], "POST", path, `{"content":"c","environments":["staging"]}`)
	is.Equal(r.status, 403)
	is.Equal(r.problem(t)["detail"], "this request needs the deploy role")
	is.Equal(e.state(t), before)                                                                                     // no version
	is.Equal(e.call(keys[httpapi.RoleWrite], "POST", path, `{"content":"","environments":["staging"]}`).status, 400) // field rules first
	is.Equal(e.call(keys[httpapi.RoleWrite], "POST", path, `{"content":"c","environments":[]}`).status, 200)
	is.Equal(e.call(keys[httpapi.RoleWrite], "POST", path, `{"content":"c","environments":null}`).status, 200)
	is.Equal(e.call(keys[httpapi.RoleDeploy], "POST", path, `{"content":"c","environments":["staging"]}`).status, 200)
}

// Permission comes after authentication and routing, before the media
// type, the size, the body and everything else.
func TestPermissionInTheOrderOfChecks(t *testing.T) {
	is := is.New(t)
	e, keys := roleKeys(t, newEnv(t))
	reader := keys[httpapi.RoleRead]
	is.Equal(e.call("wrong-key-0123456789", "POST", "/v1/integration/prompts", `{bad`).status, 401)
	is.Equal(e.call(reader, "GET", "/v1/integration/nope", "").status, 404)
	is.Equal(e.call(reader, "DELETE", "/v1/integration/projects", "").status, 405)
	is.Equal(e.call(reader, "POST", "/v1/integration/prompts", `{bad`, "Content-Type", "text/plain").status, 403)
	is.Equal(e.call(reader, "POST", "/v1/integration/prompts", strings.Repeat("x", 2<<20)).status, 403)
	is.Equal(e.call(reader, "PUT", "/v1/integration/prompts/nope/environments/dev", `{bad`).status, 403)
	is.Equal(e.call(reader, "HEAD", "/v1/integration/projects", "").status, 200) // HEAD is a GET
}

// The zero Role allows nothing: an Authenticator must say what a key may do.
func TestTheZeroRoleAllowsNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	h := e.withHandler(httpapi.WithAuthenticator(authFunc(func(_ context.Context, _ string) (httpapi.Access, error) {
		return httpapi.Access{Name: "nobody", AllProjects: true}, nil
	})))
	r := h.call("any-key", "GET", "/v1/integration/projects", "")
	is.Equal(r.status, 403)
	is.Equal(r.problem(t)["detail"], "this request needs the read role")
}

func TestRoleNames(t *testing.T) {
	is := is.New(t)
	for r := httpapi.RoleRead; r <= httpapi.RoleAdmin; r++ {
		got, err := httpapi.ParseRole(r.String())
		is.NoErr(err)
		is.Equal(got, r) // a role reads back from its name
	}
	for _, bad := range []string{"", "Read", "owner", "none"} {
		_, err := httpapi.ParseRole(bad)
		is.True(err != nil) // not a role
	}
	is.Equal(httpapi.Role(0).String(), "none")
}

// state is everything the store holds, in text: each prompt with its
// revision, and its versions and deployment records.
func (e *env) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	projects, _, err := e.store.ListProjects(ctx, prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		fmt.Fprintf(&b, "project %s %s\n", p.ID, p.Slug)
	}
	list, _, err := e.store.ListPrompts(ctx, prompts.PromptFilter{Page: prompts.Page{Limit: prompts.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list {
		fmt.Fprintf(&b, "%s %s %s %d\n", p.ID, p.Key, p.Name, p.Revision)
		vs, _, err := e.store.ListVersions(ctx, p.ID, prompts.Page{Limit: prompts.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %d versions\n", len(vs))
		ds, _, err := e.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID, Page: prompts.Page{Limit: prompts.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %d deployments\n", len(ds))
	}
	if ws, ok := prompts.WebhookStoreOf(e.store); ok {
		hooks, _, err := ws.ListWebhooks(ctx, prompts.Page{Limit: prompts.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks {
			fmt.Fprintf(&b, "webhook %s %s\n", h.ID, h.URL)
		}
	}
	return b.String()
}

// The key's name is the actor of every change it makes, a version created
// active included; an empty reason records none; a reason with NUL is
// refused.
func TestActorAndReason(t *testing.T) {
	is := is.New(t)
	base := newEnv(t)
	e, keys := roleKeys(t, base)
	id := base.newPrompt(base.project.ID)["id"].(string)
	deployer := keys[httpapi.RoleDeploy]
	is.Equal(e.call(deployer, "POST", "/v1/integration/prompts/"+id+"/versions", `{"content":"c","environments":["staging"]}`).status, 200)
	is.Equal(e.call(deployer, "PUT", "/v1/integration/prompts/"+id+"/environments/production", `{"version_number":1,"reason":""}`).status, 200)
	is.Equal(e.call(deployer, "DELETE", "/v1/integration/prompts/"+id+"/environments/production?reason=a%00b", "").status, 400)
	is.Equal(e.call(deployer, "POST", "/v1/integration/prompts/"+id+"/environments/staging/rollback", `{"reason":"a\u0000b"}`).status, 400)
	list := e.call(deployer, "GET", "/v1/integration/prompts/"+id+"/deployments", "").arr(t)
	is.Equal(len(list), 2)
	for _, d := range list {
		is.Equal(d["actor"], "deploy") // the key's name
		is.Equal(d["reason"], nil)     // "" is none
	}
}

// A reader is refused before its body or query is looked at, whatever
// is wrong with them.
func TestForbiddenBeforeTheInput(t *testing.T) {
	is := is.New(t)
	e, keys := roleKeys(t, newEnv(t))
	reader := keys[httpapi.RoleRead]
	path := "/v1/integration/prompts/nope/environments/staging"
	is.Equal(e.call(reader, "DELETE", path+"?reason=%zz&reason=x", "").status, 403)
	is.Equal(e.call(reader, "POST", path+"/rollback", `{bad`).status, 403)
	is.Equal(e.call(reader, "POST", path+"/rollback", `{}`, "Content-Type", "text/plain").status, 403)
	is.Equal(e.call(reader, "PATCH", "/v1/integration/prompts/nope", `[]`).status, 403)
}

// A name an Authenticator gives that cannot be an actor is its fault:
// 500 for a change (logged), while reads, which record nothing, go on.
func TestAnAuthenticatorsBadName(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	h := e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
		return httpapi.Access{Name: "bad\x00name", Role: httpapi.RoleAdmin, AllProjects: true}, nil
	})))
	is.Equal(h.call("any-key", "GET", "/v1/integration/prompts/"+id, "").status, 200)
	is.Equal(h.call("any-key", "PATCH", "/v1/integration/prompts/"+id, `{"name":"x"}`).status, 500)
	is.True(strings.Contains(h.logs.String(), "cannot be an actor"))
}

// Renaming is deploying: a PATCH that changes the key needs deploy,
// checked after the field rules, and changes nothing when refused; the
// key the prompt has, or a new name or description, need only write.
func TestRenamingIsDeploying(t *testing.T) {
	is := is.New(t)
	base := newEnv(t)
	e, keys := roleKeys(t, base)
	p := base.newPrompt(base.project.ID)
	id, key := p["id"].(string), p["key"].(string)
	path := "/v1/integration/prompts/" + id
	writer, deployer := keys[httpapi.RoleWrite], keys[httpapi.RoleDeploy]

	before := e.state(t)
	r := e.call(writer, "PATCH", path, `{"key":"renamed","name":"New name"}`)
	is.Equal(r.status, 403)
	is.Equal(r.problem(t)["code"], "forbidden")
	is.Equal(r.problem(t)["detail"], "this request needs the deploy role")                       // naming the role
	is.Equal(e.state(t), before)                                                                 // nothing changed, the name neither
	is.Equal(e.call(writer, "PATCH", path, `{"key":null}`).status, 400)                          // field rules first
	is.Equal(e.call(writer, "PATCH", path, `{"key":"not a key!"}`).status, 400)                  // field rules first
	is.Equal(e.call(writer, "PATCH", "/v1/integration/prompts/nope", `{"key":"x"}`).status, 404) // nothing to rename

	r = e.call(writer, "PATCH", path, `{"key":"`+key+`","name":"New name","description":"d"}`)
	is.Equal(r.status, 200) // the key it has: write is enough
	is.Equal(r.obj(t)["key"], key)
	is.Equal(r.obj(t)["name"], "New name")
	is.Equal(e.call(writer, "PATCH", path, `{"description":null}`).status, 200)

	r = e.call(deployer, "PATCH", path, `{"key":"renamed"}`)
	is.Equal(r.status, 200) // deploy renames
	is.Equal(r.obj(t)["key"], "renamed")
	is.Equal(e.call(keys[httpapi.RoleAdmin], "PATCH", path, `{"key":"again"}`).status, 200)

	// A writer that sees only some projects: a prompt it may not see is
	// 404, not 403, whatever the key.
	own := e.withHandler(httpapi.WithAuthenticator(writerOf(t, "writer-0123456789", base.other.ID)))
	is.Equal(own.call("writer-0123456789", "PATCH", path, `{"key":"x"}`).status, 404)
	is.Equal(own.call("writer-0123456789", "PATCH", path, `{"key":"again"}`).status, 404)
}

// writerOf returns Keys holding one write key for these projects.
func writerOf(t *testing.T, secret string, projectIDs ...string) *httpapi.Keys {
	t.Helper()
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "writer", Role: httpapi.RoleWrite, Secret: secret, ProjectIDs: projectIDs}); err != nil {
		t.Fatal(err)
	}
	return keys
}
