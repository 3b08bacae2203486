package httpapi_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// walk follows the Link rel="next" headers from the first page to the
// last and returns the ids of every item, in order.
func walk(t *testing.T, e *env, key, path string) []any {
	t.Helper()
	is := is.New(t)
	var ids []any
	u, err := url.Parse(e.srv.URL + e.prefix + path)
	is.NoErr(err)
	for pages := 0; u != nil; pages++ {
		is.True(pages < 100) // the walk ends
		r := e.send(mustRequest(t, "GET", u.String(), key))
		is.Equal(r.status, 200) // every page
		for _, item := range r.arr(t) {
			ids = append(ids, item["id"])
		}
		u = r.next(t)
	}
	return ids
}

func TestPagingWalksToTheEnd(t *testing.T) {
	for _, prefix := range []string{"", "/api", "/deep/mount/point"} {
		t.Run("mounted at "+prefix+"/", func(t *testing.T) {
			is := is.New(t)
			e := newEnvWith(t, setup{prefix: prefix})
			var promptIDs []any
			for i := 0; i < 7; i++ {
				promptIDs = append(promptIDs, e.newPrompt(e.project.ID)["id"])
				e.newPrompt(e.other.ID)
			}
			id := promptIDs[0].(string)
			var versionIDs []any
			for i := 0; i < 5; i++ {
				versionIDs = append([]any{e.newVersion(id, `{"content":"c"}`)["id"]}, versionIDs...)
			}
			for _, limit := range []string{"1", "2", "3", "7", "100"} {
				is.Equal(walk(t, e, e.key, "/v1/integration/prompts?project_id="+e.project.ID+"&limit="+limit), promptIDs) // list 5 with project_id, limit
				is.Equal(walk(t, e, e.ownKey, "/v1/integration/prompts?limit="+limit), promptIDs)                          // list 5 of the projects a key sees
				is.Equal(walk(t, e, e.key, "/v1/integration/prompts/"+id+"/versions?limit="+limit), versionIDs)            // the version list, newest first
			}
			is.Equal(len(walk(t, e, e.key, "/v1/integration/prompts?limit=3")), 14)
			is.Equal(walk(t, e, e.key, "/v1/integration/projects?limit=1"), []any{e.project.ID, e.other.ID}) // list 6

			r := e.do("GET", "/v1/integration/prompts?limit=2&project_id="+e.project.ID+"&key=prompt-x&after="+id+"&x=a%20b", "")
			is.Equal(r.header.Get("Link"), "") // one result: no next page
			r = e.do("GET", "/v1/integration/prompts?limit=2&project_id="+e.project.ID+"&x=a%20b", "")
			next := r.next(t)
			q := next.Query()
			is.Equal(q.Get("limit"), "2") // the other parameters are kept
			is.Equal(q.Get("project_id"), e.project.ID)
			is.Equal(q.Get("x"), "a b")
			is.Equal(q.Get("after"), promptIDs[1]) // after is the last item of this page
			is.Equal(len(q["after"]), 1)
			is.Equal(next.Path, e.prefix+"/v1/integration/prompts") // the same path, prefix included
			r = e.send(mustRequest(t, "GET", next.String(), e.key))
			is.Equal(r.arr(t)[0]["id"], promptIDs[2])
			next = r.next(t)
			is.Equal(next.Query().Get("after"), promptIDs[3]) // a given after is replaced, not repeated
			is.Equal(len(next.Query()["after"]), 1)
		})
	}
}

func TestMountedUnderAPrefix(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{prefix: "/api"})
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"k","name":"N"}`)
	is.Equal(r.status, 200)
	loc := r.location(t)
	is.Equal(loc.Path, "/api/v1/integration/prompts/"+r.obj(t)["id"].(string)) // Location resolves under the prefix
	is.Equal(e.send(mustRequest(t, "GET", loc.String(), e.key)).status, 200)
	r = e.do("POST", strings.TrimPrefix(loc.Path, "/api")+"/versions", `{"content":"c"}`)
	is.Equal(r.status, 200)
	loc = r.location(t)
	is.Equal(loc.Path, "/api/v1/integration/prompts/"+r.obj(t)["prompt_id"].(string)+"/versions/1")
	is.Equal(e.send(mustRequest(t, "GET", loc.String(), e.key)).status, 200)

	for _, path := range []string{"/api/v1/integration/nope", "/api/", "/api/v1/integration/prompts/%2E%2E"} {
		req := mustRequest(t, "GET", e.srv.URL+path, e.key)
		req.URL.Opaque = path
		r := e.send(req)
		is.Equal(r.status, 404) // a problem under the prefix too
		is.Equal(r.problem(t)["code"], "not_found")
	}
	r = e.do("DELETE", "/v1/integration/projects", "")
	is.Equal(r.status, 405)
	is.Equal(r.header.Get("Allow"), "GET, HEAD, POST")
	r = e.call("", "GET", "/v1/integration/projects", "")
	is.Equal(r.status, 401)
}

func TestTimestampsHaveSixFractionalDigits(t *testing.T) {
	is := is.New(t)
	// A clock on a whole second: the fraction is still six zeros.
	e := newEnvWith(t, setup{clock: func() time.Time { return time.Date(2026, 11, 21, 22, 19, 26, 0, time.UTC) }})
	p := e.newPrompt(e.project.ID)
	is.Equal(p["created_at"], "2026-11-21T22:19:26.000000Z")
	v := e.newVersion(p["id"].(string), `{"content":"c"}`)
	is.Equal(v["created_at"], "2026-11-21T22:19:26.000000Z")
	is.Equal(e.do("GET", "/v1/integration/projects", "").arr(t)[0]["created_at"], "2026-11-21T22:19:26.000000Z")

	// A clock with nanoseconds and a zone: UTC, truncated to microseconds.
	e = newEnvWith(t, setup{clock: func() time.Time {
		return time.Date(2026, 11, 21, 23, 19, 26, 123456789, time.FixedZone("CET", 3600))
	}})
	p = e.newPrompt(e.project.ID)
	is.Equal(p["created_at"], "2026-11-21T22:19:26.123456Z")
	for _, item := range e.do("GET", "/v1/integration/prompts", "").arr(t) {
		is.True(timestampRE.MatchString(item["created_at"].(string))) // RFC 3339, UTC, six digits, Z
	}
}

func TestDefaultPageIs100(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for i := 0; i < 101; i++ {
		_, err := e.store.CreatePrompt(context.Background(), prompts.NewPrompt{ProjectID: e.project.ID, Key: "k" + strconv.Itoa(i), Name: "N"})
		is.NoErr(err)
	}
	r := e.do("GET", "/v1/integration/prompts", "")
	is.Equal(len(r.arr(t)), 100) // limit defaults to 100
	next := r.next(t)
	is.True(next != nil) // and a next page holds the rest
	r = e.send(mustRequest(t, "GET", next.String(), e.key))
	is.Equal(len(r.arr(t)), 1)
	is.Equal(r.header.Get("Link"), "")
}
