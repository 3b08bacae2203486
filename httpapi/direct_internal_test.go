package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// A route matched directly answers every request exactly as the ServeMux
// route would: status, headers, body, the request's Pattern, and what the
// error observer sees (the Pattern and the path value), for the paths at
// the edge of the route and for every method.
func TestDirectRoutesAnswerAsTheMux(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	other, err := store.CreateProject(ctx, prompts.NewProject{Name: "Other"})
	is.NoErr(err)
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "a/b", Name: "A"})
	is.NoErr(err)
	_, err = store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	tag := ""

	keys := NewKeys()
	is.NoErr(keys.Add(Key{Name: "admin", Role: RoleAdmin, Secret: "admin-0123456789abcdef"}))
	is.NoErr(keys.Add(Key{Name: "reader", Role: RoleRead, Secret: "reader-0123456789abcdef"}))
	is.NoErr(keys.Add(Key{Name: "elsewhere", Role: RoleRead, Secret: "elsewhere-0123456789abcdef", ProjectIDs: []string{other.ID}}))

	type seen struct{ pattern, value, err string }
	newHandler := func(log *[]seen) *Handler {
		return New(store, WithAuthenticator(keys), WithErrorObserver(func(r *http.Request, err error) {
			*log = append(*log, seen{r.Pattern, r.PathValue("prompt_id"), err.Error()})
		}))
	}
	var directLog, muxLog []seen
	direct, mux := newHandler(&directLog), newHandler(&muxLog)
	is.Equal(len(direct.direct), 2) // read 3 and render are matched directly
	mux.direct = nil                // and here they go through the ServeMux

	base := "/v1/integration/prompts/"
	id := p.ID
	escaped := "%" + strings.ToUpper(string("0123456789abcdef"[id[0]>>4])+string("0123456789abcdef"[id[0]&15])) + id[1:]
	type req struct {
		method, target string
		header         http.Header
		body           string // for a POST
	}
	admin := http.Header{"X-Api-Key": {"admin-0123456789abcdef"}}
	with := func(k, v string) http.Header {
		h := admin.Clone()
		h[k] = []string{v}
		return h
	}
	reqs := []req{
		{"GET", base + id, admin, ""},
		{"HEAD", base + id, admin, ""},
		{"GET", base + id, http.Header{"X-Api-Key": {"reader-0123456789abcdef"}}, ""},
		{"GET", base + id, http.Header{"X-Api-Key": {"elsewhere-0123456789abcdef"}}, ""}, // another project's key: 404
		{"GET", base + id, nil, ""}, // no key
		{"GET", base + id, http.Header{"X-Api-Key": {"wrong-0123456789abcdef"}}, ""}, // unknown key
		{"GET", base + id, http.Header{"X-Api-Key": {"admin-0123456789abcdef", "admin-0123456789abcdef"}}, ""},
		{"GET", base + id, http.Header{"X-Api-Key": {""}}, ""},
		{"GET", base + id + "?environment=staging", admin, ""}, // nothing active there: 404
		{"GET", base + id + "?environment=Bad!", admin, ""},
		{"GET", base + id + "?environment=production&environment=staging", admin, ""},
		{"GET", base + id + "?other=1", admin, ""},
		{"GET", base + id, with("Cache-Control", "no-cache"), ""},
		{"GET", base + id, with("If-None-Match", "*"), ""},
		{"GET", base + "01ARZ3NDEKTSV4RRFFQ69G5FAV", admin, ""}, // unknown id
		{"GET", base + "not-an-id", admin, ""},
		{"GET", base + "a%20b", admin, ""},   // escaped, but no RawPath: "a b"
		{"GET", base + "%C3%A9", admin, ""},  // é
		{"GET", base + escaped, admin, ""},   // an escaped letter: the same prompt
		{"GET", base + "x%2Fy", admin, ""},   // an escaped slash: one segment
		{"GET", base + "%2F", admin, ""},     // only a slash
		{"GET", base + "%2E", admin, ""},     // "."
		{"GET", base + "%2E%2E", admin, ""},  // ".."
		{"GET", base + ".", admin, ""},       // not clean
		{"GET", base + "..", admin, ""},      // not clean
		{"GET", base + id + "/", admin, ""},  // trailing slash
		{"GET", base + id + "//", admin, ""}, // double slash
		{"GET", base + "/" + id, admin, ""},
		{"GET", "/v1/integration/prompts//" + id, admin, ""},
		{"GET", "/v1/integration//prompts/" + id, admin, ""},
		{"GET", base, admin, ""},
		{"GET", "/v1/integration/prompts", admin, ""},
		{"GET", base + id + "/versions", admin, ""},
		{"GET", "/v1/integration/%70rompts/" + id, admin, ""}, // an escaped literal segment
		{"GET", "/V1/integration/prompts/" + id, admin, ""},   // case matters
		{"POST", base + id, admin, ""},
		{"PUT", base + id, admin, ""},
		{"DELETE", base + id, admin, ""},
		{"PATCH", base + id, admin, ""},
		{"OPTIONS", base + id, admin, ""},
		{"get", base + id, admin, ""}, // methods are case-sensitive
		{"POST", base + id, nil, ""},  // 401 before 405
	}
	// Render, with a body or none, good and bad.
	render := `{"variables":{"name":"Ada"}}`
	reqs = append(reqs, []req{
		{"POST", base + id + "/render", admin, render},
		{"POST", base + id + "/render", http.Header{"X-Api-Key": {"reader-0123456789abcdef"}}, render},
		{"POST", base + id + "/render", http.Header{"X-Api-Key": {"elsewhere-0123456789abcdef"}}, render}, // 404
		{"POST", base + id + "/render", nil, render},                                                      // no key
		{"POST", base + id + "/render", admin, `{"variables":{}}`},                                        // a variable missing
		{"POST", base + id + "/render", admin, `{"variables":{"name":"Ada"},"environment":"staging"}`},    // nothing active
		{"POST", base + id + "/render", admin, `{"variables":`},                                           // bad JSON
		{"POST", base + id + "/render", admin, ""},
		{"POST", base + id + "/render", with("Content-Type", "text/plain"), render}, // 415
		{"POST", base + "01ARZ3NDEKTSV4RRFFQ69G5FAV/render", admin, render},         // unknown id
		{"POST", base + "not-an-id/render", admin, render},
		{"POST", base + "a%20b/render", admin, render},
		{"POST", base + escaped + "/render", admin, render}, // an escaped letter: the same prompt
		{"POST", base + "x%2Fy/render", admin, render},      // an escaped slash: one segment
		{"POST", base + "./render", admin, render},
		{"POST", base + "../render", admin, render},
		{"POST", base + "/render", admin, render},
		{"POST", base + "render", admin, render},
		{"POST", base + id + "/render/", admin, render},
		{"POST", base + id + "//render", admin, render},
		{"POST", base + id + "/x/render", admin, render},
		{"POST", base + id + "/renders", admin, render},
		{"POST", base + id + "/Render", admin, render},
		{"GET", base + id + "/render", admin, ""},  // 405
		{"HEAD", base + id + "/render", admin, ""}, // 405
		{"PUT", base + id + "/render", admin, render},
		{"post", base + id + "/render", admin, render},
		{"GET", base + id + "/render", nil, ""}, // 401 before 405
	}...)
	for _, rq := range reqs {
		t.Run(rq.method+" "+rq.target, func(t *testing.T) {
			is := is.New(t)
			serve := func(h http.Handler) (*httptest.ResponseRecorder, *http.Request) {
				var body io.Reader
				if rq.body != "" {
					body = strings.NewReader(rq.body)
				}
				r := httptest.NewRequest(rq.method, rq.target, body)
				for k, v := range rq.header {
					r.Header[k] = v
				}
				if rq.header.Get("If-None-Match") == "*" && tag != "" {
					r.Header["If-None-Match"] = []string{tag}
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w, r
			}
			directLog, muxLog = nil, nil
			dw, dr := serve(direct)
			mw, mr := serve(mux)
			t.Logf("%d %v", dw.Code, directLog)
			is.Equal(dw.Code, mw.Code)
			is.Equal(dw.Header(), mw.Header())
			is.Equal(dw.Body.String(), mw.Body.String())
			is.Equal(dr.Pattern, mr.Pattern)
			is.Equal(directLog, muxLog)
			if dw.Code == http.StatusOK && tag == "" {
				tag = dw.Header().Get("Etag") // for the If-None-Match after
			}
		})
	}

	// The plain read is matched directly; its edges are not.
	match := func(method, target string) bool {
		d, _ := direct.matchDirect(httptest.NewRequest(method, target, nil))
		return d != nil
	}
	is.True(match("GET", base+id))
	is.True(match("HEAD", base+id))
	is.True(match("GET", base+"a%20b"))
	is.True(!match("GET", base+escaped))
	is.True(!match("GET", base+id+"/"))
	is.True(!match("GET", base))
	is.True(!match("POST", base+id))
	is.True(!match("GET", base+"."))
	is.True(match("POST", base+id+"/render"))
	is.True(match("POST", base+"a%20b/render"))
	is.True(!match("POST", base+escaped+"/render"))
	is.True(!match("GET", base+id+"/render"))
	is.True(!match("HEAD", base+id+"/render"))
	is.True(!match("POST", base+id+"/render/"))
	is.True(!match("POST", base+"/render"))
	is.True(!match("POST", base+"../render"))
	is.True(!match("POST", base+id+"/x/render"))
}

// A route table whose direct route could not be matched directly stops
// New, naming the route.
func TestDirectRouteMustBeMatchable(t *testing.T) {
	noop := lastFunc(func(http.ResponseWriter, *http.Request, Access, string) {})
	for _, routes := range [][]route{
		{{"PUT /v1/x/{id}", RoleRead, noop}},      // neither a GET nor a POST
		{{"POST /v1/x/{id}/{y}", RoleRead, noop}}, // another wildcard after it
		{{"POST /v1/x/{id}/", RoleRead, noop}},    // a trailing slash
		{{"POST /v1/x/{id}y", RoleRead, noop}},
		{{"GET /v1/x/{$}", RoleRead, noop}},                                                       // the end of the path, not a wildcard                                                    // not a whole segment
		{{"POST /v1/x/{id}/y", RoleRead, noop}, {"POST /v1/x/new/y", RoleRead, handlerFunc(nil)}}, // a sibling the mux prefers
		{{"GET /v1/x/{id...}", RoleRead, noop}},                                                   // not one segment
		{{"GET /v1/{p}/x/{id}", RoleRead, noop}},                                                  // another wildcard
		{{"GET /v1/x/y", RoleRead, noop}},                                                         // no wildcard
		{{"GET /v1/x/{id}", RoleRead, noop}, {"GET /v1/x/new", RoleRead, handlerFunc(nil)}},       // a sibling the mux prefers
		{{"GET /v1/x/{id}", RoleRead, noop}, {"PUT /v1/x/{other}", RoleRead, handlerFunc(nil)}},
	} {
		t.Run(routes[0].pattern, func(t *testing.T) {
			defer func() {
				v := recover()
				s, _ := v.(string)
				if !strings.HasPrefix(s, "httpapi: route ") || !strings.Contains(s, routes[0].pattern) {
					t.Fatalf("recovered %v, want a panic naming the route", v)
				}
			}()
			h := &Handler{mux: http.NewServeMux()}
			h.register(routes)
		})
	}
}
