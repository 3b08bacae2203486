package httpapi_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The document is checked against every response the tests receive: the
// validating transport below, used by every test client, and checkResponse,
// used by the tests that call the handler directly. So openapi.yaml cannot
// drift from the code.

//go:embed openapi.yaml
var openapiYAML []byte

type apiDoc struct {
	doc    *openapi3.T
	router routers.Router
}

var loadDoc = sync.OnceValues(func() (*apiDoc, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openapiYAML)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &apiDoc{doc: doc, router: router}, nil
})

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if !d.doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi.yaml is OpenAPI %s, want 3.1", d.doc.OpenAPI)
	}
	// Every operation of the document is a route of the handler, and the
	// other way round: the route table test sends every documented one.
	var ops []string
	for path, item := range d.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, method+" "+path)
		}
	}
	if len(ops) != len(allRoutes) {
		t.Fatalf("openapi.yaml has %d operations, the handler %d routes: %v", len(ops), len(allRoutes), ops)
	}
	for _, op := range ops {
		found := false
		for _, rt := range allRoutes {
			if rt.method+" "+rt.pattern == op {
				found = true
			}
		}
		if !found {
			t.Errorf("openapi.yaml operation %s is not in the route table of the tests", op)
		}
	}
}

// checkResponse validates one response against openapi.yaml: against the
// operation the request names when the document has one, else (an unknown
// path or method) as a problem. prefix is the path the handler is mounted
// under, stripped before routing.
func checkResponse(t testing.TB, req *http.Request, prefix string, status int, header http.Header, body []byte) {
	t.Helper()
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	ct := header.Get("Content-Type")
	switch {
	case status == http.StatusNoContent || status == http.StatusNotModified:
		if len(body) != 0 {
			t.Errorf("%s %s: %d with a body: %q", req.Method, req.URL, status, body)
		}
	case ct == "application/problem+json":
		checkProblem(t, d, req, status, header, body)
	case ct == "application/json" || ct == "text/event-stream":
		if status != http.StatusOK {
			t.Errorf("%s %s: %d with Content-Type %s", req.Method, req.URL, status, ct)
		}
	default:
		t.Errorf("%s %s: %d with Content-Type %q", req.Method, req.URL, status, ct)
	}

	r2 := req.Clone(context.Background())
	r2.URL.Path = strings.TrimPrefix(req.URL.Path, prefix)
	r2.URL.RawPath = ""
	// A key in a path may hold slashes; the document's {key} is the rest
	// of the path, which a router of OpenAPI can only match escaped.
	if head, key, ok := cutKeyPath(r2.URL.Path); ok {
		r2.URL.Path = head + key
		r2.URL.RawPath = head + url.PathEscape(key)
	}
	r2.Body = http.NoBody
	if r2.Method == http.MethodHead {
		r2.Method = http.MethodGet // HEAD is GET without the body; ValidateResponse skips the body
	}
	route, params, err := d.router.FindRoute(r2)
	if err != nil {
		// Not an operation of the document: an unknown path (404) or
		// method (405), or a refused key (401) there; checkProblem has
		// checked the body.
		switch status {
		case http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed:
		default:
			t.Errorf("%s %s: %d for a request the document does not have (%v)", req.Method, req.URL, status, err)
		}
		return
	}
	// A stream's body never ends: its headers are checked, and the stream
	// tests parse its events.
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    r2,
			PathParams: params,
			Route:      route,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: req.Method == http.MethodHead || ct == "text/event-stream"},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s: the response breaks openapi.yaml: %v\nbody: %s", req.Method, req.URL, err, body)
	}
	if status == http.StatusNotModified && header.Get("ETag") == "" {
		t.Errorf("%s %s: 304 without ETag", req.Method, req.URL)
	}
}

// checkProblem validates a problem+json body against the Problem schema
// and the status table: the status member is the HTTP status, the code is
// the one the package doc gives that status, and the headers it asks for
// are there.
func checkProblem(t testing.TB, d *apiDoc, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if req.Method == http.MethodHead {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s: problem body is not JSON: %v: %q", req.Method, req.URL, err, body)
		return
	}
	schema := d.doc.Components.Schemas["Problem"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s %s: problem breaks the Problem schema: %v: %s", req.Method, req.URL, err, body)
	}
	m, _ := v.(map[string]any)
	codes := map[int]string{400: "invalid_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 408: "request_timeout",
		409: "conflict", 410: "events_expired", 412: "precondition_failed", 413: "payload_too_large", 415: "unsupported_media_type", 422: "idempotency_key_reused", 500: "internal", 501: "not_implemented", 503: "unavailable"}
	if got, _ := m["status"].(float64); int(got) != status {
		t.Errorf("%s %s: problem status %v, HTTP status %d", req.Method, req.URL, m["status"], status)
	}
	if m["code"] != codes[status] && !(status == 409 && slices.Contains([]any{"variables_changed", "partial_unavailable", "partial_in_use"}, m["code"])) {
		t.Errorf("%s %s: problem code %v for status %d", req.Method, req.URL, m["code"], status)
	}
	if m["title"] != http.StatusText(status) {
		t.Errorf("%s %s: problem title %v for status %d", req.Method, req.URL, m["title"], status)
	}
	switch status {
	case http.StatusUnauthorized:
		if header.Get("WWW-Authenticate") != `APIKey header="X-API-Key"` {
			t.Errorf("%s %s: 401 with WWW-Authenticate %q", req.Method, req.URL, header.Get("WWW-Authenticate"))
		}
	case http.StatusMethodNotAllowed:
		if header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", req.Method, req.URL)
		}
	case http.StatusServiceUnavailable:
		if header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", req.Method, req.URL)
		}
	}
}

// cutKeyPath splits a path of readByKey into what precedes the key and
// the key.
func cutKeyPath(p string) (head, key string, ok bool) {
	const projects = "/v1/integration/projects/"
	rest, ok := strings.CutPrefix(p, projects)
	if !ok {
		return "", "", false
	}
	id, key, ok := strings.Cut(rest, "/prompts/")
	if !ok || strings.Contains(id, "/") {
		return "", "", false
	}
	return projects + id + "/prompts/", key, true
}

// validating is an http.RoundTripper that checks every response against
// openapi.yaml before handing it back.
type validating struct {
	t      testing.TB
	prefix string
}

func (v validating) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	checkResponse(v.t, req, v.prefix, res.StatusCode, res.Header, body)
	return res, nil
}

// recordingTB is a testing.TB that records failures instead of failing.
type recordingTB struct {
	testing.TB
	failures []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestCheckResponseCatchesDrift(t *testing.T) {
	ok := `{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","project_id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","key":"k","name":"N","description":null,"latest_version_id":null,"active_version":null}`
	jsonHdr := http.Header{"Content-Type": {"application/json"}, "Etag": {`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`}}
	problem := http.Header{"Content-Type": {"application/problem+json"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		fails              bool
	}{
		{"a valid read", "GET", "/v1/integration/prompts/X", 200, jsonHdr, ok, false},
		{"an extra field", "GET", "/v1/integration/prompts/X", 200, jsonHdr, strings.Replace(ok, `"key"`, `"created_at":"2026-11-21T22:19:26.000000Z","key"`, 1), true},
		{"a missing field", "GET", "/v1/integration/prompts/X", 200, jsonHdr, strings.Replace(ok, `"description":null,`, "", 1), true},
		{"a wrong type", "GET", "/v1/integration/prompts/X", 200, jsonHdr, strings.Replace(ok, `"name":"N"`, `"name":1`, 1), true},
		{"no ETag", "GET", "/v1/integration/prompts/X", 200, http.Header{"Content-Type": {"application/json"}}, ok, true},
		{"an undocumented status", "GET", "/v1/integration/prompts/X", 409, problem, `{"type":"about:blank","title":"Conflict","status":409,"detail":"d","code":"conflict"}`, true},
		{"a problem with the wrong code", "GET", "/v1/integration/prompts/X", 404, problem, `{"type":"about:blank","title":"Not Found","status":404,"detail":"d","code":"conflict"}`, true},
		{"a problem with an extra member", "GET", "/nope", 404, problem, `{"type":"about:blank","title":"Not Found","status":404,"detail":"d","code":"not_found","trace":"x"}`, true},
		{"a plain-text 404", "GET", "/nope", 404, http.Header{"Content-Type": {"text/plain"}}, "404 page not found", true},
		{"a timestamp with three digits", "GET", "/v1/integration/projects", 200, jsonHdr, `[{"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV","name":"N","slug":"n","description":"","is_private":false,"created_at":"2026-11-21T22:19:26.123Z"}]`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			req := httptest.NewRequest(tc.method, tc.path, nil)
			checkResponse(rec, req, "", tc.status, tc.header, []byte(tc.body))
			if got := len(rec.failures) > 0; got != tc.fails {
				t.Errorf("checkResponse failed: %v, want %v: %v", got, tc.fails, rec.failures)
			}
		})
	}
}
