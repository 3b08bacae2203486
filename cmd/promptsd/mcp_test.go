package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyHeader sends a key in header with every request.
type keyHeader struct{ name, value string }

func (k keyHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(k.name, k.value)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession opens an MCP session at the server's /mcp with the SDK's
// client; changed receives its list_changed notifications.
func (s *server) mcpSession(t *testing.T, header, value string, changed chan<- struct{}) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			if changed != nil {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		},
	})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.root() + "/mcp", HTTPClient: &http.Client{Transport: keyHeader{header, value}}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// The server serves MCP at /mcp with the API's keys, a promotion reaches
// a session as list_changed, and a key's sessions count with its event
// streams.
func TestServerServesMCP(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-max-streams-per-key", "2", "-request-timeout", "2s")
	s.key = testKey
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p prompt
	s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"greeting","name":"Greeting"}`, &p)
	is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"Hello {{name}}"}`, nil).StatusCode, 200)

	// Without a key: 401.
	resp, err := http.Post(s.root()+"/mcp", "application/json", strings.NewReader(`{}`))
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusUnauthorized)

	changed := make(chan struct{}, 10)
	cs, err := s.mcpSession(t, "Authorization", "Bearer "+testKey, changed)
	is.NoErr(err)
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 0) // nothing active yet

	// Past the request timeout (2s), which would end an ordinary request:
	// the stream of the session lives on, and carries list_changed.
	time.Sleep(2500 * time.Millisecond)
	is.Equal(s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil).StatusCode, 200)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after a promotion")
	}
	list, err = cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(list.Prompts[0].Name, "demo/greeting")
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greeting", Arguments: map[string]string{"name": "Ada"}})
	is.NoErr(err)
	is.Equal(got.Messages[0].Content.(*sdk.TextContent).Text, "Hello Ada")

	// One session and one event stream are the key's two: one more of
	// either is 429.
	events, _ := s.stream(t, testKey)
	is.Equal(events.StatusCode, 200)
	_, err = s.mcpSession(t, "X-API-Key", testKey, nil)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "Too Many Requests"))
	third, _ := s.stream(t, testKey)
	is.Equal(third.StatusCode, http.StatusTooManyRequests)

	is.NoErr(s.stop(t)) // the sessions end at shutdown
}

func TestServerWithoutMCP(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-mcp=false")
	req, _ := http.NewRequest("POST", s.root()+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusNotFound)
}
