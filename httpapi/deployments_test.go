package httpapi_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// A deploy, a look at the history, a rollback, and a swap that loses:
// the walk-through of docs/http.md, over HTTP.
func TestDeploymentsOverHTTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	v1 := e.newVersion(id, `{"content":"one"}`)["id"].(string)
	e.newVersion(id, `{"content":"two"}`)
	env := "/v1/integration/prompts/" + id + "/environments/production"

	r := e.do("PUT", env, `{"version_number":1,"reason":"first release"}`)
	is.Equal(r.status, 200) // deploy 1
	tag1 := r.header.Get("ETag")
	is.True(strongETag.MatchString(tag1))                                             // the answer sends the new tag
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id, "").header.Get("ETag"), tag1) // the one a read sends
	read := e.do("GET", env, "")
	is.Equal(read.status, 200) // the environment as a resource
	is.Equal(read.header.Get("ETag"), tag1)
	is.Equal(string(read.body), string(e.do("GET", "/v1/integration/prompts/"+id, "").body)) // answered as the read of the prompt
	is.Equal(e.do("GET", env, "", "If-None-Match", tag1).status, 304)

	r = e.do("PUT", env, `{"version_number":2}`, "If-Match", tag1)
	is.Equal(r.status, 200) // a swap from the current tag
	tag2 := r.header.Get("ETag")
	r = e.do("PUT", env, `{"version_number":1}`, "If-Match", tag1)
	is.Equal(r.status, 412) // a swap from a stale tag loses
	is.Equal(r.problem(t)["code"], "precondition_failed")
	is.Equal(r.header.Get("ETag"), "") // a problem sends no tag
	is.Equal(e.do("DELETE", env, "", "If-Match", tag1).status, 412)
	is.Equal(e.do("POST", env+"/rollback", "", "If-Match", tag1).status, 412)

	r = e.do("POST", env+"/rollback", `{"reason":"answers got worse"}`, "If-Match", tag2)
	is.Equal(r.status, 200) // roll back, with the current tag
	is.Equal(r.obj(t)["active_version"].(map[string]any)["id"], v1)
	tag3 := r.header.Get("ETag")
	is.Equal(tag3, e.do("GET", env, "").header.Get("ETag"))                   // the rollback's answer sends the current tag
	is.Equal(e.do("POST", env+"/rollback", "", "If-Match", tag2).status, 412) // the tag before it no longer swaps
	r = e.do("POST", env+"/rollback", "", "If-Match", tag3)
	is.Equal(r.status, 200) // and again, without a body: back to 2
	is.Equal(r.obj(t)["active_version"].(map[string]any)["version_number"], jsonNumber("2"))
	is.Equal(e.do("DELETE", env+"?reason=incident", "", "If-Match", "*").status, 204) // * asks only that it exists

	hist := e.do("GET", "/v1/integration/prompts/"+id+"/deployments", "")
	is.Equal(hist.status, 200)
	list := hist.arr(t)
	is.Equal(len(list), 5) // every change, newest first
	actions := []string{}
	for _, d := range list {
		actions = append(actions, d["action"].(string))
	}
	is.Equal(actions, []string{"deactivate", "rollback", "rollback", "activate", "activate"})
	is.Equal(list[0]["reason"], "incident")
	is.Equal(list[0]["version_id"], nil)
	is.Equal(list[2]["reason"], "answers got worse")
	is.Equal(list[4]["previous_version_number"], nil)
	is.Equal(list[4]["reason"], "first release")

	page := e.do("GET", "/v1/integration/prompts/"+id+"/deployments?limit=2&environment=production", "")
	is.Equal(len(page.arr(t)), 2)
	next := page.next(t)
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/deployments"+"?"+next.RawQuery, "").arr(t)), 2) // paged by Link
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/deployments?environment=staging", "").arr(t)), 0)
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id+"/deployments?environment=dev", "").status, 400)
	is.Equal(e.do("GET", "/v1/integration/prompts/nope/deployments", "").status, 404)

	r = e.do("POST", "/v1/integration/prompts/"+id+"/environments/staging/rollback", "")
	is.Equal(r.status, 409) // nothing to roll back to
	is.Equal(r.problem(t)["detail"], "nothing to roll back to")
	is.Equal(e.do("POST", env+"/rollback", `{"reason":`+`"`+strings.Repeat("r", 1025)+`"}`).status, 400)
	is.Equal(e.do("POST", env+"/rollback", `{"why":"x"}`).status, 400)
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id+"/environments/dev", "").status, 400)
}

// A version created with environments takes a reason for their records,
// and a reason of the wrong type or length is refused before anything is
// created.
func TestCreateVersionReason(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	versions := "/v1/integration/prompts/" + id + "/versions"
	is.Equal(e.do("POST", versions, `{"content":"c","environments":["staging"],"reason":5}`).status, 400)
	r := e.do("POST", versions, `{"content":"c","environments":["staging"],"reason":"`+strings.Repeat("r", 1025)+`"}`)
	is.Equal(r.status, 400) // too long
	is.Equal(r.problem(t)["errors"].([]any)[0].(map[string]any)["field"], "reason")
	is.Equal(len(e.do("GET", versions, "").arr(t)), 0) // nothing created

	e.newVersion(id, `{"content":"c","environments":["staging","production"],"reason":"release 7"}`)
	e.newVersion(id, `{"content":"d","environments":["staging"],"reason":null}`)
	list := e.do("GET", "/v1/integration/prompts/"+id+"/deployments", "").arr(t)
	is.Equal(len(list), 3)
	is.Equal(list[0]["reason"], nil) // null records none
	is.Equal(list[1]["reason"], "release 7")
	is.Equal(list[2]["reason"], "release 7") // one record per environment, each with the reason
}

// If-Match: a tag of another prompt, environment or form, or a weak one,
// is never current; a list holding the current tag is.
func TestIfMatch(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	other := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"one","environments":["production","staging"]}`)
	e.newVersion(other, `{"content":"one","environments":["production"]}`)
	env := "/v1/integration/prompts/" + id + "/environments/production"
	tag := e.do("GET", env, "").header.Get("ETag")
	stagingTag := e.do("GET", "/v1/integration/prompts/"+id+"?environment=staging", "").header.Get("ETag")
	otherTag := e.do("GET", "/v1/integration/prompts/"+other, "").header.Get("ETag")
	for _, im := range []string{stagingTag, otherTag, "W/" + tag, `"0123456789abcdef"`, strings.Trim(tag, `"`), `"x"`} {
		r := e.do("PUT", env, `{"version_number":1}`, "If-Match", im)
		is.Equal(r.status, 412) // never current
	}
	is.Equal(e.do("PUT", env, `{"version_number":1}`, "If-Match", otherTag+", "+tag).status, 200)                                                            // a list with the current tag
	is.Equal(e.do("PUT", "/v1/integration/prompts/01ARZ3NDEKTSV4RRFFQ69G5FAV/environments/production", `{"version_number":1}`, "If-Match", tag).status, 404) // existence before the precondition
	is.Equal(e.do("PUT", env, `{"version_number":9}`, "If-Match", tag).status, 404)
	is.Equal(e.do("PUT", env, `{"version_number":9}`, "If-Match", otherTag).status, 404) // a missing version before a stale tag
}

// Of many concurrent swaps carrying the current tag, exactly one wins.
func TestConcurrentSwaps(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	const n = 8
	for range n {
		e.newVersion(id, `{"content":"c"}`)
	}
	env := "/v1/integration/prompts/" + id + "/environments/production"
	tag := e.do("GET", env, "").header.Get("ETag")
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("PUT", env, `{"version_number":`+itoa(i+1)+`}`, "If-Match", tag)
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	is.Equal(statuses, map[int]int{200: 1, 412: n - 1}) // one winner
}

// A prompt read by its project and key answers as the read by id, keys
// with slashes included.
func TestReadByKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"support/greeting","name":"G"}`)
	is.Equal(r.status, 200)
	id := r.obj(t)["id"].(string)
	e.newVersion(id, `{"content":"hi","environments":["staging"]}`)
	base := "/v1/integration/projects/" + e.project.ID + "/prompts/"
	for _, q := range []string{"", "?environment=staging"} {
		byID := e.do("GET", "/v1/integration/prompts/"+id+q, "")
		for _, key := range []string{"support/greeting", url.PathEscape("support/greeting")} {
			byKey := e.do("GET", base+key+q, "")
			is.Equal(byKey.status, 200)                     // found by key
			is.Equal(string(byKey.body), string(byID.body)) // the same body
			is.Equal(byKey.header.Get("ETag"), byID.header.Get("ETag"))
			is.Equal(e.do("GET", base+key+q, "", "If-None-Match", byID.header.Get("ETag")).status, 304)
		}
	}
	is.Equal(e.do("GET", base+"support/nope", "").status, 404)
	is.Equal(e.do("GET", "/v1/integration/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV/prompts/support/greeting", "").status, 404)
	is.Equal(e.do("GET", base+"support/greeting?environment=dev", "").status, 400)
	is.Equal(e.call(e.ownKey, "GET", "/v1/integration/projects/"+e.other.ID+"/prompts/k", "").status, 404) // a project the key may not see
}

// A version number too large for any store names no version, in a body as
// in a path: 404 both.
func TestHugeVersionNumbers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"c"}`)
	for _, n := range []string{"2147483648", "9223372036854775807", "9223372036854775808", "99999999999999999999999999"} {
		is.Equal(e.do("PUT", "/v1/integration/prompts/"+id+"/environments/production", `{"version_number":`+n+`}`).status, 404) // n
		is.Equal(e.do("GET", "/v1/integration/prompts/"+id+"/versions/"+n, "").status, 404)                                     // n
	}
	for _, bad := range []string{"1.5", "1e3", "-9223372036854775809", `"1"`} {
		is.Equal(e.do("PUT", "/v1/integration/prompts/"+id+"/environments/production", `{"version_number":`+bad+`}`).status, 400) // not an integer of the range
	}
}
