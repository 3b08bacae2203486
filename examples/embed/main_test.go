package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts/memstore"
)

func TestEmbeddedUnderAPrefix(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	projectID, err := seed(context.Background(), store)
	is.NoErr(err)
	srv := httptest.NewServer(newMux(store, projectID, slog.New(slog.DiscardHandler)))
	defer srv.Close()

	get := func(path string) (int, string) {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		is.NoErr(err)
		req.Header.Set("X-API-Key", "embed-demo-key-0001")
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		return resp.StatusCode, string(b)
	}

	code, body := get("/hello?name=Ada")
	is.Equal(code, 200)
	is.Equal(body, "Hello, Ada!\n") // the service's own route reads production

	// The prompts interface lives under the service's prefix.
	code, body = get("/admin/prompts/v1/integration/prompts?project_id=" + projectID)
	is.Equal(code, 200)
	is.True(strings.Contains(body, `"key":"greeting"`))
	var id string
	{
		i := strings.Index(body, `"id":"`) + len(`"id":"`)
		id = body[i : i+26]
	}

	// A new version promoted over HTTP changes the greeting, no deploy.
	post := func(method, path, body string) int {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		is.NoErr(err)
		req.Header.Set("X-API-Key", "embed-demo-key-0001")
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		resp.Body.Close()
		return resp.StatusCode
	}
	is.Equal(post("POST", "/admin/prompts/v1/integration/prompts/"+id+"/versions", `{"content":"Hi {{name}}.","environments":["production"]}`), 200)
	_, body = get("/hello?name=Ada")
	is.Equal(body, "Hi Ada.\n")

	// The service's own routes are not the API's: no key needed there, and
	// the API's paths are not served outside the prefix.
	code, _ = get("/v1/integration/projects")
	is.Equal(code, 404)
}
