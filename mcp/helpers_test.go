package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/mcp"
	"github.com/promptkit/prompts/memstore"
)

// The keys of the fixture, by role; demoOnly reads the demo project only.
const (
	readKey   = "read-secret-0123456789"
	writeKey  = "write-secret-0123456789"
	deployKey = "deploy-secret-0123456789"
	adminKey  = "admin-secret-0123456789"
	demoOnly  = "demo-only-secret-0123456789"
)

type fixture struct {
	store       *memstore.Store
	demo, other prompts.Project
	handler     *mcp.Handler
	srv         *httptest.Server
	changes     chan string // a key's session saw list_changed
}

func newFixture(t *testing.T, opts ...mcp.Option) *fixture {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	st := memstore.New()
	demo, err := st.CreateProject(ctx, prompts.NewProject{Name: "Demo"})
	is.NoErr(err)
	other, err := st.CreateProject(ctx, prompts.NewProject{Name: "Other"})
	is.NoErr(err)
	keys := httpapi.NewKeys()
	for _, k := range []httpapi.Key{
		{Name: "reader", Role: httpapi.RoleRead, Secret: readKey},
		{Name: "writer", Role: httpapi.RoleWrite, Secret: writeKey},
		{Name: "deployer", Role: httpapi.RoleDeploy, Secret: deployKey},
		{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey},
		{Name: "demo-reader", Role: httpapi.RoleRead, Secret: demoOnly, ProjectIDs: []string{demo.ID}},
	} {
		is.NoErr(keys.Add(k))
	}
	h := mcp.New(st, append([]mcp.Option{mcp.WithAuthenticator(keys)}, opts...)...)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &fixture{store: st, demo: demo, other: other, handler: h, srv: srv, changes: make(chan string, 100)}
}

// prompt makes a prompt of project with one version, active in envs.
func (f *fixture) prompt(t *testing.T, projectID, key, content string, format prompts.TemplateFormat, meta prompts.Metadata, envs ...prompts.Environment) prompts.Prompt {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	desc := "the " + key + " prompt"
	p, err := f.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: key, Name: key, Description: &desc})
	is.NoErr(err)
	_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, TemplateFormat: format, Metadata: meta, Environments: envs})
	is.NoErr(err)
	return p
}

// keyTransport sends a key with every request, as header.
type keyTransport struct {
	header, value string
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(k.header, k.value)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a session with the SDK's client over Streamable HTTP,
// with key in X-API-Key, at the handler's URL plus query.
func (f *fixture) connect(t *testing.T, key, query string) *sdk.ClientSession {
	t.Helper()
	cs, err := f.dial(key, query, keyTransport{"X-API-Key", key})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (f *fixture) dial(key, query string, rt http.RoundTripper) (*sdk.ClientSession, error) {
	return f.dialWith(&sdk.StreamableClientTransport{Endpoint: f.srv.URL + query, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, key)
}

// dialWith opens a session over t; key names it in f.changes.
func (f *fixture) dialWith(t *sdk.StreamableClientTransport, key string) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			select {
			case f.changes <- key:
			default:
			}
		},
	})
	return c.Connect(ctx, t, nil)
}

func names(res *sdk.ListPromptsResult) []string {
	var out []string
	for _, p := range res.Prompts {
		out = append(out, p.Name)
	}
	return out
}

// text returns the text of a tool's result.
func text(res *sdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			s += t.Text
		}
	}
	return s
}
