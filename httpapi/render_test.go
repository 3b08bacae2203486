package httpapi_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
)

func TestRender(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	v1 := e.newVersion(id, `{"content":"Hi {{ name }}, from {{place}}","environments":["production"]}`)
	e.newVersion(id, `{"content":"Bye {{name}}","environments":["staging"]}`)
	render := "/v1/integration/prompts/" + id + "/render"

	r := e.do("POST", render, `{"variables":{"name":"Ada","place":"{{name}}"}}`)
	is.Equal(r.status, 200) // production when neither is given
	got := r.obj(t)
	is.Equal(got["text"], "Hi Ada, from {{name}}") // one pass
	is.Equal(got["version_id"], v1["id"])
	is.Equal(got["prompt_id"], id)
	is.Equal(got["version_number"], jsonNumber("1"))
	is.Equal(e.do("POST", render, `{"environment":"staging","variables":{"name":"Ada"}}`).obj(t)["text"], "Bye Ada")
	is.Equal(e.do("POST", render, `{"version_number":2,"variables":{"name":"Ada"}}`).obj(t)["text"], "Bye Ada")

	r = e.do("POST", render, `{"variables":{"name":"Ada","extra":"x"}}`)
	is.Equal(r.status, 400)                                                  // missing and unused
	is.Equal(fieldsOf(t, r), []string{"variables.extra", "variables.place"}) // one entry each
	for _, bad := range []string{
		`{"variables":{"name":1,"place":"p"}}`,                        // not a string
		`{"variables":["name"]}`,                                      // not an object
		`{"environment":"staging","version_number":2,"variables":{}}`, // both
		`{"environment":"dev","variables":{}}`,
		`{"version_number":0,"variables":{}}`,
		`{"variables":{"name":null,"place":"p"}}`,           // null is not a string
		`{"variables":{"name":"a","name":"b","place":"p"}}`, // a name twice
		`{}`,                 // no variables
		`{"variables":null}`, // null variables
	} {
		is.Equal(e.do("POST", render, bad).status, 400) // bad
	}
	is.Equal(e.do("POST", render, `{"version_number":9,"variables":{}}`).status, 404)
	for _, n := range []string{"2147483648", "99999999999999999999"} {
		r := e.do("POST", render, `{"version_number":`+n+`,"variables":{}}`)
		is.Equal(r.status, 400)                              // beyond any version number: n
		is.Equal(fieldsOf(t, r), []string{"version_number"}) // n
	}
	is.Equal(e.do("POST", "/v1/integration/prompts/nope/render", `{"variables":{}}`).status, 404)
	is.Equal(e.do("DELETE", "/v1/integration/prompts/"+id+"/environments/staging", "").status, 204)
	r = e.do("POST", render, `{"environment":"staging","variables":{}}`)
	is.Equal(r.status, 404)                                                                            // nothing active
	is.Equal(len(e.do("GET", "/v1/integration/prompts/"+id+"/deployments", "").arr(t)), 3)             // rendering changed nothing
	is.Equal(e.call(e.otherKey, "POST", render, `{"variables":{"name":"A","place":"p"}}`).status, 404) // a project the key may not see
	is.Equal(e.call(e.otherKey, "POST", render, `{"version_number":1,"variables":{"name":"A","place":"p"}}`).status, 404)
}

// The promotion guard over HTTP: 409 variables_changed naming the
// variables, nothing changed; allow_variable_change lets it through.
func TestPromotionGuard(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"Hi {{name}}","environments":["production"]}`)
	e.newVersion(id, `{"content":"Hi {{name}} from {{place}}"}`)
	env := "/v1/integration/prompts/" + id + "/environments/production"
	versions := "/v1/integration/prompts/" + id + "/versions"

	history := "/v1/integration/prompts/" + id + "/deployments"
	records := len(e.do("GET", history, "").arr(t))
	r := e.do("PUT", env, `{"version_number":2}`)
	is.Equal(r.status, 409)
	is.Equal(r.problem(t)["code"], "variables_changed")
	is.Equal(fieldsOf(t, r), []string{"variables.place"})   // names what is added
	is.Equal(len(e.do("GET", history, "").arr(t)), records) // and records nothing
	r = e.do("POST", versions, `{"content":"{{other}}","environments":["production"]}`)
	is.Equal(r.status, 409)                            // created active: guarded
	is.Equal(len(e.do("GET", versions, "").arr(t)), 2) // and no version stored
	is.Equal(e.do("PUT", env, `{"version_number":2,"allow_variable_change":true}`).status, 200)
	r = e.do("POST", env+"/rollback", "")
	is.Equal(r.status, 409) // back to 1 removes place
	is.Equal(r.problem(t)["errors"], []any{map[string]any{"field": "variables.place", "detail": "is removed"}})
	is.Equal(e.do("POST", env+"/rollback", `{"allow_variable_change":true}`).status, 200)
	is.Equal(e.do("POST", versions, `{"content":"{{other}}","environments":["production"],"allow_variable_change":true}`).status, 200)
	r = e.do("GET", versions+"/1", "")
	is.Equal(r.obj(t)["variables"], []any{"name"}) // the version read carries its variables
}

// outage is a store whose reads of a prompt fail as unavailable while
// down is set.
type outage struct {
	prompts.Store
	down *atomic.Bool
}

func (o outage) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if o.down.Load() {
		return prompts.ActivePrompt{}, prompts.Unavailable(errors.New("database down"))
	}
	return o.Store.GetActive(ctx, id, env)
}

// Over a cache whose feed is lost and a database that is down, a read the
// cache has answered before answers 200 with Cache-Status stale; another
// is 503.
func TestStaleAnswersAreMarked(t *testing.T) {
	is := is.New(t)
	var down atomic.Bool
	var c *cache.Store
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store {
		c = cache.New(outage{s, &down}, cache.Standalone())
		return c
	}})
	id := e.newPrompt(e.project.ID)["id"].(string)
	other := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"c","environments":["production"]}`)
	r := e.do("GET", "/v1/integration/prompts/"+id, "")
	is.Equal(r.status, 200)
	is.Equal(r.header.Get("Cache-Status"), "") // fresh
	c.Lost()
	down.Store(true)
	stale := e.do("GET", "/v1/integration/prompts/"+id, "")
	is.Equal(stale.status, 200)                                              // the last value known
	is.Equal(stale.header.Get("Cache-Status"), "prompts; hit; detail=stale") // marked
	is.Equal(string(stale.body), string(r.body))
	miss := e.do("GET", "/v1/integration/prompts/"+other, "")
	is.Equal(miss.status, 503) // never seen: unavailable
	is.True(miss.header.Get("Retry-After") != "")
	down.Store(false)
	c.Recovered()
	is.Equal(e.do("GET", "/v1/integration/prompts/"+id, "").header.Get("Cache-Status"), "")
}

// A render whose text would pass prompts.MaxRenderSize is refused before
// it is built: 400 for the field variables, naming the size it would have
// and the limit, quickly and without allocating the text.
func TestRenderTooLarge(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"`+strings.Repeat("{{a}}", 200000)+`","environments":["production"]}`) // 1 MB
	render := "/v1/integration/prompts/" + id + "/render"
	body := `{"variables":{"a":"` + strings.Repeat("x", 10240) + `"}}` // 2 GB of text
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := e.do("POST", render, body)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"variables"})
	detail := r.problem(t)["errors"].([]any)[0].(map[string]any)["detail"].(string)
	is.True(strings.Contains(detail, "2048000000 bytes"))                           // the size it would have
	is.True(strings.Contains(detail, strconv.Itoa(prompts.MaxRenderSize)+" bytes")) // and the limit
	is.True(after.TotalAlloc-before.TotalAlloc < 32<<20)                            // the text was not built
	is.True(elapsed < 5*time.Second)
	is.Equal(e.do("POST", render, `{"variables":{"a":"x"}}`).status, 200) // 200 KB is fine
}

// A problem lists at most 100 errors, and its detail gives how many there
// are: a render with 80,000 unknown variables is answered in a few KB.
func TestProblemErrorsAreBounded(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"no variables","environments":["production"]}`)
	var b strings.Builder
	b.WriteString(`{"variables":{`)
	for i := range 80000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"v` + strconv.Itoa(i) + `":""`)
	}
	b.WriteString(`}}`)
	r := e.do("POST", "/v1/integration/prompts/"+id+"/render", b.String())
	is.Equal(r.status, 400)
	is.Equal(len(fieldsOf(t, r)), httpapi.MaxProblemErrors) // the first 100
	is.True(strings.Contains(r.problem(t)["detail"].(string), "80000 errors in all"))
	is.True(len(r.body) < 16<<10) // small

	// The same for the fields of a body.
	b.Reset()
	b.WriteString(`{"content":"c"`)
	for i := range 150 {
		b.WriteString(`,"x` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`}`)
	r = e.do("POST", "/v1/integration/prompts/"+id+"/versions", b.String())
	is.Equal(r.status, 400)
	is.Equal(len(fieldsOf(t, r)), httpapi.MaxProblemErrors)
	is.True(strings.Contains(r.problem(t)["detail"].(string), "150 errors in all"))
}
