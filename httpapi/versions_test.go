package httpapi_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

func TestCreateVersion(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	path := "/v1/integration/prompts/" + id + "/versions"

	r := e.do("POST", path, `{"content":"Hello {{name}}","change_summary":"first","metadata_":{"model":"gpt-5","temperature":0.2}}`)
	is.Equal(r.status, 200)
	v1 := r.obj(t)
	is.Equal(keysOf(v1), versionFields) // response 2 has no change_summary
	is.Equal(v1["prompt_id"], id)
	is.Equal(v1["version_number"].(interface{ String() string }).String(), "1") // the first version is number 1
	is.Equal(v1["content"], "Hello {{name}}")
	is.True(timestampRE.MatchString(v1["created_at"].(string)))
	is.Equal(r.header.Get("Location"), "versions/1") // relative: …/prompts/{id}/versions/1
	got := e.send(mustRequest(t, "GET", r.location(t).String(), e.key))
	is.Equal(got.status, 200) // Location names the new version
	is.Equal(got.obj(t)["id"], v1["id"])
	is.Equal(got.obj(t)["change_summary"], "first")

	for n := 2; n <= 4; n++ {
		v := e.newVersion(id, `{"content":"v`+strconv.Itoa(n)+`"}`)
		is.Equal(v["version_number"].(interface{ String() string }).String(), strconv.Itoa(n)) // no gaps
		is.Equal(v["metadata_"], nil)                                                          // absent metadata_ is null
		p := e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)
		is.Equal(p["latest_version_id"], v["id"]) // the prompt's latest version moves
		is.Equal(p["active_version"], nil)        // and nothing becomes active
	}
	v := e.newVersion(id, `{"content":"x","change_summary":null,"metadata_":null,"environments":null}`)
	is.Equal(v["metadata_"], nil) // null optional fields are as absent
}

func TestCreateVersionMetadataRoundTrips(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	meta := `{"big":123456789012345678901234567890.123456789012345678901234567890,"tiny":1e-400,"nested":{"a":[1,{"b":null,"c":[true,false]}],"s":"é\u2028"}}`
	r := e.do("POST", "/v1/integration/prompts/"+id+"/versions", `{"content":"c","metadata_":`+meta+`}`)
	is.Equal(r.status, 200)
	is.True(strings.Contains(string(r.body), `"big":123456789012345678901234567890.123456789012345678901234567890`)) // every digit kept
	is.True(strings.Contains(string(r.body), `"tiny":1e-400`))                                                       // no float64 conversion
	got := e.do("GET", "/v1/integration/prompts/"+id+"/versions/1", "")
	is.True(strings.Contains(string(got.body), `"nested":{"a":[1,{"b":null,"c":[true,false]}]`)) // nested objects and arrays survive
	r = e.do("POST", "/v1/integration/prompts/"+id+"/versions", `{"content":"c","metadata_":{ "spaced" : [ 1 , 2 ] }}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["metadata_"], map[string]any{"spaced": []any{jsonNumber("1"), jsonNumber("2")}})
}

func TestCreateVersionFieldRules(t *testing.T) {
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"content missing", `{}`, 400, "content"},
		{"content null", `{"content":null}`, 400, "content"},
		{"content empty", `{"content":""}`, 400, "content"},
		{"content not a string", `{"content":5}`, 400, "content"},
		{"NUL in the content", `{"content":"a\u0000b"}`, 400, "content"},
		{"change_summary of 1024 code points", `{"content":"c","change_summary":"` + strings.Repeat("é", 1024) + `"}`, 200, ""},
		{"change_summary of 1025 code points", `{"content":"c","change_summary":"` + strings.Repeat("é", 1025) + `"}`, 400, "change_summary"},
		{"NUL in the change_summary", `{"content":"c","change_summary":"\u0000"}`, 400, "change_summary"},
		{"metadata_ an array", `{"content":"c","metadata_":[1]}`, 400, "metadata_"},
		{"metadata_ a string", `{"content":"c","metadata_":"x"}`, 400, "metadata_"},
		{"metadata_ a number", `{"content":"c","metadata_":1}`, 400, "metadata_"},
		{"metadata_ a boolean", `{"content":"c","metadata_":true}`, 400, "metadata_"},
		{"metadata_ 32 levels deep", `{"content":"c","metadata_":` + deep(32) + `}`, 200, ""},
		{"metadata_ 33 levels deep", `{"content":"c","metadata_":` + deep(33) + `}`, 400, "metadata_"},
		{"metadata_ of 64 KiB", `{"content":"c","metadata_":{"s":"` + strings.Repeat("x", 64<<10-8) + `"}}`, 200, ""},
		{"metadata_ over 64 KiB", `{"content":"c","metadata_":{"s":"` + strings.Repeat("x", 64<<10-7) + `"}}`, 400, "metadata_"},
		{"NUL in a metadata_ value", `{"content":"c","metadata_":{"a":"\u0000"}}`, 400, "metadata_"},
		{"NUL in a metadata_ name", `{"content":"c","metadata_":{"a\u0000":1}}`, 400, "metadata_"},
		{"NUL deep in metadata_", `{"content":"c","metadata_":{"a":[{"b":"x\u0000"}]}}`, 400, "metadata_"},
		{"an unknown environment", `{"content":"c","environments":["prod"]}`, 400, "environments"},
		{"environments not an array", `{"content":"c","environments":"staging"}`, 400, "environments"},
		{"environments of numbers", `{"content":"c","environments":[1]}`, 400, "environments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := len(e.do("GET", "/v1/integration/prompts/"+id+"/versions?limit=1000", "").arr(t))
			r := e.do("POST", "/v1/integration/prompts/"+id+"/versions", tc.body)
			is.Equal(r.status, tc.status)
			after := len(e.do("GET", "/v1/integration/prompts/"+id+"/versions?limit=1000", "").arr(t))
			if tc.status == 400 {
				is.Equal(fieldsOf(t, r), []string{tc.field}) // names the field
				is.Equal(after, before)                      // a refused request changes nothing
			} else {
				is.Equal(after, before+1)
			}
		})
	}
}

func TestCreateVersionCheckOrder(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, bad := range []string{"nope", "01ARZ3NDEKTSV4RRFFQ69G5FAV"} {
		path := "/v1/integration/prompts/" + bad + "/versions"
		is.Equal(e.do("POST", path, `{"content":""}`).status, 400)                                 // field rules first
		is.Equal(e.do("POST", path, `{"content":"ok"}`).status, 404)                               // then existence
		is.Equal(e.do("POST", path, `{"content":`).status, 400)                                    // body syntax before existence
		is.Equal(e.do("POST", path, `{"content":"ok"}`, "Content-Type", "text/plain").status, 415) // media type before all that
	}
}

func TestCreateVersionEnvironments(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	read := func(env string) any {
		return e.do("GET", "/v1/integration/prompts/"+id+"?environment="+env, "").obj(t)["active_version"]
	}
	v1 := e.newVersion(id, `{"content":"one","environments":["staging"]}`)
	is.Equal(read("staging").(map[string]any)["id"], v1["id"]) // active in staging at once
	is.Equal(read("production"), nil)                          // not in production
	v2 := e.newVersion(id, `{"content":"two","environments":["production","staging"]}`)
	is.Equal(read("staging").(map[string]any)["id"], v2["id"])
	is.Equal(read("production").(map[string]any)["id"], v2["id"])
	e.newVersion(id, `{"content":"three","environments":[]}`)
	is.Equal(read("production").(map[string]any)["id"], v2["id"]) // an empty list activates nothing
}

func TestListVersions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	var ids []any
	for i := 1; i <= 5; i++ {
		ids = append(ids, e.newVersion(id, `{"content":"v`+strconv.Itoa(i)+`","change_summary":"change `+strconv.Itoa(i)+`"}`)["id"])
	}
	e.newVersion(id, `{"content":"v6"}`)
	r := e.do("GET", "/v1/integration/prompts/"+id+"/versions", "")
	is.Equal(r.status, 200)
	list := r.arr(t)
	is.Equal(len(list), 6)
	for i, v := range list {
		is.Equal(keysOf(v), versionDetailFields)                                                 // with change_summary
		is.Equal(v["version_number"].(interface{ String() string }).String(), strconv.Itoa(6-i)) // newest first
	}
	is.Equal(list[0]["change_summary"], nil) // absent change_summary is null
	is.Equal(list[1]["change_summary"], "change 5")
	list = e.do("GET", "/v1/integration/prompts/"+id+"/versions?after="+ids[2].(string), "").arr(t)
	is.Equal(len(list), 2) // after moves to older ones
	is.Equal(list[0]["id"], ids[1])

	empty := e.newPrompt(e.project.ID)["id"].(string)
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+empty+"/versions", "").arr(t)), 0) // no versions: []
	is.Equal(e.do("GET", "/v1/integration/prompts/nope/versions", "").status, 404)
	is.Equal(e.do("GET", "/v1/integration/prompts/nope/versions?limit=0", "").status, 400) // field rules before existence
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id+"/versions?after=bad", "").status, 400)
}

func TestReadVersion(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	v1 := e.newVersion(id, `{"content":"one","change_summary":"first","metadata_":{"k":1}}`)
	r := e.do("GET", "/v1/integration/prompts/"+id+"/versions/1", "")
	is.Equal(r.status, 200)
	got := r.obj(t)
	is.Equal(keysOf(got), versionDetailFields) // with change_summary
	is.Equal(got["id"], v1["id"])
	is.Equal(got["change_summary"], "first")
	is.Equal(got["metadata_"], map[string]any{"k": jsonNumber("1")})
	for _, n := range []string{"0", "2", "01", "+1", "-1", "1.0", "abc", "99999999999999999999"} {
		r := e.do("GET", "/v1/integration/prompts/"+id+"/versions/"+n, "")
		is.Equal(r.status, 404) // not a version of the prompt
	}
	is.Equal(e.do("GET", "/v1/integration/prompts/nope/versions/1", "").status, 404)
}

func TestActivate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	v1 := e.newVersion(id, `{"content":"one"}`)
	v2 := e.newVersion(id, `{"content":"two"}`)
	path := "/v1/integration/prompts/" + id + "/environments/"

	r := e.do("PUT", path+"staging", `{"version_id":"`+v2["id"].(string)+`"}`)
	is.Equal(r.status, 200)
	got := r.obj(t)
	is.Equal(keysOf(got), activePromptFields) // answers as read 3 does
	is.Equal(got["active_version"].(map[string]any)["id"], v2["id"])
	is.Equal(got, e.do("GET", "/v1/integration/prompts/"+id+"?environment=staging", "").obj(t)) // for that environment

	r = e.do("PUT", path+"production", `{"version_number":2}`)
	is.Equal(r.status, 200) // promotion by number
	is.Equal(r.obj(t)["active_version"].(map[string]any)["id"], v2["id"])
	r = e.do("PUT", path+"production", `{"version_number":1,"version_id":null}`)
	is.Equal(r.status, 200) // rollback; a null member is as absent
	is.Equal(r.obj(t)["active_version"].(map[string]any)["id"], v1["id"])
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)["active_version"].(map[string]any)["id"], v1["id"])

	other := e.newPrompt(e.project.ID)["id"].(string)
	ov := e.newVersion(other, `{"content":"x"}`)
	for _, tc := range []struct {
		name, env, body string
		status          int
	}{
		{"both given", "production", `{"version_id":"` + v1["id"].(string) + `","version_number":1}`, 400},
		{"neither given", "production", `{}`, 400},
		{"both null", "production", `{"version_id":null,"version_number":null}`, 400},
		{"version_number 0", "production", `{"version_number":0}`, 400},
		{"version_number negative", "production", `{"version_number":-1}`, 400},
		{"version_number not an integer", "production", `{"version_number":1.5}`, 400},
		{"version_number a string", "production", `{"version_number":"1"}`, 400},
		{"version_number too large for any integer", "production", `{"version_number":1e40}`, 400},
		{"version_id empty", "production", `{"version_id":""}`, 400},
		{"version_id a number", "production", `{"version_id":1}`, 400},
		{"an unknown environment", "prod", `{"version_number":1}`, 400},
		{"an unknown environment and a bad body", "prod", `{}`, 400},
		{"a version of another prompt", "production", `{"version_id":"` + ov["id"].(string) + `"}`, 404},
		{"a malformed version id", "production", `{"version_id":"nope"}`, 404},
		{"an unknown version number", "production", `{"version_number":3}`, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("PUT", path+tc.env, tc.body)
			is.Equal(r.status, tc.status)
			active := e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)["active_version"].(map[string]any)
			is.Equal(active["id"], v1["id"]) // a refused request changes nothing
		})
	}
	is.Equal(fieldsOf(t, e.do("PUT", path+"production", `{"version_number":0}`)), []string{"version_number"}) // 0 is no version number
	is.Equal(e.do("PUT", "/v1/integration/prompts/nope/environments/production", `{"version_number":1}`).status, 404)
	is.Equal(e.do("PUT", "/v1/integration/prompts/nope/environments/Prod", `{"version_number":1}`).status, 400) // field rules before existence
}

func TestDeactivate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"one","environments":["production","staging"]}`)
	path := "/v1/integration/prompts/" + id + "/environments/"
	r := e.do("DELETE", path+"staging", "")
	is.Equal(r.status, 204)
	is.Equal(len(r.body), 0)
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id+"?environment=staging", "").obj(t)["active_version"], nil) // nothing active there
	is.True(e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)["active_version"] != nil)                       // production untouched
	is.Equal(e.do("DELETE", path+"staging", "").status, 204)                                                      // also when nothing was active
	is.Equal(e.do("DELETE", path+"prod", "").status, 400)                                                         // an unknown environment
	is.Equal(e.do("DELETE", "/v1/integration/prompts/nope/environments/staging", "").status, 404)
	is.Equal(e.do("DELETE", "/v1/integration/prompts/nope/environments/Prod", "").status, 400) // field rules before existence
}

func TestConditionalRead(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"one","environments":["production"]}`)
	path := "/v1/integration/prompts/" + id
	r := e.do("GET", path, "")
	tag := r.header.Get("ETag")
	is.True(strongETag.MatchString(tag))                         // a strong ETag
	is.Equal(r.header.Get("Cache-Control"), "private, no-cache") // caches revalidate, and only the client's own keeps it
	is.Equal(e.do("GET", path, "").header.Get("ETag"), tag)      // stable while nothing changes

	for _, inm := range []string{tag, `"other", ` + tag, `W/` + tag, `*`, `"a",` + tag + `,"b"`} {
		r := e.do("GET", path, "", "If-None-Match", inm)
		is.Equal(r.status, 304) // inm matches
		is.Equal(len(r.body), 0)
		is.Equal(r.header.Get("ETag"), tag)
	}
	for _, inm := range []string{`"other"`, strings.Trim(tag, `"`), `W/"x"`} {
		r := e.do("GET", path, "", "If-None-Match", inm)
		is.Equal(r.status, 200) // inm does not match
	}
	staging := e.do("GET", path+"?environment=staging", "", "If-None-Match", tag)
	is.Equal(staging.status, 200) // another environment, another body, another tag
	is.True(staging.header.Get("ETag") != tag)

	e.newVersion(id, `{"content":"two","environments":["production"]}`)
	r = e.do("GET", path, "", "If-None-Match", tag)
	is.Equal(r.status, 200) // a promotion changes the tag
	is.True(r.header.Get("ETag") != tag)
	r = e.do("GET", "/v1/integration/prompts/nope", "", "If-None-Match", "*")
	is.Equal(r.status, 404) // * matches only what exists
}

func TestConcurrentVersionCreation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	numbers := make(chan string, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := e.do("POST", "/v1/integration/prompts/"+id+"/versions", `{"content":"c"}`)
				if r.status != 200 {
					t.Errorf("create version: %d %s", r.status, r.body)
					return
				}
				numbers <- r.obj(t)["version_number"].(interface{ String() string }).String()
			}
		}()
	}
	wg.Wait()
	close(numbers)
	seen := map[string]bool{}
	for n := range numbers {
		is.True(!seen[n]) // no duplicates
		seen[n] = true
	}
	for n := 1; n <= writers*each; n++ {
		is.True(seen[strconv.Itoa(n)]) // no gaps
	}
	latest := e.do("GET", "/v1/integration/prompts/"+id+"/versions?limit=1", "").arr(t)[0]
	is.Equal(latest["version_number"].(interface{ String() string }).String(), strconv.Itoa(writers*each))
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)["latest_version_id"], latest["id"]) // latest_version_id is the last one
}
