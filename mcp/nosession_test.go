package mcp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/testbin"
	"github.com/promptkit/prompts/mcp"
)

// A request without a session that is not initialize is the client's
// mistake: a JSON-RPC error (invalid request) with 400, nothing logged
// above DEBUG, no session opened.
func TestRequestWithoutSessionMustInitialize(t *testing.T) {
	is := is.New(t)
	logs := &testbin.Buffer{}
	g := &gate{max: 5, open: map[string]int{}}
	f := newFixture(t, mcp.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))), mcp.WithSessionGate(g.acquire))
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"prompts/get","params":{"name":"demo/x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
		req.Header.Set("X-API-Key", readKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusBadRequest)
		is.Equal(res.Header.Get("Mcp-Session-Id"), "")
		var answer struct {
			ID    any `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		is.NoErr(json.Unmarshal(b, &answer))
		is.Equal(answer.Error.Code, -32600)                                  // invalid request
		is.True(strings.Contains(answer.Error.Message, "initialize"))        // says what to do
		is.True(answer.ID != nil || strings.Contains(body, "notifications")) // the request's id
	}
	is.Equal(g.count("reader"), 0)
	is.True(!strings.Contains(logs.String(), "level=ERROR"))
	is.True(!strings.Contains(logs.String(), "level=WARN"))
	f.connect(t, readKey, "") // initialize still opens one
	is.Equal(g.count("reader"), 1)
}

// A session keeps the environment it opened in: a request of it that
// names another is refused, naming it; the same one is fine.
func TestSessionKeepsItsEnvironment(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	cs := f.connect(t, readKey, "?environment=staging")
	version := cs.InitializeResult().ProtocolVersion
	send := func(query string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+query, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`))
		req.Header.Set("X-API-Key", readKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", version)
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := send("?environment=production")
	is.Equal(code, http.StatusBadRequest)
	is.True(strings.Contains(body, "environment"))
	is.True(strings.Contains(body, `\"production\"`)) // names the one refused
	code, _ = send("?environment=staging")
	is.Equal(code, 200)
	code, _ = send("")
	is.Equal(code, 200)
}
