package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
)

// The server's problems come back as the domain's errors: the problem's
// code as the Code, its detail as the Message, its errors as the Fields.
func TestTheServersErrorsAreTheDomains(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	cl := s.client(t, fast)
	proj, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	_, err = cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)

	code := func(err error, want *prompts.Error) *prompts.Error {
		t.Helper()
		var e *prompts.Error
		is.True(errors.As(err, &e))   // a *prompts.Error
		is.True(errors.Is(err, want)) // with the code
		is.True(e.Message != "")      // and the problem's detail
		return e
	}

	_, err = newClient(t, s.URL, "not-a-key-of-this-server", fast).GetProject(ctx, proj.ID)
	e := code(err, prompts.ErrUnauthenticated)
	is.Equal(e.Message, "a valid API key is required in the X-API-Key header") // the detail

	_, err = newClient(t, s.URL, readKey, fast).CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "new", Name: "N"})
	e = code(err, prompts.ErrForbidden)
	is.Equal(e.Message, "this request needs the write role")

	_, err = cl.GetActive(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", prompts.Production)
	code(err, prompts.ErrNotFound)
	_, err = cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	code(err, prompts.ErrConflict)
	_, err = cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	code(err, prompts.ErrConflict) // the slug is taken

	_, err = cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{who}}", Environments: []prompts.Environment{prompts.Production}})
	e = code(err, prompts.ErrVariablesChanged)
	is.Equal(len(e.Fields), 2) // one a variable added or removed
	names := []string{e.Fields[0].Field, e.Fields[1].Field}
	is.True(names[0] != names[1])

	_, err = cl.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1), Change: prompts.Change{IfRevision: 1}})
	code(err, prompts.ErrPreconditionFailed)

	in := prompts.NewVersion{PromptID: p.ID, Content: "a", Idempotency: prompts.Idempotency{Key: "once"}}
	_, err = cl.CreateVersion(ctx, in)
	is.NoErr(err)
	in.Content = "b"
	_, err = cl.CreateVersion(ctx, in)
	code(err, prompts.ErrIdempotencyKeyReused)

	s.srv.Close()
	_, err = cl.GetProject(ctx, proj.ID)
	code(err, prompts.ErrUnavailable) // no server
}

// A problem's code is mapped whatever the status, and an answer that is no
// problem (from a proxy) by its status.
func TestProblemsAndOtherAnswersAreMapped(t *testing.T) {
	for _, tc := range []struct {
		status      int
		contentType string
		body        string
		want        prompts.Code
		message     string
		fields      int
	}{
		{400, "application/problem+json", `{"status":400,"detail":"invalid input: key is required","code":"invalid_request","errors":[{"field":"key","detail":"is required"}]}`, prompts.CodeInvalid, "invalid input: key is required", 1},
		{413, "application/problem+json", `{"status":413,"detail":"too large","code":"payload_too_large"}`, prompts.CodeInvalid, "too large", 0},
		{401, "application/problem+json", `{"status":401,"detail":"who?","code":"unauthenticated"}`, prompts.CodeUnauthenticated, "who?", 0},
		{403, "application/problem+json", `{"status":403,"detail":"this request needs the deploy role","code":"forbidden"}`, prompts.CodeForbidden, "this request needs the deploy role", 0},
		{404, "application/problem+json", `{"status":404,"detail":"prompt not found","code":"not_found"}`, prompts.CodeNotFound, "prompt not found", 0},
		{409, "application/problem+json", `{"status":409,"detail":"nothing to roll back to","code":"conflict"}`, prompts.CodeConflict, "nothing to roll back to", 0},
		{410, "application/problem+json", `{"status":410,"detail":"gone","code":"events_expired"}`, prompts.CodeEventsExpired, "gone", 0},
		{412, "application/problem+json", `{"status":412,"detail":"changed","code":"precondition_failed"}`, prompts.CodePreconditionFailed, "changed", 0},
		{422, "application/problem+json", `{"status":422,"detail":"reused","code":"idempotency_key_reused"}`, prompts.CodeIdempotencyKeyReused, "reused", 0},
		{500, "application/problem+json", `{"status":500,"detail":"the server failed to answer; the cause is logged","code":"internal"}`, prompts.CodeInternal, "the server failed to answer; the cause is logged", 0},
		{503, "application/problem+json", `{"status":503,"detail":"later","code":"unavailable"}`, prompts.CodeUnavailable, "later", 0},
		{502, "text/html", `<html>Bad Gateway</html>`, prompts.CodeUnavailable, "bad gateway", 0},
		{504, "", ``, prompts.CodeUnavailable, "gateway timeout", 0},
		{404, "text/plain", `404 page not found`, prompts.CodeNotFound, "not found", 0},
		{418, "application/json", `{"not":"a problem"}`, prompts.CodeInternal, "i'm a teapot", 0},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			is := is.New(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			cl := newClient(t, srv.URL, adminKey, client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
			_, _, err := cl.ListProjects(t.Context(), prompts.ProjectFilter{})
			var e *prompts.Error
			is.True(errors.As(err, &e))
			is.Equal(e.Code, tc.want)
			is.Equal(e.Message, tc.message)
			is.Equal(len(e.Fields), tc.fields)
		})
	}
	t.Run("not implemented", func(t *testing.T) {
		is := is.New(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(501)
			_, _ = w.Write([]byte(`{"status":501,"detail":"this server's store keeps no event log or webhooks","code":"not_implemented"}`))
		}))
		defer srv.Close()
		_, _, err := newClient(t, srv.URL, adminKey).ListEvents(t.Context(), prompts.EventFilter{})
		is.True(errors.Is(err, errors.ErrUnsupported)) // unsupported, not a failure of the server
	})
}

// New refuses what cannot be a base URL or a key, naming the problem.
func TestNewRefusesABadURLOrKey(t *testing.T) {
	is := is.New(t)
	for _, base := range []string{"", "prompts.internal", "ftp://prompts.internal", "http://", "https://user:pw@prompts.internal", "https://prompts.internal?x=1", "https://prompts.internal#top", "::"} {
		_, err := client.New(base, adminKey)
		is.True(err != nil) // a bad base URL
	}
	for _, key := range []string{"", "with space", "new\nline"} {
		_, err := client.New("https://prompts.internal", key)
		is.True(err != nil) // a bad key
	}
	for _, base := range []string{"http://localhost:8080", "https://prompts.internal/", "https://example.com/prompts"} {
		_, err := client.New(base, adminKey)
		is.NoErr(err) // a good one
	}
}
