package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// FuzzHandler sends any method, path, query, headers and body: the handler
// never panics, never answers 5xx on memstore, and every response keeps to
// openapi.yaml. Run it with go test -fuzz=FuzzHandler ./httpapi.
func FuzzHandler(f *testing.F) {
	const (
		project = "{project}"
		prompt  = "{prompt}"
		version = "{version}"
	)
	// keySel picks the X-API-Key: 0 every project, 1 the prompt's project
	// only, 2 another project only, 3 unknown, 4 none, 5 empty.
	for _, s := range []struct {
		method, path, query, contentType, extra string
		keySel                                  uint8
		body                                    string
	}{
		{"POST", "/v1/integration/prompts", "", "application/json", "", 0, `{"project_id":"` + project + `","key":"k/1","name":"N","description":null}`},
		{"POST", "/v1/integration/prompts", "", "", "", 1, `{"project_id":"` + project + `","key":"k","name":"N"}`},
		{"POST", "/v1/integration/prompts", "", "text/plain", "", 0, `{}`},
		{"POST", "/v1/integration/prompts", "", "application/json", "", 0, `{"key":1,"metadata":{}} x`},
		{"GET", "/v1/integration/prompts", "project_id=" + project + "&limit=1", "", "", 0, ""},
		{"GET", "/v1/integration/prompts", "key=greeting&after=" + prompt, "", "", 2, ""},
		{"GET", "/v1/integration/prompts", "limit=0&after=x", "", "", 0, ""},
		{"GET", "/v1/integration/prompts/" + prompt, "environment=staging", "", "", 0, ""},
		{"GET", "/v1/integration/prompts/" + prompt, "environment=prod", "", "", 1, ""},
		{"GET", "/v1/integration/prompts/" + prompt, "", "", "If-None-Match: *", 0, ""},
		{"HEAD", "/v1/integration/prompts/" + prompt, "", "", "", 0, ""},
		{"PATCH", "/v1/integration/prompts/" + prompt, "", "application/json; charset=utf-8", "", 0, `{"key":null,"description":null}`},
		{"PATCH", "/v1/integration/prompts/" + prompt, "", "", "", 0, `{"name":"x\u0000"}`},
		{"POST", "/v1/integration/prompts/" + prompt + "/versions", "", "", "", 0, `{"content":"c","metadata_":{"a":[1,2,{"b":1e400}]},"environments":["staging"]}`},
		{"POST", "/v1/integration/prompts/" + prompt + "/versions", "", "", "", 3, `{"content":"c"}`},
		{"POST", "/v1/integration/prompts/nope/versions", "", "", "", 0, `{"content":""}`},
		{"GET", "/v1/integration/prompts/" + prompt + "/versions", "limit=1000", "", "", 0, ""},
		{"GET", "/v1/integration/prompts/" + prompt + "/versions/" + version, "", "", "", 0, ""},
		{"GET", "/v1/integration/prompts/" + prompt + "/versions/01", "", "", "", 0, ""},
		{"PUT", "/v1/integration/prompts/" + prompt + "/environments/production", "", "", "", 0, `{"version_number":1}`},
		{"PUT", "/v1/integration/prompts/" + prompt + "/environments/staging", "", "", "", 0, `{"version_id":"` + prompt + `","version_number":0}`},
		{"DELETE", "/v1/integration/prompts/" + prompt + "/environments/staging", "", "", "", 0, ""},
		{"DELETE", "/v1/integration/prompts/" + prompt + "/environments/qa", "", "", "", 5, ""},
		{"GET", "/v1/integration/projects", "limit=1", "", "", 2, ""},
		{"OPTIONS", "/v1/integration/projects", "", "", "", 0, ""},
		{"GET", "/v1/integration/../x/./y//z", "", "", "", 0, ""},
		{"GET", "", "", "", "", 4, ""},
		{"BREW", "*", "a=%zz&&=&limit=%", "application/json;;=", "X-API-Key: two", 0, "\xff\xfe"},
		{"POST", "/v1/integration/prompts/" + prompt + "/versions", "", "", "", 0, `{"content":"c","metadata_":{"a":{"b":[{"c":1,"c":2}]}}}`},
		{"POST", "/v1/integration/prompts/" + prompt + "/versions", "", "", "", 0, "{\"content\":\"\\ud800 \xc3\"}"},
		{"POST", "/v1/integration/prompts/" + prompt + "/render", "", "", "", 0, `{"variables":{"a":"1","\u0061":"2"}}`},
		{"PATCH", "/v1/integration/prompts/" + prompt, "", "", "X-API-Key: " + fuzzKeyOne, 1, `{"key":"renamed"}`}, // two keys
	} {
		f.Add(s.method, s.path, s.query, s.contentType, s.extra, s.keySel, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, query, contentType, extra string, keySel uint8, body []byte) {
		ctx := context.Background()
		store := memstore.New()
		p1, err := store.CreateProject(ctx, prompts.NewProject{Name: "One"})
		if err != nil {
			t.Fatal(err)
		}
		p2, err := store.CreateProject(ctx, prompts.NewProject{Name: "Two"})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p1.ID, Key: "greeting", Name: "Greeting"})
		if err != nil {
			t.Fatal(err)
		}
		v, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: "hi", Environments: []prompts.Environment{prompts.Production}})
		if err != nil {
			t.Fatal(err)
		}
		keys := httpapi.NewKeys()
		for _, err := range []error{
			keys.Add(httpapi.Key{Name: "all", Role: httpapi.RoleAdmin, Secret: fuzzKeyAll}),
			keys.Add(httpapi.Key{Name: "one", Role: httpapi.RoleAdmin, Secret: fuzzKeyOne, ProjectIDs: []string{p1.ID}}),
			keys.Add(httpapi.Key{Name: "two", Role: httpapi.RoleRead, Secret: fuzzKeyTwo, ProjectIDs: []string{p2.ID}}),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		h := httpapi.New(store, httpapi.WithAuthenticator(keys), httpapi.WithBodyLimit(4096))

		fill := strings.NewReplacer(project, p1.ID, prompt, pr.ID, version, "1", "{version_id}", v.ID)
		rawURI := fill.Replace(path)
		if query != "" {
			rawURI += "?" + fill.Replace(query)
		}
		u, err := url.ParseRequestURI(rawURI)
		if err != nil || !isToken(method) {
			return // the server refuses such a request line itself
		}
		req := &http.Request{Method: method, URL: u, RequestURI: rawURI, Host: "example.com", Header: http.Header{}, Body: http.NoBody}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if name, value, ok := strings.Cut(extra, ":"); ok && isToken(name) {
			req.Header.Add(name, strings.TrimSpace(value))
		}
		switch keySel % 6 {
		case 0:
			req.Header.Set("X-API-Key", fuzzKeyAll)
		case 1:
			req.Header.Set("X-API-Key", fuzzKeyOne)
		case 2:
			req.Header.Set("X-API-Key", fuzzKeyTwo)
		case 3:
			req.Header.Set("X-API-Key", "unknown")
		case 5:
			req.Header.Set("X-API-Key", "")
		}
		if len(body) > 0 {
			b := fill.Replace(string(body))
			req.Body = io.NopCloser(strings.NewReader(b))
			req.ContentLength = int64(len(b))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, req.URL, rec.Code, rec.Body)
		}
		checkResponse(t, req, "", rec.Code, rec.Result().Header, rec.Body.Bytes())
	})
}

// isToken reports whether s is an HTTP token, as methods and header names
// must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// The fuzzed handler's keys: an admin for every project, an admin for the
// prompt's project, a reader of the other project.
const (
	fuzzKeyAll = "fuzz-key-all-projects"
	fuzzKeyOne = "fuzz-key-one-project"
	fuzzKeyTwo = "fuzz-key-other-reader"
)
