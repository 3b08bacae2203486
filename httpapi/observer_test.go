package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// observed records what an error observer is told.
type observed struct {
	mu    sync.Mutex
	calls []observation
}

type observation struct {
	path string
	err  error
}

func (o *observed) observe(r *http.Request, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, observation{r.URL.Path, err})
}

// take returns the calls so far and forgets them.
func (o *observed) take() []observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls
	o.calls = nil
	return c
}

// The observer hears once of every error the Store returned and the
// handler answered, whatever its code; never of what the handler refused
// by itself.
func TestErrorObserverHearsStoreErrors(t *testing.T) {
	var obs observed
	e := newEnvWith(t, setup{opts: []httpapi.Option{httpapi.WithErrorObserver(obs.observe)}})
	id := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(id, `{"content":"Hi {{name}}","environments":["production"]}`)
	taken := e.do("GET", "/v1/integration/prompts/"+id, "").obj(t)["key"].(string)
	unknown := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	obs.take()
	for _, tc := range []struct {
		name, key, method, path, body string
		status                        int
		code                          prompts.Code // "": not observed
	}{
		{"an unknown prompt", e.key, "GET", "/v1/integration/prompts/" + unknown, "", 404, prompts.CodeNotFound},
		{"an unknown prompt, checked for a key of some projects", e.ownKey, "PATCH", "/v1/integration/prompts/" + unknown, `{"name":"N"}`, 404, prompts.CodeNotFound},
		{"a key taken", e.key, "POST", "/v1/integration/prompts", `{"project_id":"` + e.project.ID + `","key":"` + taken + `","name":"N"}`, 409, prompts.CodeConflict},
		{"an unknown version", e.key, "POST", "/v1/integration/prompts/" + id + "/render", `{"version_number":9,"variables":{}}`, 404, prompts.CodeNotFound},
		{"nothing to roll back to", e.key, "POST", "/v1/integration/prompts/" + id + "/environments/staging/rollback", "", 409, prompts.CodeConflict},
		{"a stale If-Match", e.key, "DELETE", "/v1/integration/prompts/" + id + "/environments/production", "", 412, prompts.CodePreconditionFailed},
		{"the promotion guard", e.key, "POST", "/v1/integration/prompts/" + id + "/versions", `{"content":"{{x}}","environments":["production"]}`, 409, prompts.CodeVariablesChanged},

		{"a success", e.key, "GET", "/v1/integration/prompts/" + id, "", 200, ""},
		{"no key", "", "GET", "/v1/integration/prompts/" + id, "", 401, ""},
		{"an unknown path", e.key, "GET", "/v1/integration/nope", "", 404, ""},
		{"a wrong method", e.key, "DELETE", "/v1/integration/projects", "", 405, ""},
		{"a malformed body", e.key, "PATCH", "/v1/integration/prompts/" + id, `{"name":`, 400, ""},
		{"a field rule", e.key, "PATCH", "/v1/integration/prompts/" + id, `{"key":null}`, 400, ""},
		{"a missing variable", e.key, "POST", "/v1/integration/prompts/" + id + "/render", `{"variables":{}}`, 400, ""},
		{"a project the key may not see", e.otherKey, "GET", "/v1/integration/prompts/" + id, "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			hdr := []string{}
			if tc.name == "a stale If-Match" {
				hdr = []string{"If-Match", `"1-` + id + `-production-1"`}
			}
			r := e.call(tc.key, tc.method, tc.path, tc.body, hdr...)
			is.Equal(r.status, tc.status)
			calls := obs.take()
			if tc.code == "" {
				is.Equal(len(calls), 0) // not an error of the Store
				return
			}
			is.Equal(len(calls), 1) // once
			is.Equal(prompts.ErrorCode(calls[0].err), tc.code)
			is.Equal(calls[0].path, tc.path) // with the request
		})
	}
}

// The observer hears of the Store's unavailable and internal errors, and
// of every error of the Authenticator: an unknown key as ErrUnknownKey,
// a failure of its own as internal, wrapping it.
func TestErrorObserverHearsOutagesAndAuthenticatorErrors(t *testing.T) {
	is := is.New(t)
	var obs observed
	down := prompts.Unavailable(errors.New("connection refused"))
	e := newEnvWith(t, setup{
		store: func(s prompts.Store) prompts.Store { return failing{s, down} },
		opts:  []httpapi.Option{httpapi.WithErrorObserver(obs.observe)},
	})
	is.Equal(e.do("GET", "/v1/integration/projects", "").status, 503)
	calls := obs.take()
	is.Equal(len(calls), 1)
	is.True(errors.Is(calls[0].err, prompts.ErrUnavailable)) // the store's own error
	is.True(strings.Contains(calls[0].err.Error(), "connection refused"))

	is.Equal(e.call("wrong-key-0123456789", "GET", "/v1/integration/projects", "").status, 401)
	calls = obs.take()
	is.Equal(len(calls), 1)
	is.True(errors.Is(calls[0].err, httpapi.ErrUnknownKey)) // an unknown key

	boom := errors.New("key service exploded")
	for _, tc := range []struct {
		err    error
		status int
		code   prompts.Code
	}{
		{boom, 500, prompts.CodeInternal},
		{prompts.Unavailable(boom), 503, prompts.CodeUnavailable},
		{prompts.NotFound("key"), 500, prompts.CodeInternal}, // answered 500 whatever its code
	} {
		h := e.withHandler(httpapi.WithErrorObserver(obs.observe), httpapi.WithAuthenticator(authFunc(func(context.Context, string) (httpapi.Access, error) {
			return httpapi.Access{}, tc.err
		})))
		is.Equal(h.call("any-key", "GET", "/v1/integration/projects", "").status, tc.status)
		calls = obs.take()
		is.Equal(len(calls), 1)
		is.Equal(prompts.ErrorCode(calls[0].err), tc.code)                                     // the code answered
		is.True(errors.Is(calls[0].err, boom) || errors.Is(calls[0].err, prompts.ErrNotFound)) // wrapping the Authenticator's error
	}
}

// The observer runs on the request's goroutine, with its context, before
// the answer is written.
func TestErrorObserverRunsInTheRequest(t *testing.T) {
	is := is.New(t)
	type ctxKey struct{}
	rec := httptest.NewRecorder()
	var got any
	var written int
	calls := 0
	h := httpapi.New(failing{newStore(t, nil), prompts.Internal(errors.New("boom"))},
		httpapi.WithAuthenticator(newKeysFor(t, "a-key-0123456789ab")),
		httpapi.WithErrorObserver(func(r *http.Request, err error) {
			calls++ // no lock: the race detector would see another goroutine
			got = r.Context().Value(ctxKey{})
			written = rec.Body.Len()
		}))
	req := httptest.NewRequest("GET", "/v1/integration/projects", nil)
	req.Header.Set("X-API-Key", "a-key-0123456789ab")
	req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "the application's value"))
	h.ServeHTTP(rec, req)
	checkResponse(t, req, "", rec.Code, rec.Result().Header, rec.Body.Bytes())
	is.Equal(rec.Code, 500)
	is.Equal(calls, 1)                       // once, before ServeHTTP returned
	is.Equal(got, "the application's value") // the request's context
	is.Equal(written, 0)                     // before the answer
}
