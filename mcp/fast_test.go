package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/mcp"
)

// post sends one JSON-RPC message in session sid and returns the answer's
// body.
func post(t *testing.T, f *fixture, sid, version, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
	req.Header.Set("X-API-Key", readKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", version)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// prompts/get answered by the package itself answers what the SDK does.
func TestFastGetAnswersAsTheSDK(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "count", `{{role "system"}}Count to {{n}}.{{role "model"}}Sure`, prompts.FormatDotprompt,
		`{"input":{"schema":{"n":"integer, how far"}}}`, prompts.Production)
	cs := f.connect(t, readKey, "")
	version := cs.InitializeResult().ProtocolVersion
	for _, c := range []struct{ params, want string }{
		{`{"name":"demo/count","arguments":{"n":"3"}}`, `"text":"Count to 3."`},
		{`{"name":"demo/count","arguments":{"n":"x"}}`, `n: must be an integer`},
		{`{"name":"demo/count"}`, `n: is required`},
		{`{"name":"demo/nope"}`, `unknown prompt`},
	} {
		// The fast path, and the SDK's (a field the fast path does not
		// know, which the SDK ignores, sends it there).
		slow := strings.Replace(c.params, `{"name"`, `{"x-other":1,"name"`, 1)
		code, fast := post(t, f, cs.ID(), version, `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":`+c.params+`}`)
		is.Equal(code, 200)
		code, sdk := post(t, f, cs.ID(), version, `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":`+slow+`}`)
		is.Equal(code, 200)
		var a, b any
		is.NoErr(json.Unmarshal([]byte(fast), &a))
		is.NoErr(json.Unmarshal([]byte(sdk), &b))
		is.Equal(a, b) // the same answer, whichever path
		if !strings.Contains(fast, c.want) {
			t.Errorf("%s: %s, want %q", c.params, fast, c.want)
		}
	}
}

// A session whose client has no request under way, not even its stream,
// ends after the timeout, and gives its key's place back.
func TestIdleSessionEnds(t *testing.T) {
	is := is.New(t)
	g := &gate{max: 5, open: map[string]int{}}
	f := newFixture(t, mcp.WithSessionGate(g.acquire), mcp.WithSessionTimeout(50*time.Millisecond))
	// An initialize, and nothing more from this client.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("X-API-Key", readKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	sid := res.Header.Get("Mcp-Session-Id")
	is.True(sid != "")
	poll.For(t, 10*time.Second, "the idle session ended", func() bool { return g.count("reader") == 0 })
	code, _ := post(t, f, sid, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	is.Equal(code, http.StatusNotFound)
}

// postAccept sends one JSON-RPC message in session sid with this Accept.
func postAccept(t *testing.T, f *fixture, sid, version, accept, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(body))
	req.Header.Set("X-API-Key", readKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", version)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// prompts/get's fast path takes the SDK's rule on Accept, as every other
// method does.
func TestFastGetAcceptsAsTheSDK(t *testing.T) {
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello", "", "", prompts.Production)
	cs := f.connect(t, readKey, "")
	version := cs.InitializeResult().ProtocolVersion
	for _, c := range []struct {
		accept string
		want   int
	}{
		{"application/json", 400},
		{"text/event-stream", 400},
		{"application/json, text/event-stream", 200},
		{"application/json;q=0.9, text/event-stream;q=0.5", 200},
		{"*/*", 200},
	} {
		t.Run(c.accept, func(t *testing.T) {
			is := is.New(t)
			get, _ := postAccept(t, f, cs.ID(), version, c.accept, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"demo/greeting"}}`)
			list, _ := postAccept(t, f, cs.ID(), version, c.accept, `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`)
			is.Equal(get, c.want)
			is.Equal(get, list) // as any other method
		})
	}
}
