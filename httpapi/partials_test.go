package httpapi_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// version creates a version of the prompt at path.
func (e *env) version(path, body string) map[string]any {
	e.t.Helper()
	r := e.do("POST", path+"/versions", body)
	if r.status != 200 {
		e.t.Fatalf("create version: %d %s", r.status, r.body)
	}
	return r.obj(e.t)
}

// keyed creates a prompt with this key in the env's project and returns
// its path.
func (e *env) keyed(key string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"`+key+`","name":"`+key+`"}`)
	if r.status != 200 {
		e.t.Fatalf("create prompt %s: %d %s", key, r.status, r.body)
	}
	return "/v1/integration/prompts/" + r.obj(e.t)["id"].(string)
}

// conflict checks a 409 with code, whose detail holds each of names.
func conflict(t *testing.T, r resp, code string, names ...string) {
	t.Helper()
	if r.status != 409 {
		t.Fatalf("status %d, want 409: %s", r.status, r.body)
	}
	p := r.problem(t)
	if p["code"] != code {
		t.Fatalf("code %v, want %s: %s", p["code"], code, r.body)
	}
	for _, n := range names {
		if !strings.Contains(p["detail"].(string), n) {
			t.Fatalf("detail %q does not name %s", p["detail"], n)
		}
	}
}

func TestRenderIncludesPartials(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	header := e.keyed("support/header")
	e.version(header, `{"content":"Hello {{name}}","template_format":"dotprompt","environments":["production"]}`)
	e.version(header, `{"content":"Hi {{name}}","environments":["staging"]}`)
	main := e.keyed("main")
	v := e.version(main, `{"content":"{{role \"system\"}}{{> support/header}}.{{role \"user\"}}{{q}}","template_format":"dotprompt","environments":["production","staging"]}`)

	got := e.do("GET", main+"/versions/1", "").obj(t)
	is.Equal(got["partials"], []any{"support/header"}) // the version names its partials
	is.Equal(e.do("GET", header+"/versions/1", "").obj(t)["partials"], []any{})

	r := e.do("POST", main+"/render", `{"variables":{"name":"Ada","q":"Why?"}}`)
	is.Equal(r.status, 200) // name, read by the partial only, is not unused
	out := r.obj(t)
	is.Equal(out["text"], "Hello Ada.Why?")
	is.Equal(out["version_id"], v["id"])
	is.Equal(out["messages"].([]any)[0].(map[string]any)["role"], "system")
	r = e.do("POST", main+"/render", `{"environment":"staging","variables":{"name":"Ada","q":"Why?"}}`)
	is.Equal(r.obj(t)["text"], "Hi Ada.Why?") // staging's header
	r = e.do("POST", main+"/render", `{"version_number":1,"variables":{"name":"Ada","q":"Why?"}}`)
	is.Equal(r.obj(t)["text"], "Hello Ada.Why?") // by number: production's
	r = e.do("POST", main+"/render", `{"variables":{"name":"Ada","q":"Why?","nope":1}}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"variables.nope"})
	r = e.call(e.otherKey, "POST", main+"/render", `{"variables":{}}`)
	is.Equal(r.status, 404) // a key that may not see the prompt learns nothing of its partials
}

func TestRenderPartialConflicts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a, b := e.keyed("a"), e.keyed("b")
	e.version(a, `{"content":"{{> b}}","template_format":"dotprompt","environments":["production"],"allow_missing_partials":true}`)
	r := e.do("POST", a+"/render", `{"variables":{}}`)
	conflict(t, r, "partial_unavailable", `"b"`, "production") // no version of b active
	e.version(b, `{"content":"{{> a}}","template_format":"dotprompt","environments":["production"]}`)
	r = e.do("POST", a+"/render", `{"variables":{}}`)
	conflict(t, r, "partial_unavailable", "a → b → a") // the chain
	r = e.do("POST", b+"/render", `{"variables":{}}`)
	conflict(t, r, "partial_unavailable", "b → a → b")
	e.version(a, `{"content":"{{> missing}}","environments":["staging"],"allow_missing_partials":true}`)
	r = e.do("POST", a+"/render", `{"environment":"staging","variables":{}}`)
	conflict(t, r, "partial_unavailable", `"missing"`)         // no such prompt
	is.Equal(len(e.do("GET", a+"/deployments", "").arr(t)), 2) // rendering changed nothing

	// 17 partials deep is refused, 16 renders.
	paths := make([]string, 18)
	for i := range paths {
		paths[i] = e.keyed("d" + itoa(i))
	}
	for i := len(paths) - 1; i >= 0; i-- {
		content := "end"
		if i < len(paths)-1 {
			content = "{{> d" + itoa(i+1) + "}}"
		}
		e.version(paths[i], `{"content":"`+content+`","template_format":"dotprompt","environments":["production"]}`)
	}
	is.Equal(e.do("POST", paths[1]+"/render", `{"variables":{}}`).obj(t)["text"], "end")
	conflict(t, e.do("POST", paths[0]+"/render", `{"variables":{}}`), "partial_unavailable", "d0 → d1", "d16 → d17")

	// The size bound holds across partials and their loops.
	big := e.keyed("big")
	e.version(big, `{"content":"{{#each xs}}{{../s}}{{/each}}","template_format":"dotprompt","environments":["production"]}`)
	twice := e.keyed("twice")
	e.version(twice, `{"content":"{{> big}}{{> big}}","template_format":"dotprompt","environments":["production"]}`)
	s := strings.Repeat("x", 300<<10)
	r = e.do("POST", twice+"/render", `{"variables":{"s":"`+s+`","xs":[1,2,3,4,5,6,7,8]}}`)
	is.Equal(r.status, 400) // 16 × 300 KiB
	is.Equal(fieldsOf(t, r), []string{"variables"})
}

func TestPartialGuardsOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	header := e.keyed("header")
	e.version(header, `{"content":"Hello","environments":["production"]}`)
	main := e.keyed("main")

	// A version created active needs its partials active there.
	r := e.do("POST", main+"/versions", `{"content":"{{> header}}","template_format":"dotprompt","environments":["staging"]}`)
	conflict(t, r, "partial_unavailable", `"header"`, "staging")
	is.Equal(len(e.do("GET", main+"/versions", "").arr(t)), 0) // nothing stored
	r = e.do("POST", main+"/versions", `{"content":"{{> header}}","template_format":"dotprompt","environments":["production"]}`)
	is.Equal(r.status, 200)

	// So does an activation, unless allowed.
	r = e.do("PUT", main+"/environments/staging", `{"version_number":1}`)
	conflict(t, r, "partial_unavailable", `"header"`, "staging")
	is.Equal(e.do("GET", main+"?environment=staging", "").obj(t)["active_version"], nil)
	r = e.do("PUT", main+"/environments/staging", `{"version_number":1,"allow_missing_partials":true}`)
	is.Equal(r.status, 200)
	r = e.do("PUT", main+"/environments/staging", `{"version_number":1,"allow_missing_partials":1}`)
	is.Equal(r.status, 400) // a boolean
	is.Equal(fieldsOf(t, r), []string{"allow_missing_partials"})

	// Deactivating a partial in use needs force.
	r = e.do("DELETE", header+"/environments/production", "")
	conflict(t, r, "partial_in_use", `"main"`, `"header"`, "production")
	is.True(e.do("GET", header, "").obj(t)["active_version"] != nil) // still active
	r = e.do("DELETE", header+"/environments/production?force=yes", "")
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"force"})
	r = e.do("DELETE", header+"/environments/production?force=false", "")
	conflict(t, r, "partial_in_use", `"main"`)
	r = e.do("DELETE", header+"/environments/production?force=true&reason=retired", "")
	is.Equal(r.status, 204)
	is.Equal(e.do("GET", header, "").obj(t)["active_version"], nil)
	r = e.do("POST", main+"/render", `{"variables":{}}`)
	conflict(t, r, "partial_unavailable", `"header"`) // what force leaves

	// A rollback to a version whose partials are not active there.
	e.version(main, `{"content":"plain now","environments":["production"]}`)
	r = e.do("POST", main+"/environments/production/rollback", "")
	conflict(t, r, "partial_unavailable", `"header"`)
	r = e.do("POST", main+"/environments/production/rollback", `{"allow_missing_partials":true}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["active_version"].(map[string]any)["version_number"], jsonNumber("1"))

	// A partial that is not a prompt key is invalid content.
	r = e.do("POST", main+"/versions", `{"content":"{{> \"a b\"}}"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"content"})
}
