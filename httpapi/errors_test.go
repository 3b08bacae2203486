package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// failing is a Store whose every call after the setup fails with err.
type failing struct {
	prompts.Store
	err error
}

func (f failing) GetActive(context.Context, string, prompts.Environment) (prompts.ActivePrompt, error) {
	return prompts.ActivePrompt{}, f.err
}

func (f failing) ListProjects(context.Context, prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	return nil, false, f.err
}

func (f failing) CreatePrompt(context.Context, prompts.NewPrompt) (prompts.Prompt, error) {
	return prompts.Prompt{}, f.err
}

func TestStoreErrors(t *testing.T) {
	secret := errors.New(`pq: relation "prompts" does not exist at SELECT * FROM prompts`)
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"internal", prompts.Internal(secret), 500},
		{"an error of no code", secret, 500},
		{"an unknown code", &prompts.Error{Code: "weird", Message: "weird", Err: secret}, 500},
		{"unavailable", prompts.Unavailable(secret), 503},
		{"context ended", prompts.ContextDone(context.Canceled), 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { return failing{s, tc.err} }})
			for _, req := range []struct{ method, path, body string }{
				{"GET", "/v1/integration/prompts/01ARZ3NDEKTSV4RRFFQ69G5FAV", ""},
				{"GET", "/v1/integration/projects", ""},
				{"POST", "/v1/integration/prompts", `{"project_id":"` + e.project.ID + `","key":"k","name":"N"}`},
			} {
				r := e.do(req.method, req.path, req.body)
				is.Equal(r.status, tc.status)
				is.True(!strings.Contains(string(r.body), "SELECT")) // no internals in the body
				is.True(!strings.Contains(string(r.body), "pq:"))
				if tc.status == 503 {
					is.Equal(r.header.Get("Retry-After"), "1")
				}
			}
			if tc.status == 500 {
				is.True(strings.Contains(e.logs.String(), "SELECT * FROM prompts")) // the cause is logged
			}
		})
	}
}

func TestStoreMessagesReachNotFoundAndConflict(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store {
		return failing{s, prompts.Conflict("the project already has a prompt with key k")}
	}})
	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"k","name":"N"}`)
	is.Equal(r.status, 409)
	is.Equal(r.problem(t)["detail"], "the project already has a prompt with key k")
}

func TestLogsNothingByDefault(t *testing.T) {
	is := is.New(t)
	ms := memstore.New()
	h := httpapi.New(failing{ms, prompts.Internal(errors.New("boom"))}, httpapi.WithAuthenticator(newKeysFor(t, "a-key-0123456789ab")))
	restore := captureOutput(t)
	req := httptest.NewRequest("GET", "/v1/integration/projects", nil)
	req.Header.Set("X-API-Key", "a-key-0123456789ab")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := restore()
	checkResponse(t, req, "", rec.Code, rec.Result().Header, rec.Body.Bytes())
	is.Equal(rec.Code, 500)
	is.Equal(got, "") // without WithLogger nothing is printed, to stdout or stderr
}

// captureOutput sends os.Stdout and os.Stderr to a pipe until restore,
// which returns what was written.
func captureOutput(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	return func() string {
		os.Stdout, os.Stderr = stdout, stderr
		w.Close()
		b, _ := io.ReadAll(r)
		r.Close()
		return string(b)
	}
}
