package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// hugeSnapshot makes, in e's project, a prompt whose active version's
// content passes a snapshot's bound on text (counted once per
// environment), and asks for the project's snapshot.
func hugeSnapshot(t *testing.T, e *env) resp {
	t.Helper()
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.project.ID, Key: "huge", Name: "Huge"})
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("x", cache.MaxSnapshotSize/2+1)
	if _, err := e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: prompts.Environments}); err != nil {
		t.Fatal(err)
	}
	return e.do("GET", "/v1/integration/projects/"+e.project.ID+"/snapshot", "")
}

// jsonOf decodes b, numbers kept as json.Number.
func jsonOf(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}

func TestSnapshot(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	greeting := e.newPrompt(e.project.ID)["id"].(string)
	empty := e.newPrompt(e.project.ID)["id"].(string)
	e.newPrompt(e.other.ID) // another project's
	e.newVersion(greeting, `{"content":"Hi {{name}}","metadata_":{"t":0.20000000000000001},"change_summary":"first","environments":["production","staging"]}`)
	e.newVersion(greeting, `{"content":"Hello {{name}}","environments":["staging"]}`)
	path := "/v1/integration/projects/" + e.project.ID + "/snapshot"

	r := e.do("GET", path, "")
	is.Equal(r.status, 200) // checked against the Snapshot schema by the test client
	doc := r.obj(t)
	is.Equal(keysOf(doc), []string{"environments", "format", "project", "prompts", "taken_at"})
	is.Equal(doc["environments"], []any{"production", "staging"}) // the project's
	is.Equal(doc["format"], cache.SnapshotFormat)
	is.True(timestampRE.MatchString(doc["taken_at"].(string)))
	is.Equal(doc["project"], jsonOf(t, e.do("GET", "/v1/integration/projects/"+e.project.ID, "").body)) // as readProject has it
	list := jsonOf(t, e.do("GET", "/v1/integration/prompts?project_id="+e.project.ID, "").body).([]any)
	items := doc["prompts"].([]any)
	is.Equal(len(items), 2) // every prompt of the project, none of another
	for i, it := range items {
		item := it.(map[string]any)
		is.Equal(keysOf(item), []string{"environments", "prompt", "revision"})
		is.Equal(item["prompt"], list[i]) // as listPrompts has it, in its order
		id := item["prompt"].(map[string]any)["id"].(string)
		envs := item["environments"].(map[string]any)
		is.Equal(keysOf(envs), []string{"production", "staging"}) // both environments, always
		for _, env := range []string{"production", "staging"} {
			read := e.do("GET", "/v1/integration/prompts/"+id+"?environment="+env, "")
			tag := read.header.Get("ETag")
			is.True(strings.HasSuffix(tag, "-"+string(item["revision"].(json.Number))+`"`)) // the revision of the read's ETag
			active := read.obj(t)["active_version"]
			if active == nil {
				is.Equal(envs[env], nil) // nothing active there
				continue
			}
			n := string(active.(map[string]any)["version_number"].(json.Number))
			is.Equal(envs[env], jsonOf(t, e.do("GET", "/v1/integration/prompts/"+id+"/versions/"+n, "").body)) // as readVersion has it
		}
	}
	is.Equal(items[0].(map[string]any)["prompt"].(map[string]any)["id"], greeting)
	is.Equal(items[1].(map[string]any)["prompt"].(map[string]any)["id"], empty)

	// What the Go side reads: the reads a cache falls back on.
	s, err := cache.ParseSnapshot(r.body)
	is.NoErr(err)
	is.Equal(s.Project, e.project)
	for _, sp := range s.Prompts {
		for _, env := range prompts.Environments {
			want, err := e.store.GetActive(context.Background(), sp.Prompt.ID, env)
			is.NoErr(err)
			is.Equal(sp.ActiveIn(env), want) // as the store answers GetActive
		}
	}

	// Isolation: another project's snapshot is not found, exactly.
	unknown := e.call(e.otherKey, "GET", "/v1/integration/projects/01ARZ3NDEKTSV4RRFFQ69G5FAV/snapshot", "")
	hidden := e.call(e.otherKey, "GET", path, "")
	is.Equal(hidden.status, 404)
	is.Equal(string(hidden.body), string(unknown.body))
	is.Equal(e.call(e.ownKey, "GET", path, "").status, 200)
	is.Equal(e.do("GET", "/v1/integration/projects/nope/snapshot", "").status, 404)

	// An empty project: an empty array.
	r = e.do("GET", "/v1/integration/projects/"+e.other.ID+"/snapshot", "")
	is.Equal(r.status, 200)
	p, err := e.store.CreateProject(context.Background(), prompts.NewProject{Name: "Empty"})
	is.NoErr(err)
	r = e.do("GET", "/v1/integration/projects/"+p.ID+"/snapshot", "")
	is.Equal(r.obj(t)["prompts"], []any{})
}

// Over a cache, the snapshot is read from the store under it, and leaves
// the cache as it was.
func TestSnapshotReadsUnderTheCache(t *testing.T) {
	is := is.New(t)
	var under *counted
	var c *cache.Store
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store {
		under = &counted{Store: s}
		c = cache.New(under, cache.Standalone())
		return c
	}})
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"c","environments":["production"]}`)
	path := "/v1/integration/projects/" + e.project.ID + "/snapshot"
	is.Equal(e.do("GET", path, "").status, 200)
	before, entries := under.reads.Load(), c.Stats().Entries
	is.Equal(e.do("GET", path, "").status, 200)
	is.True(under.reads.Load() >= before+3) // the project and both environments, again
	is.Equal(c.Stats().Entries, entries)    // nothing cached
}

// A project past the bounds is 413, naming the bound.
func TestSnapshotTooLarge(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := hugeSnapshot(t, e)
	is.Equal(r.status, 413)
	is.Equal(r.problem(t)["code"], "payload_too_large")
	is.Equal(r.problem(t)["detail"], "the project is too large for a snapshot: its text passes 67108864 bytes")
}

// failingActive is a store whose GetActive fails once left calls are
// spent.
type failingActive struct {
	prompts.Store
	left atomic.Int64
}

func (f *failingActive) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if f.left.Add(-1) < 0 {
		return prompts.ActivePrompt{}, errDown
	}
	return f.Store.GetActive(ctx, id, env)
}

// A snapshot is written as it is read: a store that fails before the
// answer starts is answered as any read (503), one that fails after cuts
// the answer short, so that the client sees an error, never a snapshot
// that ends early.
func TestSnapshotFailingMidwayIsCutShort(t *testing.T) {
	is := is.New(t)
	f := &failingActive{}
	f.left.Store(1 << 30)
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { f.Store = s; return f }})
	ctx := context.Background()
	for i := range 4 {
		p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.project.ID, Key: "k" + itoa(i), Name: "N"})
		is.NoErr(err)
		_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: strings.Repeat("x", 100<<10), Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
	}
	path := "/v1/integration/projects/" + e.project.ID + "/snapshot"
	r := e.do("GET", path, "")
	is.Equal(r.status, 200)
	_, err := cache.ParseSnapshot(r.body)
	is.NoErr(err)                                // whole
	is.Equal(r.header.Get("Content-Length"), "") // written as it was read

	f.left.Store(0)
	r = e.do("GET", path, "")
	is.Equal(r.status, 503) // before the answer started
	is.Equal(r.header.Get("Retry-After"), "1")

	f.left.Store(5) // two prompts and a half
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	is.NoErr(err)
	req.Header.Set("X-API-Key", e.key)
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, 200) // started
	_, err = io.ReadAll(res.Body)
	is.True(errors.Is(err, io.ErrUnexpectedEOF)) // cut short
}
