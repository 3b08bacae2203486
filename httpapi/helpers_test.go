package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/testbin"
)

// allRoutes is every operation of the interface, with a request that is
// valid for it once {prompt_id} is filled in.
var allRoutes = []struct {
	method, pattern, body string
	role                  httpapi.Role // the least role that may use it
}{
	{"POST", "/v1/integration/prompts", `{"project_id":"{project_id}","key":"k-{n}","name":"N"}`, httpapi.RoleWrite},
	{"GET", "/v1/integration/prompts", "", httpapi.RoleRead},
	{"GET", "/v1/integration/prompts/{prompt_id}", "", httpapi.RoleRead},
	{"PATCH", "/v1/integration/prompts/{prompt_id}", `{"name":"renamed"}`, httpapi.RoleWrite},
	{"POST", "/v1/integration/prompts/{prompt_id}/versions", `{"content":"hello"}`, httpapi.RoleWrite},
	{"GET", "/v1/integration/prompts/{prompt_id}/versions", "", httpapi.RoleRead},
	{"GET", "/v1/integration/prompts/{prompt_id}/versions/{version_number}", "", httpapi.RoleRead},
	{"PUT", "/v1/integration/prompts/{prompt_id}/environments/{environment}", `{"version_number":1}`, httpapi.RoleDeploy},
	{"DELETE", "/v1/integration/prompts/{prompt_id}/environments/{environment}", "", httpapi.RoleDeploy},
	{"GET", "/v1/integration/prompts/{prompt_id}/environments/{environment}", "", httpapi.RoleRead},
	{"POST", "/v1/integration/prompts/{prompt_id}/environments/{environment}/rollback", "", httpapi.RoleDeploy},
	{"GET", "/v1/integration/prompts/{prompt_id}/deployments", "", httpapi.RoleRead},
	{"POST", "/v1/integration/prompts/{prompt_id}/render", `{"version_number":1,"variables":{}}`, httpapi.RoleRead},
	{"GET", "/v1/integration/projects", "", httpapi.RoleRead},
	{"POST", "/v1/integration/projects", `{"name":"Project {n}"}`, httpapi.RoleAdmin},
	{"GET", "/v1/integration/projects/{project_id}", "", httpapi.RoleRead},
	{"GET", "/v1/integration/projects/{project_id}/snapshot", "", httpapi.RoleRead},
	{"GET", "/v1/integration/projects/{project_id}/environments", "", httpapi.RoleRead},
	{"PUT", "/v1/integration/projects/{project_id}/environments/{name}", `{"protected":false}`, httpapi.RoleAdmin},
	{"DELETE", "/v1/integration/projects/{project_id}/environments/{name}", "", httpapi.RoleAdmin},
	{"GET", "/v1/integration/projects/{project_id}/prompts/{key}", "", httpapi.RoleRead},
	{"GET", "/v1/integration/events", "", httpapi.RoleRead},
	{"POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/hook","project_id":"{project_id}"}`, httpapi.RoleAdmin},
	{"GET", "/v1/integration/webhooks", "", httpapi.RoleAdmin},
	{"GET", "/v1/integration/webhooks/{webhook_id}", "", httpapi.RoleAdmin},
	{"DELETE", "/v1/integration/webhooks/{webhook_id}", "", httpapi.RoleAdmin},
	{"GET", "/v1/integration/webhooks/{webhook_id}/deliveries", "", httpapi.RoleAdmin},
	{"POST", "/v1/integration/keys", `{"name":"k-{n}","role":"read","project_ids":["{project_id}"]}`, httpapi.RoleAdmin},
	{"GET", "/v1/integration/keys", "", httpapi.RoleAdmin},
	{"DELETE", "/v1/integration/keys/{key_id}", "", httpapi.RoleAdmin},
}

// env is a handler on a fresh memstore behind a real HTTP server, with two
// projects and three keys: one for every project, one for the first
// project only, one for the other project only.
type env struct {
	t        *testing.T
	store    prompts.Store
	srv      *httptest.Server
	client   *http.Client
	prefix   string
	logs     *testbin.Buffer
	project  prompts.Project // the project the tests work in
	other    prompts.Project // another project
	key      string          // sees every project
	ownKey   string          // sees project only
	otherKey string          // sees other only
}

type setup struct {
	prefix string // mount under this prefix with http.StripPrefix
	opts   []httpapi.Option
	store  func(prompts.Store) prompts.Store // wrap the store
	clock  prompts.Clock                     // the store's clock
}

func newEnv(t *testing.T) *env { return newEnvWith(t, setup{}) }

func newEnvWith(t *testing.T, s setup) *env {
	t.Helper()
	ms := newStore(t, s.clock)
	ctx := context.Background()
	p1, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Support", Description: "the support bot"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Other team", IsPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: ms, prefix: s.prefix, logs: &testbin.Buffer{}, project: p1, other: p2,
		key: "all-projects-key", ownKey: "support-only-key", otherKey: "other-only-key-0"}
	keys := httpapi.NewKeys()
	for _, err := range []error{
		keys.Add(httpapi.Key{Name: "all", Role: httpapi.RoleAdmin, Secret: e.key}),
		keys.Add(httpapi.Key{Name: "own", Role: httpapi.RoleAdmin, Secret: e.ownKey, ProjectIDs: []string{p1.ID}}),
		keys.Add(httpapi.Key{Name: "other", Role: httpapi.RoleAdmin, Secret: e.otherKey, ProjectIDs: []string{p2.ID}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var store prompts.Store = ms
	if s.store != nil {
		store = s.store(ms)
	}
	opts := append([]httpapi.Option{
		httpapi.WithAuthenticator(keys),
		httpapi.WithLogger(slog.New(slog.NewTextHandler(e.logs, nil))),
	}, s.opts...)
	h := httpapi.New(store, opts...)
	var root http.Handler = h
	if s.prefix != "" {
		mux := http.NewServeMux()
		mux.Handle(s.prefix+"/", http.StripPrefix(s.prefix, h))
		root = mux
	}
	e.srv = httptest.NewServer(root)
	t.Cleanup(e.srv.Close)
	e.client = &http.Client{
		Transport: validating{t: t, prefix: s.prefix},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return e
}

// resp is a response, read whole.
type resp struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // the URL asked for
}

// do sends a request with the key for every project. hdr holds header
// name and value pairs; a Content-Type given there replaces the default
// application/json of a request with a body.
func (e *env) do(method, path, body string, hdr ...string) resp {
	e.t.Helper()
	return e.call(e.key, method, path, body, hdr...)
}

// call sends a request with key ("" sends no X-API-Key header).
func (e *env) call(key, method, path, body string, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+e.prefix+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "<none>" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header[http.CanonicalHeaderKey(hdr[i])] = []string{hdr[i+1]}
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) resp {
	e.t.Helper()
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b, url: req.URL}
}

// obj decodes the body as one JSON object, numbers kept as json.Number.
func (r resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// arr decodes the body as a JSON array of objects.
func (r resp) arr(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("body is not a JSON array of objects: %v: %s", err, r.body)
	}
	if a == nil {
		t.Fatalf("body is null, not an array: %s", r.body)
	}
	return a
}

// next returns the URL of the Link rel="next" resolved against the
// request's URL, or nil when there is none.
func (r resp) next(t *testing.T) *url.URL {
	t.Helper()
	link := r.header.Get("Link")
	if link == "" {
		return nil
	}
	m := regexp.MustCompile(`^<([^>]*)>; rel="next"$`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("Link %q is not one rel=next link", link)
	}
	ref, err := url.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return r.url.ResolveReference(ref)
}

// location returns the Location header resolved against the request's URL.
func (r resp) location(t *testing.T) *url.URL {
	t.Helper()
	ref, err := url.Parse(r.header.Get("Location"))
	if err != nil || r.header.Get("Location") == "" {
		t.Fatalf("bad Location %q: %v", r.header.Get("Location"), err)
	}
	return r.url.ResolveReference(ref)
}

// problem decodes a problem body and returns it.
func (r resp) problem(t *testing.T) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json; body %s", ct, r.body)
	}
	return r.obj(t)
}

// fieldsOf returns the field names of a problem's errors.
func fieldsOf(t *testing.T, r resp) []string {
	t.Helper()
	var out []string
	errs, _ := r.problem(t)["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	return out
}

func keysOf(m map[string]any) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	return k
}

func sortedFields(fields ...string) []string {
	return slices.Sorted(slices.Values(fields))
}

// The field sets of the fixed bodies (openapi.yaml).
var (
	promptFields        = sortedFields("id", "project_id", "key", "name", "description", "latest_version_id", "created_at")
	activePromptFields  = sortedFields("id", "project_id", "key", "name", "description", "latest_version_id", "active_version")
	versionFields       = sortedFields("id", "prompt_id", "version_number", "content", "metadata_", "created_at")
	versionDetailFields = sortedFields("id", "prompt_id", "version_number", "content", "metadata_", "created_at", "change_summary", "template_format", "variables", "partials")
	projectFields       = sortedFields("id", "name", "slug", "description", "is_private", "created_at")
)

var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$`)

// Fixtures, made through the API.

var keyCounter struct {
	mu sync.Mutex
	n  int
}

// newPrompt creates a prompt in project with a fresh key and returns it.
func (e *env) newPrompt(projectID string) map[string]any {
	e.t.Helper()
	keyCounter.mu.Lock()
	keyCounter.n++
	n := keyCounter.n
	keyCounter.mu.Unlock()
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+projectID+`","key":"prompt-`+itoa(n)+`","name":"Prompt `+itoa(n)+`"}`)
	if r.status != 200 {
		e.t.Fatalf("create prompt: %d %s", r.status, r.body)
	}
	return r.obj(e.t)
}

// newVersion creates a version of the prompt and returns it.
func (e *env) newVersion(promptID, body string) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/integration/prompts/"+promptID+"/versions", body)
	if r.status != 200 {
		e.t.Fatalf("create version: %d %s", r.status, r.body)
	}
	return r.obj(e.t)
}

// newWebhook creates a webhook of the project through the API and returns
// its id; its URL is a public address, so no DNS is asked. Over a store
// that keeps no webhooks, it returns an id that none has.
func (e *env) newWebhook(projectID string) string {
	e.t.Helper()
	if _, ok := prompts.WebhookStoreOf(e.store); !ok {
		return "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	}
	r := e.do("POST", "/v1/integration/webhooks", `{"url":"https://198.51.100.7/hook","project_id":"`+projectID+`"}`)
	if r.status != 200 {
		e.t.Fatalf("create webhook: %d %s", r.status, r.body)
	}
	return r.obj(e.t)["id"].(string)
}

func itoa(n int) string { return strconv.Itoa(n) }

func mustRequest(t *testing.T, method, u, key string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	return req
}

func newKeysFor(t *testing.T, key string, projectIDs ...string) *httpapi.Keys {
	t.Helper()
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "k", Role: httpapi.RoleAdmin, Secret: key, ProjectIDs: projectIDs}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// withHandler returns an env on the same store whose handler has these
// options instead (no authenticator unless given).
func (e *env) withHandler(opts ...httpapi.Option) *env {
	e.t.Helper()
	e2 := *e
	e2.logs = &testbin.Buffer{}
	h := httpapi.New(e.store, append([]httpapi.Option{httpapi.WithLogger(slog.New(slog.NewTextHandler(e2.logs, nil)))}, opts...)...)
	e2.prefix = ""
	e2.srv = httptest.NewServer(h)
	e.t.Cleanup(e2.srv.Close)
	e2.client = &http.Client{Transport: validating{t: e.t}}
	return &e2
}

var strongETag = regexp.MustCompile(`^"[0-9]+-[0-9A-HJKMNP-TV-Z]{26}-(production|staging)-[0-9]+"$`)

func jsonNumber(s string) json.Number { return json.Number(s) }
