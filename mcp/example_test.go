package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/mcp"
	"github.com/promptkit/prompts/memstore"
)

// An MCP server of a store's prompts at /mcp, and the SDK's client reading
// one of them.
func Example() {
	ctx := context.Background()
	store := memstore.New()
	project, _ := store.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	p, _ := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: project.ID, Key: "greeting", Name: "Greeting"})
	store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}!", Environments: []prompts.Environment{prompts.Production}})

	keys := httpapi.NewKeys()
	keys.Add(httpapi.Key{Name: "assistant", Role: httpapi.RoleRead, Secret: "a-long-random-secret"})
	h := mcp.New(store, mcp.WithAuthenticator(keys))
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	client := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer("a-long-random-secret")},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	list, _ := session.ListPrompts(ctx, nil)
	fmt.Println(list.Prompts[0].Name, list.Prompts[0].Arguments[0].Name)
	got, _ := session.GetPrompt(ctx, &sdk.GetPromptParams{Name: "support/greeting", Arguments: map[string]string{"name": "Ada"}})
	fmt.Println(got.Messages[0].Role, got.Messages[0].Content.(*sdk.TextContent).Text, got.Meta["environment"])
	// Output:
	// support/greeting name
	// user Hello Ada! production
}

// bearer sends its key as Authorization: Bearer.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
