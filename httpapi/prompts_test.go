package httpapi_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts/httpapi"
)

func TestCreatePrompt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"support/greeting","name":"Greeting"}`)
	is.Equal(r.status, 200) // every success is 200, creates included
	p := r.obj(t)
	is.Equal(keysOf(p), promptFields) // exactly the fields of response 1
	is.Equal(p["project_id"], e.project.ID)
	is.Equal(p["key"], "support/greeting")
	is.Equal(p["name"], "Greeting")
	is.Equal(p["description"], nil)       // absent description is null
	is.Equal(p["latest_version_id"], nil) // no versions yet
	is.True(timestampRE.MatchString(p["created_at"].(string)))
	is.Equal(r.header.Get("Location"), "prompts/"+p["id"].(string)) // a relative reference
	got := e.send(mustRequest(t, "GET", r.location(t).String(), e.key))
	is.Equal(got.status, 200) // Location names the new prompt
	is.Equal(got.obj(t)["id"], p["id"])
}

func TestCreatePromptDescription(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"a","name":"A","description":"does a"}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["description"], "does a")
	r = e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"b","name":"B","description":null}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["description"], nil) // null is the same as absent
	r = e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"c","name":"C","description":""}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["description"], "") // an empty description is kept, not null
}

func TestCreatePromptFieldRules(t *testing.T) {
	e := newEnv(t)
	pid := e.project.ID
	for _, tc := range []struct {
		name, body string
		status     int
		fields     []string // the fields the problem names
	}{
		{"every required field missing", `{}`, 400, []string{"project_id", "key", "name"}},
		{"required fields null", `{"project_id":null,"key":null,"name":null}`, 400, []string{"project_id", "key", "name"}},
		{"empty key", `{"project_id":"` + pid + `","key":"","name":"N"}`, 400, []string{"key"}},
		{"key of 128 characters", `{"project_id":"` + pid + `","key":"` + strings.Repeat("k", 128) + `","name":"N"}`, 200, nil},
		{"key of 129 characters", `{"project_id":"` + pid + `","key":"` + strings.Repeat("k", 129) + `","name":"N"}`, 400, []string{"key"}},
		{"key with every allowed character", `{"project_id":"` + pid + `","key":"Az09._-/x","name":"N"}`, 200, nil},
		{"key starting with a dot", `{"project_id":"` + pid + `","key":".x","name":"N"}`, 400, []string{"key"}},
		{"key starting with a slash", `{"project_id":"` + pid + `","key":"/x","name":"N"}`, 400, []string{"key"}},
		{"key with a space", `{"project_id":"` + pid + `","key":"a b","name":"N"}`, 400, []string{"key"}},
		{"key with a non-ASCII letter", `{"project_id":"` + pid + `","key":"caf\u00e9","name":"N"}`, 400, []string{"key"}},
		{"empty name", `{"project_id":"` + pid + `","key":"k","name":""}`, 400, []string{"name"}},
		{"name only white space", `{"project_id":"` + pid + `","key":"k","name":" \t\n"}`, 400, []string{"name"}},
		{"name of 256 code points", `{"project_id":"` + pid + `","key":"n256","name":"` + strings.Repeat("é", 256) + `"}`, 200, nil},
		{"name of 257 code points", `{"project_id":"` + pid + `","key":"k","name":"` + strings.Repeat("é", 257) + `"}`, 400, []string{"name"}},
		{"description of 4096 code points", `{"project_id":"` + pid + `","key":"d4096","name":"N","description":"` + strings.Repeat("é", 4096) + `"}`, 200, nil},
		{"description of 4097 code points", `{"project_id":"` + pid + `","key":"k","name":"N","description":"` + strings.Repeat("é", 4097) + `"}`, 400, []string{"description"}},
		{"NUL in the name", `{"project_id":"` + pid + `","key":"k","name":"a\u0000b"}`, 400, []string{"name"}},
		{"NUL in the description", `{"project_id":"` + pid + `","key":"k","name":"N","description":"\u0000"}`, 400, []string{"description"}},
		{"NUL in the key", `{"project_id":"` + pid + `","key":"k\u0000","name":"N"}`, 400, []string{"key"}},
		{"several invalid fields at once", `{"project_id":"` + pid + `","key":"-","name":" "}`, 400, []string{"key", "name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/integration/prompts", tc.body)
			is.Equal(r.status, tc.status) // status
			if tc.status == 400 {
				is.Equal(fieldsOf(t, r), tc.fields) // the problem names the invalid fields
				for _, f := range tc.fields {
					is.True(strings.Contains(r.problem(t)["detail"].(string), f)) // the detail names the field
				}
			}
		})
	}
}

func TestCreatePromptProjectMustBeVisible(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, key, projectID string
	}{
		{"unknown project", e.key, "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"malformed project id", e.key, "nope"},
		{"project of another key", e.ownKey, e.other.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.call(tc.key, "POST", "/v1/integration/prompts", `{"project_id":"`+tc.projectID+`","key":"k","name":"N"}`)
			is.Equal(r.status, 404)
			is.Equal(r.problem(t)["detail"], "project not found")
		})
	}
	is := is.New(t)
	r := e.call(e.ownKey, "POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"k","name":"N"}`)
	is.Equal(r.status, 200) // its own project
	r = e.call(e.key, "GET", "/v1/integration/prompts?project_id="+e.other.ID, "")
	is.Equal(len(r.arr(t)), 0) // nothing was created in the other project
}

func TestCreatePromptKeyConflict(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := func(project, key string) string {
		return `{"project_id":"` + project + `","key":"` + key + `","name":"N"}`
	}
	is.Equal(e.do("POST", "/v1/integration/prompts", body(e.project.ID, "greeting")).status, 200)
	r := e.do("POST", "/v1/integration/prompts", body(e.project.ID, "greeting"))
	is.Equal(r.status, 409) // the key is taken in the project
	is.Equal(r.problem(t)["code"], "conflict")
	is.Equal(e.do("POST", "/v1/integration/prompts", body(e.project.ID, "Greeting")).status, 200) // keys are case-sensitive
	is.Equal(e.do("POST", "/v1/integration/prompts", body(e.other.ID, "greeting")).status, 200)   // unique within a project only
}

func TestReadPrompt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.newPrompt(e.project.ID)
	id := p["id"].(string)
	r := e.do("GET", "/v1/integration/prompts/"+id, "")
	is.Equal(r.status, 200)
	got := r.obj(t)
	is.Equal(keysOf(got), activePromptFields) // read 3 has no created_at
	is.Equal(got["active_version"], nil)      // nothing active: null
	is.Equal(got["latest_version_id"], nil)

	v1 := e.newVersion(id, `{"content":"one","change_summary":"first","metadata_":{"model":"m"}}`)
	got = e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)
	is.Equal(got["active_version"], nil) // a new version is active nowhere
	is.Equal(got["latest_version_id"], v1["id"])

	e.do("PUT", "/v1/integration/prompts/"+id+"/environments/production", `{"version_number":1}`)
	got = e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)
	av := got["active_version"].(map[string]any)
	is.Equal(keysOf(av), versionFields) // active_version is shaped as response 2: no change_summary
	is.Equal(av["id"], v1["id"])
	is.Equal(av["content"], "one")
	is.Equal(av["metadata_"], map[string]any{"model": "m"})
	got = e.do("GET", "/v1/integration/prompts/"+id+"?environment=production", "").obj(t)
	is.Equal(got["active_version"].(map[string]any)["id"], v1["id"]) // production, named
	got = e.do("GET", "/v1/integration/prompts/"+id+"?environment=staging", "").obj(t)
	is.Equal(got["active_version"], nil) // nothing in staging

	for _, q := range []string{"?environment=prod", "?environment=", "?environment=Production", "?environment=staging&environment=production", "?environment=%zz"} {
		r := e.do("GET", "/v1/integration/prompts/"+id+q, "")
		is.Equal(r.status, 400)                           // an environment other than the two
		is.Equal(fieldsOf(t, r), []string{"environment"}) // names the parameter
		is.Equal(r.problem(t)["code"], "invalid_request") // code
	}
	for _, bad := range []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope", strings.ToLower(id), id + "0"} {
		r := e.do("GET", "/v1/integration/prompts/"+bad, "")
		is.Equal(r.status, 404) // unknown or malformed id
		is.Equal(r.problem(t)["detail"], "prompt not found")
	}
	r = e.do("GET", "/v1/integration/prompts/nope?environment=Bad", "")
	is.Equal(r.status, 400) // field rules come before existence
	r = e.do("HEAD", "/v1/integration/prompts/"+id, "")
	is.Equal(r.status, 200) // HEAD is GET without the body
	is.Equal(len(r.body), 0)
}

func TestUpdatePrompt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.newPrompt(e.project.ID)
	id := p["id"].(string)
	path := "/v1/integration/prompts/" + id

	r := e.do("PATCH", path, `{}`)
	is.Equal(r.status, 200) // {} is a valid no-op
	got := r.obj(t)
	is.Equal(keysOf(got), promptFields) // response 4 has created_at
	is.Equal(got, p)                    // nothing changed

	got = e.do("PATCH", path, `{"description":"now described"}`).obj(t)
	is.Equal(got["description"], "now described")
	is.Equal(got["name"], p["name"]) // absent fields stay unchanged
	is.Equal(got["key"], p["key"])

	got = e.do("PATCH", path, `{"name":"Renamed","key":"renamed/key"}`).obj(t)
	is.Equal(got["name"], "Renamed")
	is.Equal(got["key"], "renamed/key")
	is.Equal(got["description"], "now described") // absent description stays

	got = e.do("PATCH", path, `{"description":null}`).obj(t)
	is.Equal(got["description"], nil) // null clears the description

	for _, tc := range []struct{ body, field string }{
		{`{"key":null}`, "key"},
		{`{"name":null}`, "name"},
		{`{"key":""}`, "key"},
		{`{"name":"   "}`, "name"},
		{`{"key":"bad key"}`, "key"},
		{`{"description":"` + strings.Repeat("x", 4097) + `"}`, "description"},
	} {
		r := e.do("PATCH", path, tc.body)
		is.Equal(r.status, 400)                      // tc.body
		is.Equal(fieldsOf(t, r), []string{tc.field}) // names the field
	}
	is.Equal(e.do("GET", path, "").obj(t)["key"], "renamed/key") // refused updates changed nothing

	other := e.newPrompt(e.project.ID)
	r = e.do("PATCH", path, `{"key":"`+other["key"].(string)+`"}`)
	is.Equal(r.status, 409) // another prompt of the project has this key
	r = e.do("PATCH", path, `{"key":"renamed/key"}`)
	is.Equal(r.status, 200) // its own key is no clash
	r = e.do("PATCH", "/v1/integration/prompts/01ARZ3NDEKTSV4RRFFQ69G5FAV", `{"name":"x"}`)
	is.Equal(r.status, 404) // unknown prompt
	r = e.do("PATCH", "/v1/integration/prompts/01ARZ3NDEKTSV4RRFFQ69G5FAV", `{"name":" "}`)
	is.Equal(r.status, 400) // field rules before existence
	r = e.do("PATCH", "/v1/integration/prompts/nope", `{"key":"`+other["key"].(string)+`"}`)
	is.Equal(r.status, 404) // existence before conflicts
}

func TestListPrompts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a := e.newPrompt(e.project.ID)
	b := e.newPrompt(e.other.ID)
	c := e.newPrompt(e.project.ID)

	r := e.do("GET", "/v1/integration/prompts?project_id="+e.project.ID, "")
	is.Equal(r.status, 200)
	list := r.arr(t)
	is.Equal(len(list), 2)
	is.Equal(list[0], a) // oldest first, each as in response 1
	is.Equal(list[1], c)
	is.Equal(r.header.Get("Link"), "") // no more pages

	list = e.do("GET", "/v1/integration/prompts", "").arr(t)
	is.Equal(len(list), 3) // without project_id: every prompt the key may see
	is.Equal(list[1], b)
	list = e.call(e.ownKey, "GET", "/v1/integration/prompts", "").arr(t)
	is.Equal(len(list), 2) // a key for one project sees only its prompts
	is.Equal(list[0]["id"], a["id"])
	is.Equal(list[1]["id"], c["id"])

	list = e.do("GET", "/v1/integration/prompts?project_id="+e.project.ID+"&key="+c["key"].(string), "").arr(t)
	is.Equal(len(list), 1) // by key within a project: zero or one
	is.Equal(list[0]["id"], c["id"])
	list = e.do("GET", "/v1/integration/prompts?project_id="+e.project.ID+"&key=missing", "").arr(t)
	is.Equal(len(list), 0) // an unknown key is an empty list, not an error
	list = e.do("GET", "/v1/integration/prompts?key="+b["key"].(string), "").arr(t)
	is.Equal(len(list), 1) // by key across the projects the key sees
	list = e.call(e.ownKey, "GET", "/v1/integration/prompts?key="+b["key"].(string), "").arr(t)
	is.Equal(len(list), 0) // not across projects it does not see

	for _, q := range []string{"project_id=01ARZ3NDEKTSV4RRFFQ69G5FAV", "project_id=nope", "project_id="} {
		r := e.do("GET", "/v1/integration/prompts?"+q, "")
		is.Equal(r.status, 404) // unknown project
		is.Equal(r.problem(t)["detail"], "project not found")
	}
	r = e.call(e.ownKey, "GET", "/v1/integration/prompts?project_id="+e.other.ID, "")
	is.Equal(r.status, 404) // a project the key may not see
	is.Equal(r.problem(t)["detail"], "project not found")

	for _, tc := range []struct{ q, field string }{
		{"key=bad%20key", "key"},
		{"key=", "key"},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=-1", "limit"},
		{"limit=abc", "limit"},
		{"limit=", "limit"},
		{"limit=1.5", "limit"},
		{"limit=1&limit=2", "limit"},
		{"after=nope", "after"},
		{"after=", "after"},
		{"after=01arz3ndektsv4rrffq69g5fav", "after"},
		{"project_id=nope&limit=0", "limit"}, // field rules before existence
	} {
		r := e.do("GET", "/v1/integration/prompts?"+tc.q, "")
		is.Equal(r.status, 400)                      // tc.q
		is.Equal(fieldsOf(t, r), []string{tc.field}) // names the parameter
	}
	is.Equal(e.do("GET", "/v1/integration/prompts?limit=1000", "").status, 200)
	is.Equal(e.do("GET", "/v1/integration/prompts?limit=1", "").status, 200)
	list = e.do("GET", "/v1/integration/prompts?after="+a["id"].(string), "").arr(t)
	is.Equal(len(list), 2) // after is a position
	list = e.do("GET", "/v1/integration/prompts?after=7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "").arr(t)
	is.Equal(len(list), 0) // after need not exist
	list = e.do("GET", "/v1/integration/prompts?after=00000000000000000000000000", "").arr(t)
	is.Equal(len(list), 3)
	list = e.do("GET", "/v1/integration/prompts?unknown=1", "").arr(t)
	is.Equal(len(list), 3) // unknown query parameters are ignored
}

func TestListProjects(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("GET", "/v1/integration/projects", "")
	is.Equal(r.status, 200)
	list := r.arr(t)
	is.Equal(len(list), 2) // every project, oldest first
	for _, p := range list {
		is.Equal(keysOf(p), projectFields) // exactly the fields of list 6
		is.True(timestampRE.MatchString(p["created_at"].(string)))
	}
	is.Equal(list[0]["id"], e.project.ID)
	is.Equal(list[0]["name"], "Support")
	is.Equal(list[0]["slug"], "support")
	is.Equal(list[0]["description"], "the support bot")
	is.Equal(list[0]["is_private"], false)
	is.Equal(list[1]["description"], "") // a project's description is a string, maybe empty
	is.Equal(list[1]["is_private"], true)

	list = e.call(e.otherKey, "GET", "/v1/integration/projects", "").arr(t)
	is.Equal(len(list), 1) // only the projects the key may see
	is.Equal(list[0]["id"], e.other.ID)
	for _, q := range []string{"limit=0", "after=x"} {
		is.Equal(e.do("GET", "/v1/integration/projects?"+q, "").status, 400)
	}
}

func TestNoKeySeesNothing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.newPrompt(e.project.ID)
	keys := newKeysFor(t, "sees-nothing-0123456789", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	e2 := e.withHandler(httpapi.WithAuthenticator(keys))
	is.Equal(len(e2.call("sees-nothing-0123456789", "GET", "/v1/integration/projects", "").arr(t)), 0) // a key whose projects do not exist sees none
	is.Equal(len(e2.call("sees-nothing-0123456789", "GET", "/v1/integration/prompts", "").arr(t)), 0)
}

// A read's answer is encoded once per revision and sent again while the
// prompt does not change; any change (a rename, a promotion, in one
// environment or the other) is answered at once.
func TestReadAnswersFollowEveryChange(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"one","environments":["production"]}`)
	e.newVersion(id, `{"content":"two"}`)
	read := func(env string) map[string]any {
		return e.do("GET", "/v1/integration/prompts/"+id+"?environment="+env, "").obj(t)
	}
	first := e.do("GET", "/v1/integration/prompts/"+id, "")
	again := e.do("GET", "/v1/integration/prompts/"+id, "")
	is.Equal(string(again.body), string(first.body)) // the same bytes
	is.Equal(again.header.Get("ETag"), first.header.Get("ETag"))
	is.Equal(read("staging")["active_version"], nil) // another environment, its own answer

	e.do("PUT", "/v1/integration/prompts/"+id+"/environments/production", `{"version_number":2}`)
	is.Equal(read("production")["active_version"].(map[string]any)["content"], "two")
	e.do("PATCH", "/v1/integration/prompts/"+id, `{"name":"Renamed"}`)
	is.Equal(read("production")["name"], "Renamed")
	e.do("PUT", "/v1/integration/prompts/"+id+"/environments/staging", `{"version_number":1}`)
	is.Equal(read("staging")["active_version"].(map[string]any)["content"], "one")
	is.Equal(read("production")["active_version"].(map[string]any)["content"], "two")
}
