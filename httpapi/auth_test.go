package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// fill fills a route's pattern and body with the ids of a prompt.
func fill(s, projectID, promptID string, n int) string {
	return strings.NewReplacer("{project_id}", projectID, "{prompt_id}", promptID,
		"{version_number}", "1", "{environment}", "staging", "{name}", "canary", "{n}", fmt.Sprint(n), "{key}", "k").Replace(s)
}

func TestEveryRouteNeedsAKey(t *testing.T) {
	e := newEnv(t)
	p := e.newPrompt(e.project.ID)
	e.newVersion(p["id"].(string), `{"content":"c"}`)
	var want []byte
	type rt = struct {
		method, pattern, body string
		role                  httpapi.Role
	}
	routes := append(allRoutes[:len(allRoutes):len(allRoutes)],
		rt{"GET", "/v1/integration/nope", "", 0},         // an unknown path
		rt{"DELETE", "/v1/integration/projects", "", 0},  // a wrong method
		rt{"GET", "/elsewhere", "", 0},                   // outside the interface
		rt{"GET", "/v1/integration//prompts", "", 0},     // an unclean path
		rt{"POST", "/v1/integration/prompts", `{bad`, 0}, // a bad body
	)
	for i, rt := range routes {
		path := fill(rt.pattern, e.project.ID, p["id"].(string), i)
		body := fill(rt.body, e.project.ID, p["id"].(string), i)
		for _, key := range []struct {
			name string
			hdr  []string
		}{
			{"no key", []string{"X-API-Key", "<none>"}},
			{"an empty key", []string{"X-API-Key", ""}},
			{"a wrong key", []string{"X-API-Key", "wrong-key"}},
			{"a key differing in case", []string{"X-API-Key", strings.ToUpper(e.key)}},
			{"a key with a prefix of a key", []string{"X-API-Key", e.key[:5]}},
			{"another scheme", []string{"X-API-Key", "<none>", "Authorization", "Bearer " + e.key}},
		} {
			t.Run(rt.method+" "+rt.pattern+" with "+key.name, func(t *testing.T) {
				is := is.New(t)
				r := e.call("", rt.method, path, body, key.hdr...)
				is.Equal(r.status, 401) // before any other check
				is.Equal(r.header.Get("WWW-Authenticate"), `APIKey header="X-API-Key"`)
				if want == nil {
					want = r.body
				}
				is.Equal(string(r.body), string(want)) // the same body whichever it was
			})
		}
	}
	is := is.New(t)
	is.Equal(e.do("PATCH", "/v1/integration/prompts/"+p["id"].(string), `{}`).status, 200) // nothing refused changed anything
	is.Equal(len(e.do("GET", "/v1/integration/prompts", "").arr(t)), 1)
}

func TestAKeySeesOnlyItsProjects(t *testing.T) {
	e := newEnv(t)
	p := e.newPrompt(e.project.ID) // in the project otherKey may not see
	id := p["id"].(string)
	e.newVersion(id, `{"content":"c","environments":["production","staging"]}`)
	hook := e.newWebhook(e.project.ID)
	for i, rt := range allRoutes {
		if lacks(e.store, rt.pattern) {
			continue
		}
		path := strings.ReplaceAll(fill(rt.pattern, e.project.ID, id, i), "{webhook_id}", hook)
		body := fill(rt.body, e.project.ID, id, i)
		t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
			is := is.New(t)
			r := e.call(e.otherKey, rt.method, path, body)
			unknown := e.call(e.otherKey, rt.method, strings.ReplaceAll(fill(rt.pattern, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV", i), "{webhook_id}", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), fill(rt.body, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAV", i))
			switch rt.pattern {
			case "/v1/integration/prompts", "/v1/integration/projects", "/v1/integration/events", "/v1/integration/webhooks", "/v1/integration/keys":
				if rt.method == "POST" && rt.pattern == "/v1/integration/projects" {
					is.Equal(r.status, 403) // it could not see the project it made
					return
				}
				if rt.method == "GET" {
					is.Equal(r.status, 200)
					is.True(!strings.Contains(string(r.body), e.project.ID)) // never in lists
					return
				}
			}
			is.Equal(r.status, 404)                        // as if it did not exist
			is.Equal(string(r.body), string(unknown.body)) // exactly as if
		})
	}
	is := is.New(t)
	got := e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)
	is.Equal(got["name"], p["name"])      // the refused PATCH changed nothing
	is.True(got["active_version"] != nil) // nor the refused DELETE
	is.Equal(got["latest_version_id"], e.do("GET", "/v1/integration/prompts/"+id+"/versions", "").arr(t)[0]["id"])
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/versions", "").arr(t)), 1) // nor the refused POST
	is.Equal(len(e.do("GET", "/v1/integration/prompts?project_id="+e.project.ID, "").arr(t)), 1)

	if !lacks(e.store, "/v1/integration/webhooks") {
		is.Equal(e.do("GET", "/v1/integration/webhooks/"+hook, "").status, 200) // nor the refused DELETE of the webhook
	}

	own := e.call(e.ownKey, "GET", "/v1/integration/prompts/"+id, "")
	is.Equal(own.status, 200) // its own project's key sees it
	is.Equal(e.call(e.ownKey, "PUT", "/v1/integration/prompts/"+id+"/environments/staging", `{"version_number":1}`).status, 200)
}

func TestNoAuthenticatorRefusesEveryKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	closed := e.withHandler() // New without WithAuthenticator
	for _, key := range []string{e.key, "anything"} {
		r := closed.call(key, "GET", "/v1/integration/projects", "")
		is.Equal(r.status, 401) // secure by default
	}
}

type authFunc func(ctx context.Context, key string) (httpapi.Access, error)

func (f authFunc) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	return f(ctx, key)
}

func TestAuthenticatorErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"unknown key", httpapi.ErrUnknownKey, 401},
		{"unknown key wrapped", fmt.Errorf("lookup: %w", httpapi.ErrUnknownKey), 401},
		{"unavailable", prompts.Unavailable(errors.New("key server down at 10.0.0.7")), 503},
		{"any other error", errors.New("key table corrupt: SELECT secret FROM keys"), 500},
		{"a not-found error", &prompts.Error{Code: prompts.CodeNotFound, Message: "SELECT found no key"}, 500},
		{"an invalid-input error", prompts.Invalid("key", "SELECT says malformed"), 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			h := e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
				return httpapi.Access{}, tc.err
			})))
			r := h.call("some-key", "GET", "/v1/integration/projects", "")
			is.Equal(r.status, tc.status)
			is.True(!strings.Contains(string(r.body), "10.0.0.7")) // no internals in the body
			is.True(!strings.Contains(string(r.body), "SELECT"))
			if tc.status == 500 {
				is.True(strings.Contains(h.logs.String(), "SELECT")) // the cause is logged
			}
			if tc.status == 503 {
				is.True(r.header.Get("Retry-After") != "")
			}
		})
	}
}

func TestCustomAuthenticator(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.newPrompt(e.project.ID)
	var seen []string
	h := e.withHandler(httpapi.WithAuthenticator(authFunc(func(_ context.Context, key string) (httpapi.Access, error) {
		seen = append(seen, key)
		if key == "team-key" {
			return httpapi.Access{Role: httpapi.RoleRead, ProjectIDs: []string{e.other.ID}}, nil
		}
		return httpapi.Access{}, httpapi.ErrUnknownKey
	})))
	is.Equal(len(h.call("team-key", "GET", "/v1/integration/prompts", "").arr(t)), 0) // the project it may see has no prompts
	is.Equal(h.call("", "GET", "/v1/integration/prompts", "").status, 401)
	is.Equal(seen, []string{"team-key"}) // a missing key never reaches the authenticator
}

func TestTheZeroAccessSeesNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	h := e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
		return httpapi.Access{Role: httpapi.RoleAdmin}, nil // known, but for no project
	})))
	is.Equal(len(h.call("k", "GET", "/v1/integration/prompts", "").arr(t)), 0)  // not every prompt
	is.Equal(len(h.call("k", "GET", "/v1/integration/projects", "").arr(t)), 0) // not every project
	is.Equal(h.call("k", "GET", "/v1/integration/prompts/"+id, "").status, 404)
	is.Equal(h.call("k", "GET", "/v1/integration/prompts?project_id="+e.project.ID, "").status, 404)
}

func TestKeys(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	keys := httpapi.NewKeys()
	const admin, team = "admin-secret-0123456789", "team-secret-0123456789"
	is.NoErr(keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: admin}))                                      // every project
	is.NoErr(keys.Add(httpapi.Key{Name: "team.a_1-x", Role: httpapi.RoleRead, Secret: team, ProjectIDs: []string{"p1", "p2"}})) // two projects
	for _, tc := range []struct {
		why string
		key httpapi.Key
	}{
		{"no secret", httpapi.Key{Name: "k", Role: httpapi.RoleRead}},
		{"a short secret", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: "0123456789abcde"}},
		{"no name", httpapi.Key{Role: httpapi.RoleRead, Secret: "a-long-enough-secret"}},
		{"a name with a space", httpapi.Key{Name: "a b", Role: httpapi.RoleRead, Secret: "a-long-enough-secret"}},
		{"a name of 65", httpapi.Key{Name: strings.Repeat("n", 65), Role: httpapi.RoleRead, Secret: "a-long-enough-secret"}},
		{"no role", httpapi.Key{Name: "k", Secret: "a-long-enough-secret"}},
		{"an unknown role", httpapi.Key{Name: "k", Role: httpapi.RoleAdmin + 1, Secret: "a-long-enough-secret"}},
		{"an empty project id", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: "a-long-enough-secret", ProjectIDs: []string{"p1", ""}}},
		{"a name taken", httpapi.Key{Name: "admin", Role: httpapi.RoleRead, Secret: "a-long-enough-secret"}},
		{"a secret taken", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: team}},
		{"a hash of a secret taken", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Hash: sha256Hex(team)}},
		{"a secret and a hash", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Secret: "a-long-enough-secret", Hash: sha256Hex("x")}},
		{"a hash without its prefix", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Hash: strings.TrimPrefix(sha256Hex("x"), "sha256:")}},
		{"a short hash", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Hash: sha256Hex("x")[:70]}},
		{"a hash that is not hex", httpapi.Key{Name: "k", Role: httpapi.RoleRead, Hash: "sha256:" + strings.Repeat("g", 64)}},
	} {
		err := keys.Add(tc.key)
		is.True(err != nil) // refused
		if tc.key.Secret != "" {
			is.True(!strings.Contains(err.Error(), tc.key.Secret)) // the error never shows the secret
		}
	}
	is.NoErr(keys.Add(httpapi.Key{Name: "hashed", Role: httpapi.RoleDeploy, Hash: sha256Hex("the-hashed-secret-xyz")})) // a secret given by its hash
	a, err := keys.Authenticate(ctx, "the-hashed-secret-xyz")
	is.NoErr(err)
	is.Equal(a.Name, "hashed")
	is.Equal(a.Role, httpapi.RoleDeploy)
	a, err = keys.Authenticate(ctx, admin)
	is.NoErr(err)
	is.Equal(a.Name, "admin")
	is.Equal(a.Role, httpapi.RoleAdmin)
	is.True(a.AllProjects)
	is.True(a.Allows("anything"))
	a, err = keys.Authenticate(ctx, team)
	is.NoErr(err)
	is.Equal(a.Role, httpapi.RoleRead)
	is.True(!a.AllProjects)
	is.True(a.Allows("p1"))
	is.True(a.Allows("p2"))
	is.True(!a.Allows("p3"))
	is.True(!a.Allows(""))
	a.ProjectIDs[0] = "changed"
	a, _ = keys.Authenticate(ctx, team)
	is.True(a.Allows("p1")) // the Access handed out is a copy
	for _, k := range []string{"", "nope", "admin", "Admin-secret-0123456789", admin + " ", team[:len(team)-1], "sha256:" + sha256Hex(team)} {
		_, err := keys.Authenticate(ctx, k)
		is.True(errors.Is(err, httpapi.ErrUnknownKey)) // k is unknown
	}
	is.True(!httpapi.Access{}.Allows("p1")) // the zero Access sees nothing
}

func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	for _, tc := range []struct {
		path, allow string
	}{
		{"/v1/integration/prompts", "GET, HEAD, POST"},
		{"/v1/integration/prompts/" + id, "GET, HEAD, PATCH"},
		{"/v1/integration/prompts/" + id + "/versions", "GET, HEAD, POST"},
		{"/v1/integration/prompts/" + id + "/versions/1", "GET, HEAD"},
		{"/v1/integration/prompts/" + id + "/environments/staging", "DELETE, GET, HEAD, PUT"},
		{"/v1/integration/prompts/" + id + "/environments/staging/rollback", "POST"},
		{"/v1/integration/prompts/" + id + "/deployments", "GET, HEAD"},
		{"/v1/integration/projects/" + id + "/prompts/a/b", "GET, HEAD"},
		{"/v1/integration/projects", "GET, HEAD, POST"},
		{"/v1/integration/projects/" + e.project.ID, "GET, HEAD"},
	} {
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "BREW"} {
			if strings.Contains(tc.allow, method) {
				continue
			}
			t.Run(method+" "+tc.path, func(t *testing.T) {
				is := is.New(t)
				r := e.do(method, tc.path, "")
				is.Equal(r.status, 405)
				is.Equal(r.header.Get("Allow"), tc.allow) // lists the path's methods
				is.Equal(r.problem(t)["code"], "method_not_allowed")
			})
		}
	}
	is := is.New(t)
	r := e.do("DELETE", "/v1/integration/prompts/nope", `{bad`, "Content-Type", "text/plain")
	is.Equal(r.status, 405) // route and method before media type, body and existence
}

func TestUnknownPath(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	for _, path := range []string{
		"/v1/integration",
		"/v1/integration/",
		"/v1/integration/nope",
		"/v1/integration/prompts/",
		"/v1/integration/prompts/" + id + "/",
		"/v1/integration/prompts/" + id + "/nope",
		"/v1/integration/prompts/" + id + "/versions/1/x",
		"/v1/integration/prompts/" + id + "/environments",
		"/v1/integration/projects/",
		"/v1/integration//prompts",
		"/v1/integration/./prompts",
		"/v1/integration/x/../prompts",
		"/v1/integration/prompts/%2E%2E",
		"/v2/integration/prompts",
		"/",
		"/V1/INTEGRATION/PROMPTS",
	} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest("GET", e.srv.URL+path, nil)
			is.NoErr(err)
			req.URL.Opaque = path // send the path as written, unclean ones too
			req.Header.Set("X-API-Key", e.key)
			r := e.send(req)
			is.Equal(r.status, 404) // a problem, not a redirect or plain text
			is.Equal(r.problem(t)["code"], "not_found")
		})
	}
}

// sha256Hex returns the sha256: form of secret's hash.
func sha256Hex(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(h[:])
}

// A request with two X-API-Key headers is 401, whichever they are, with
// the body of any 401.
func TestTwoKeysAreNoKey(t *testing.T) {
	e := newEnv(t)
	want := e.call("", "GET", "/v1/integration/projects", "")
	for _, keys := range [][]string{
		{e.key, e.key},
		{e.key, "wrong-key-0123456789"},
		{"wrong-key-0123456789", e.key},
		{e.ownKey, e.key},
		{"", e.key},
	} {
		t.Run(strings.Join(keys, " and "), func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest("GET", e.srv.URL+"/v1/integration/projects", nil)
			is.NoErr(err)
			req.Header["X-Api-Key"] = keys // two header lines
			r := e.send(req)
			is.Equal(r.status, 401)
			is.Equal(r.header.Get("WWW-Authenticate"), `APIKey header="X-API-Key"`)
			is.Equal(string(r.body), string(want.body)) // as any 401
		})
	}
}
