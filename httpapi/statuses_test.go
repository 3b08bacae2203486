package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// answered is one real response, and the operation it answers.
type answered struct {
	op     string // operationId
	method string // the operation's method and path, filled in
	path   string
	status int
	header http.Header
	body   []byte
}

// TestEveryStatusIsDeclared sends, for every operation, a real request for
// every status the operation can answer, and checks each response against
// that operation in openapi.yaml, as a validating proxy that matched the
// request to it would: a status the operation does not declare fails, and
// so does a declared status no request here answers.
//
// What an operation can answer follows from the order of checks. Every
// operation: 401 (no key), 403 (a role that does not allow it), 405, 500
// and 503 (the Authenticator failing). 405 because a proxy's router may
// map a request to an operation that the handler maps to another path: an
// escaped slash is part of an id to the handler, so POST
// /prompts/a%2Fversions is a POST of a prompt (405), which a router that
// decodes the path first takes for createVersion. Every operation with a
// request body: 400, 408 (the body not arriving before the server's read
// deadline), 413 and 415. Then what each one's rules, existence,
// precondition and conflicts give.
func TestEveryStatusIsDeclared(t *testing.T) {
	e := newEnv(t)
	pr := e.newPrompt(e.project.ID)
	id, key := pr["id"].(string), pr["key"].(string)
	other := e.newPrompt(e.project.ID)
	otherID, otherKey := other["id"].(string), other["key"].(string)
	e.newVersion(id, `{"content":"Hi {{name}}","environments":["production"]}`)
	e.newVersion(id, `{"content":"Bye {{other}}"}`)
	e.newVersion(id, `{"content":"Hello {{name}}","environments":["production"]}`) // something to roll back
	// A prompt that includes it in production (its deactivation there is
	// 409), and one whose partial is missing (its render is 409).
	includer := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(includer, `{"content":"{{> `+key+`}}","template_format":"dotprompt","environments":["production"]}`)
	loose := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(loose, `{"content":"{{> nowhere}}","template_format":"dotprompt","environments":["production"],"allow_missing_partials":true}`)
	unknown := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	P := "/v1/integration/prompts/" + id
	stale := `"1-` + id + `-production-1"`
	etag := e.do("GET", P, "").header.Get("ETag")
	byKey := "/v1/integration/projects/" + e.project.ID + "/prompts/" + key
	byKeyTag := e.do("GET", byKey, "").header.Get("ETag")
	hook := e.newWebhook(e.project.ID)
	H := "/v1/integration/webhooks/" + hook
	K := "/v1/integration/keys/" + e.do("POST", "/v1/integration/keys", `{"name":"to-revoke","role":"read"}`).obj(t)["id"].(string)

	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	type op struct{ id, method, path string }
	var ops []op // every operation, its path filled in for the prompt
	for _, rt := range allRoutes {
		path := strings.NewReplacer("{prompt_id}", id, "{project_id}", e.project.ID, "{version_number}", "1",
			"{environment}", "production", "{key}", key, "{webhook_id}", hook, "{key_id}", unknown).Replace(rt.pattern)
		route, _, err := d.router.FindRoute(httptest.NewRequest(rt.method, path, nil))
		if err != nil {
			t.Fatalf("%s %s: %v", rt.method, path, err)
		}
		ops = append(ops, op{route.Operation.OperationID, rt.method, path})
	}
	hasBody := func(o op) bool {
		route, _, _ := d.router.FindRoute(httptest.NewRequest(o.method, o.path, nil))
		return route.Operation.RequestBody != nil
	}
	var got []answered
	add := func(o op, r resp) { got = append(got, answered{o.id, o.method, o.path, r.status, r.header, r.body}) }

	// Every operation.
	zeroRole := e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
		return httpapi.Access{Name: "nobody", AllProjects: true}, nil
	})))
	failing := func(err error) *env {
		return e.withHandler(httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
			return httpapi.Access{}, err
		})))
	}
	broken, down := failing(errors.New("key table lost")), failing(prompts.Unavailable(errors.New("key server down")))
	small := e.withHandler(httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.WithBodyLimit(64))
	for _, o := range ops {
		add(o, e.call("", o.method, o.path, ""))
		add(o, zeroRole.call("any-key", o.method, o.path, ""))
		add(o, e.do("OPTIONS", o.path, ""))
		add(o, broken.call("any-key", o.method, o.path, ""))
		add(o, down.call("any-key", o.method, o.path, ""))
		if hasBody(o) {
			add(o, e.do(o.method, o.path, `{bad`))
			add(o, e.do(o.method, o.path, `{}`, "Content-Type", "text/plain"))
			add(o, small.do(o.method, o.path, `{"x":"`+strings.Repeat("x", 64)+`"}`))
			add(o, slowBody(t, e, o.method, o.path))
		}
	}

	// What each operation's own rules, existence, preconditions and
	// conflicts give; the reads first, while the tags they send are
	// current.
	byID := map[string]op{}
	for _, o := range ops {
		byID[o.id] = o
	}
	for _, c := range []struct {
		op, method, path, body string
		hdr                    []string
	}{
		{"listPrompts", "GET", "/v1/integration/prompts", "", nil},
		{"listPrompts", "GET", "/v1/integration/prompts?limit=0", "", nil},
		{"listPrompts", "GET", "/v1/integration/prompts?project_id=" + unknown, "", nil},
		{"readPrompt", "GET", P, "", nil},
		{"readPrompt", "GET", P, "", []string{"If-None-Match", etag}},
		{"readPrompt", "GET", P + "?environment=dev", "", nil},
		{"readPrompt", "GET", "/v1/integration/prompts/" + unknown, "", nil},
		{"listVersions", "GET", P + "/versions", "", nil},
		{"listVersions", "GET", P + "/versions?limit=0", "", nil},
		{"listVersions", "GET", "/v1/integration/prompts/" + unknown + "/versions", "", nil},
		{"readVersion", "GET", P + "/versions/1", "", nil},
		{"readVersion", "GET", P + "/versions/99", "", nil},
		{"readEnvironment", "GET", P + "/environments/production", "", nil},
		{"readEnvironment", "GET", P + "/environments/production", "", []string{"If-None-Match", etag}},
		{"readEnvironment", "GET", P + "/environments/dev", "", nil},
		{"readEnvironment", "GET", "/v1/integration/prompts/" + unknown + "/environments/production", "", nil},
		{"render", "POST", P + "/render", `{"version_number":1,"variables":{"name":"Ada"}}`, nil},
		{"render", "POST", P + "/render", `{"version_number":1,"variables":{}}`, nil},
		{"render", "POST", P + "/render", `{"version_number":99,"variables":{}}`, nil},
		{"render", "POST", "/v1/integration/prompts/" + loose + "/render", `{"variables":{}}`, nil},
		{"listDeployments", "GET", P + "/deployments", "", nil},
		{"listDeployments", "GET", P + "/deployments?environment=dev", "", nil},
		{"listDeployments", "GET", "/v1/integration/prompts/" + unknown + "/deployments", "", nil},
		{"readByKey", "GET", byKey, "", nil},
		{"readByKey", "GET", byKey, "", []string{"If-None-Match", byKeyTag}},
		{"readByKey", "GET", byKey + "?environment=dev", "", nil},
		{"readByKey", "GET", "/v1/integration/projects/" + e.project.ID + "/prompts/nope", "", nil},
		{"listProjects", "GET", "/v1/integration/projects", "", nil},
		{"listProjects", "GET", "/v1/integration/projects?limit=0", "", nil},
		{"readProject", "GET", "/v1/integration/projects/" + e.project.ID, "", nil},
		{"readProject", "GET", "/v1/integration/projects/" + unknown, "", nil},
		{"readSnapshot", "GET", "/v1/integration/projects/" + e.project.ID + "/snapshot", "", nil},
		{"readSnapshot", "GET", "/v1/integration/projects/" + unknown + "/snapshot", "", nil},
		{"listEnvironments", "GET", "/v1/integration/projects/" + e.project.ID + "/environments", "", nil},
		{"listEnvironments", "GET", "/v1/integration/projects/" + unknown + "/environments", "", nil},
		{"putEnvironment", "PUT", "/v1/integration/projects/" + e.project.ID + "/environments/canary", `{"protected":false}`, nil},
		{"putEnvironment", "PUT", "/v1/integration/projects/" + unknown + "/environments/canary", `{}`, nil},
		{"deleteEnvironment", "DELETE", "/v1/integration/projects/" + e.project.ID + "/environments/Canary", "", nil},
		{"deleteEnvironment", "DELETE", "/v1/integration/projects/" + e.project.ID + "/environments/production", "", nil},
		{"deleteEnvironment", "DELETE", "/v1/integration/projects/" + unknown + "/environments/canary", "", nil},
		{"deleteEnvironment", "DELETE", "/v1/integration/projects/" + e.project.ID + "/environments/canary", "", nil},
		{"createProject", "POST", "/v1/integration/projects", `{"name":"Brand new"}`, nil},
		{"createProject", "POST", "/v1/integration/projects", `{"name":"Again","slug":"brand-new"}`, nil},
		{"createPrompt", "POST", "/v1/integration/prompts", `{"project_id":"` + e.project.ID + `","key":"new","name":"N"}`, []string{"Idempotency-Key", "p1"}},
		{"createPrompt", "POST", "/v1/integration/prompts", `{"project_id":"` + unknown + `","key":"k","name":"N"}`, nil},
		{"createPrompt", "POST", "/v1/integration/prompts", `{"project_id":"` + e.project.ID + `","key":"` + key + `","name":"N"}`, nil},
		{"createPrompt", "POST", "/v1/integration/prompts", `{"project_id":"` + e.project.ID + `","key":"new2","name":"N"}`, []string{"Idempotency-Key", "p1"}},
		{"updatePrompt", "PATCH", P, `{"name":"Renamed"}`, nil},
		{"updatePrompt", "PATCH", "/v1/integration/prompts/" + unknown, `{"name":"N"}`, nil},
		{"updatePrompt", "PATCH", P, `{"key":"` + otherKey + `"}`, nil},
		{"createVersion", "POST", P + "/versions", `{"content":"c"}`, []string{"Idempotency-Key", "v1"}},
		{"createVersion", "POST", P + "/versions", `{"content":""}`, nil},
		{"createVersion", "POST", "/v1/integration/prompts/" + unknown + "/versions", `{"content":"c"}`, nil},
		{"createVersion", "POST", P + "/versions", `{"content":"{{x}}","environments":["production"]}`, nil},
		{"createVersion", "POST", P + "/versions", `{"content":"d"}`, []string{"Idempotency-Key", "v1"}},
		{"activate", "PUT", P + "/environments/staging", `{"version_number":1}`, nil},
		{"activate", "PUT", P + "/environments/dev", `{"version_number":1}`, nil},
		{"activate", "PUT", P + "/environments/staging", `{"version_number":99}`, nil},
		{"activate", "PUT", P + "/environments/production", `{"version_number":2}`, nil},
		{"activate", "PUT", P + "/environments/staging", `{"version_number":1}`, []string{"If-Match", stale}},
		{"deactivate", "DELETE", P + "/environments/staging", "", nil},
		{"deactivate", "DELETE", P + "/environments/dev", "", nil},
		{"deactivate", "DELETE", "/v1/integration/prompts/" + unknown + "/environments/staging", "", nil},
		{"deactivate", "DELETE", P + "/environments/staging", "", []string{"If-Match", stale}},
		{"deactivate", "DELETE", P + "/environments/production", "", nil}, // included by includer
		{"rollback", "POST", P + "/environments/production/rollback", "", []string{"Idempotency-Key", "r1"}},
		{"rollback", "POST", P + "/environments/dev/rollback", "", nil},
		{"rollback", "POST", "/v1/integration/prompts/" + unknown + "/environments/production/rollback", "", nil},
		{"rollback", "POST", "/v1/integration/prompts/" + otherID + "/environments/production/rollback", "", nil},
		{"rollback", "POST", P + "/environments/production/rollback", "", []string{"If-Match", stale}},
		{"rollback", "POST", P + "/environments/production/rollback", `{"reason":"again"}`, []string{"Idempotency-Key", "r1"}},
		{"listEvents", "GET", "/v1/integration/events", "", nil},
		{"listEvents", "GET", "/v1/integration/events?after=0", "", nil},
		{"listEvents", "GET", "/v1/integration/events?project_id=" + unknown, "", nil},
		{"createWebhook", "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/a"}`, nil},
		{"createWebhook", "POST", "/v1/integration/webhooks", `{"url":"http://127.0.0.1/a"}`, nil},
		{"createWebhook", "POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/a","project_id":"` + unknown + `"}`, nil},
		{"listWebhooks", "GET", "/v1/integration/webhooks", "", nil},
		{"listWebhooks", "GET", "/v1/integration/webhooks?limit=0", "", nil},
		{"readWebhook", "GET", H, "", nil},
		{"readWebhook", "GET", "/v1/integration/webhooks/" + unknown, "", nil},
		{"listDeliveries", "GET", H + "/deliveries", "", nil},
		{"listDeliveries", "GET", H + "/deliveries?limit=0", "", nil},
		{"listDeliveries", "GET", "/v1/integration/webhooks/" + unknown + "/deliveries", "", nil},
		{"deleteWebhook", "DELETE", H, "", nil},
		{"deleteWebhook", "DELETE", H, "", nil}, // gone
		{"createKey", "POST", "/v1/integration/keys", `{"name":"sk1","role":"read"}`, nil},
		{"createKey", "POST", "/v1/integration/keys", `{"name":"bad name","role":"read"}`, nil},
		{"createKey", "POST", "/v1/integration/keys", `{"name":"sk2","role":"read","project_ids":["` + unknown + `"]}`, nil},
		{"createKey", "POST", "/v1/integration/keys", `{"name":"sk1","role":"write"}`, nil},
		{"listKeys", "GET", "/v1/integration/keys", "", nil},
		{"listKeys", "GET", "/v1/integration/keys?limit=0", "", nil},
		{"revokeKey", "DELETE", K, "", nil},
		{"revokeKey", "DELETE", K, "", nil}, // gone
	} {
		o, ok := byID[c.op]
		if !ok {
			t.Fatalf("no operation %s", c.op)
		}
		add(o, e.do(c.method, c.path, c.body, c.hdr...))
	}
	// The request of the package doc: a router that decodes the path
	// first takes it for createVersion.
	add(byID["createVersion"], e.do("POST", "/v1/integration/prompts/"+id+"%2Fversions", `{"content":"c"}`))
	// The event stream, and a log read after the events kept (the
	// store's clock moved on past the retention).
	if _, s := e.openStream(t, e.key, ""); s != nil {
		add(byID["listEvents"], resp{status: 200, header: s.res.Header})
		s.close()
	}
	clock := &movable{}
	old := newEnvWith(t, setup{clock: clock.now})
	clock.add(prompts.DefaultEventRetention + time.Hour)
	old.newPrompt(old.project.ID)
	add(byID["listEvents"], old.do("GET", "/v1/integration/events?after=1", ""))
	// A project past a snapshot's bounds.
	huge := newEnv(t)
	add(byID["readSnapshot"], hugeSnapshot(t, huge))
	// A store without an event log or webhooks: 501.
	bare := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { return bareStore{s} }})
	for _, o := range ops {
		if lacks(bareStore{}, o.path) {
			add(o, bare.do(o.method, o.path, ""))
		}
	}

	answers := map[string]map[int]bool{}
	for _, a := range got {
		if answers[a.op] == nil {
			answers[a.op] = map[int]bool{}
		}
		answers[a.op][a.status] = true
		// Checked against the operation, whatever the handler's route.
		checkResponse(t, httptest.NewRequest(a.method, a.path, nil), "", a.status, a.header, a.body)
	}
	for _, o := range ops {
		if lacks(e.store, o.path) {
			t.Logf("%s: not checked: the store (%T) keeps no event log or webhooks", o.id, e.store)
			continue
		}
		route, _, _ := d.router.FindRoute(httptest.NewRequest(o.method, o.path, nil))
		var declared []int
		for s := range route.Operation.Responses.Map() {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Errorf("%s: response %q is not a status", o.id, s)
			}
			declared = append(declared, n)
		}
		slices.Sort(declared)
		answered := slices.Sorted(maps.Keys(answers[o.id]))
		if !slices.Equal(declared, answered) {
			t.Errorf("%s declares %v, answered %v", o.id, declared, answered)
		}
	}
}

// slowBody sends a request whose body stops halfway, to a server with a
// short read deadline: the handler answers 408.
func slowBody(t *testing.T, e *env, method, path string) resp {
	t.Helper()
	srv := httptest.NewUnstartedServer(httpapi.New(e.store, httpapi.WithAuthenticator(newKeysFor(t, e.key))))
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Config.WriteTimeout = 5 * time.Second
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"content":"hello"}`
	_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, e.key, len(body), body[:5]) // the rest never comes
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}
