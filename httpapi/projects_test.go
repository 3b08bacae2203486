package httpapi_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

func TestCreateProject(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("POST", "/v1/integration/projects", `{"name":"Billing Team","description":"invoices","is_private":true}`)
	is.Equal(r.status, 200) // every success is 200
	p := r.obj(t)
	is.Equal(keysOf(p), projectFields) // exactly the fields of list 6
	is.Equal(p["name"], "Billing Team")
	is.Equal(p["slug"], "billing-team") // derived from the name
	is.Equal(p["description"], "invoices")
	is.Equal(p["is_private"], true)
	is.True(timestampRE.MatchString(p["created_at"].(string)))
	is.Equal(r.header.Get("Location"), "projects/"+p["id"].(string)) // relative
	read := e.send(mustRequest(t, "GET", r.location(t).String(), e.key))
	is.Equal(read.status, 200)
	is.Equal(string(read.body), string(r.body)) // Location names it, read as created

	r = e.do("POST", "/v1/integration/projects", `{"name":"Only a name","slug":null,"description":null,"is_private":null}`)
	is.Equal(r.status, 200) // null is absent
	p = r.obj(t)
	is.Equal(p["slug"], "only-a-name")
	is.Equal(p["description"], "") // a string, empty
	is.Equal(p["is_private"], false)

	r = e.do("POST", "/v1/integration/projects", `{"name":"X","slug":"billing-team"}`)
	is.Equal(r.status, 409) // a slug taken
	is.Equal(r.problem(t)["code"], "conflict")
	r = e.do("POST", "/v1/integration/projects", `{"name":"Billing Team","description":"invoices","is_private":true}`, "Idempotency-Key", "once")
	is.Equal(r.status, 409) // a repeat finds its derived slug taken: no Idempotency-Key here

	for _, tc := range []struct {
		body   string
		fields []string
	}{
		{`{}`, []string{"name"}},
		{`{"name":null}`, []string{"name"}},
		{`{"name":"  "}`, []string{"name"}},
		{`{"name":"N","slug":"Not A Slug"}`, []string{"slug"}},
		{`{"name":"N","slug":"a--b"}`, []string{"slug"}},
		{`{"name":"N","description":"` + strings.Repeat("d", prompts.MaxDescription+1) + `"}`, []string{"description"}},
		{`{"name":"N","is_private":"yes"}`, []string{"is_private"}},
		{`{"name":"N","private":true}`, []string{"private"}}, // unknown fields are 400, as everywhere
		{`{"name":1,"slug":2}`, []string{"name", "slug"}},
		{`{"name":"!!!"}`, []string{"slug"}}, // no slug can be derived
	} {
		r := e.do("POST", "/v1/integration/projects", tc.body)
		is.Equal(r.status, 400)             // tc.body
		is.Equal(fieldsOf(t, r), tc.fields) // naming the fields
		is.Equal(r.problem(t)["code"], "invalid_request")
	}
	list := e.do("GET", "/v1/integration/projects", "").arr(t)
	is.Equal(len(list), 4) // the two of the env and the two made; nothing refused was

	// A key limited to some projects could not see what it made: 403,
	// before the body is read.
	r = e.call(e.ownKey, "POST", "/v1/integration/projects", `{bad`)
	is.Equal(r.status, 403)
	is.Equal(r.problem(t)["code"], "forbidden")
	is.Equal(r.problem(t)["detail"], "creating a project needs a key for every project")
	is.Equal(len(e.do("GET", "/v1/integration/projects", "").arr(t)), 4)
}

func TestReadProject(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.do("GET", "/v1/integration/projects/"+e.project.ID, "")
	is.Equal(r.status, 200)
	is.Equal(string(r.body), string(e.do("GET", "/v1/integration/projects?limit=1", "").body[1:len(r.body)+1])) // as the list has it
	is.Equal(r.obj(t)["slug"], "support")

	unknown := e.do("GET", "/v1/integration/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV", "")
	is.Equal(unknown.status, 404)
	is.Equal(unknown.problem(t)["detail"], "project not found")
	hidden := e.call(e.otherKey, "GET", "/v1/integration/projects/"+e.project.ID, "")
	is.Equal(hidden.status, 404)                                           // another project's
	is.Equal(string(hidden.body), string(unknown.body))                    // exactly as if it did not exist
	is.Equal(e.do("GET", "/v1/integration/projects/nope", "").status, 404) // not a ULID
	is.Equal(e.call(e.otherKey, "GET", "/v1/integration/projects/"+e.other.ID, "").status, 200)
}

// counted counts the reads that reach the store under a cache.
type counted struct {
	prompts.Store
	reads atomic.Int64
}

func (c *counted) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	c.reads.Add(1)
	return c.Store.GetActive(ctx, id, env)
}

func (c *counted) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	c.reads.Add(1)
	return c.Store.GetActiveByKey(ctx, projectID, key, env)
}

func (c *counted) GetVersion(ctx context.Context, id string, n int) (prompts.PromptVersion, error) {
	c.reads.Add(1)
	return c.Store.GetVersion(ctx, id, n)
}

func (c *counted) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	c.reads.Add(1)
	return c.Store.GetProject(ctx, id)
}

// A read with Cache-Control: no-cache (or max-age=0, or Pragma: no-cache
// without Cache-Control) goes to the store under the server's cache; any
// other is answered from the cache once it holds the answer.
func TestNoCacheReadsTheStore(t *testing.T) {
	var under *counted
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store {
		under = &counted{Store: s}
		return cache.New(under, cache.Standalone())
	}})
	pr := e.newPrompt(e.project.ID)
	id, key := pr["id"].(string), pr["key"].(string)
	e.newVersion(id, `{"content":"c","environments":["production"]}`)
	for _, path := range []string{
		"/v1/integration/prompts/" + id,
		"/v1/integration/prompts/" + id + "/environments/staging",
		"/v1/integration/projects/" + e.project.ID + "/prompts/" + key,
		"/v1/integration/prompts/" + id + "/versions/1",
		"/v1/integration/projects/" + e.project.ID,
	} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			first := e.do("GET", path, "")
			is.Equal(first.status, 200)
			before := under.reads.Load()
			for _, hdr := range [][]string{
				{"Cache-Control", "max-age=60"},
				{"Cache-Control", `private, community="no-cache"`}, // in a quoted string: not the directive
				{"Cache-Control", "no-cachex"},
				{"Cache-Control", "max-age=00x"},
				{"Cache-Control", "max-age=5", "Pragma", "no-cache"}, // Cache-Control wins
				{"Pragma", "x-no-cache"},
				nil,
			} {
				r := e.do("GET", path, "", hdr...)
				is.Equal(r.status, 200)
				is.Equal(under.reads.Load(), before) // from the cache: hdr
			}
			for i, hdr := range [][]string{
				{"Cache-Control", "no-cache"},
				{"Cache-Control", "No-Cache"},
				{"Cache-Control", "max-age=0"},
				{"Cache-Control", "MAX-AGE=0"},
				{"Cache-Control", `max-age="0"`},
				{"Cache-Control", `stale-if-error="a, b", no-cache`},
				{"Cache-Control", "max-stale , no-transform,no-cache"},
				{"Pragma", "no-cache"},
			} {
				r := e.do("GET", path, "", hdr...)
				is.Equal(r.status, 200)
				is.Equal(string(r.body), string(first.body))
				is.Equal(under.reads.Load(), before+int64(i)+1) // from the store: hdr
			}
		})
	}

	// Two Cache-Control lines are one list.
	is := is.New(t)
	req := mustRequest(t, "GET", e.srv.URL+"/v1/integration/prompts/"+id, e.key)
	req.Header.Add("Cache-Control", "max-age=60")
	req.Header.Add("Cache-Control", "no-cache")
	before := under.reads.Load()
	is.Equal(e.send(req).status, 200)
	is.Equal(under.reads.Load(), before+1)
}

// What another process wrote is read at once with no-cache, while the
// cache still answers the value it holds; and a no-cache read is never
// stale: with the database down it is 503, where the cache would answer
// its last value.
func TestNoCacheIsFreshNeverStale(t *testing.T) {
	is := is.New(t)
	var down atomic.Bool
	var c *cache.Store
	var under prompts.Store
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store {
		under = s
		c = cache.New(outage{s, &down}, cache.Standalone())
		return c
	}})
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"one","environments":["production"]}`)
	path := "/v1/integration/prompts/" + id
	is.Equal(e.do("GET", path, "").obj(t)["active_version"].(map[string]any)["content"], "one")
	_, err := under.CreateVersion(context.Background(), prompts.NewVersion{PromptID: id, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // another process, whose change the cache has not heard of
	is.Equal(e.do("GET", path, "").obj(t)["active_version"].(map[string]any)["content"], "one")
	fresh := e.do("GET", path, "", "Cache-Control", "no-cache")
	is.Equal(fresh.obj(t)["active_version"].(map[string]any)["content"], "two")
	is.True(strongETag.MatchString(fresh.header.Get("ETag")))

	c.Lost()
	down.Store(true)
	is.Equal(e.do("GET", path, "").header.Get("Cache-Status"), "prompts; hit; detail=stale")
	r := e.do("GET", path, "", "Cache-Control", "no-cache")
	is.Equal(r.status, 503) // never stale
	is.Equal(r.header.Get("Cache-Status"), "")
}

// Over a store that is no cache, no-cache changes nothing.
func TestNoCacheWithoutACache(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	plain := e.do("GET", "/v1/integration/prompts/"+id, "")
	r := e.do("GET", "/v1/integration/prompts/"+id, "", "Cache-Control", "no-cache")
	is.Equal(r.status, 200)
	is.Equal(string(r.body), string(plain.body))
}
