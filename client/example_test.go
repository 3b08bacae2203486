package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// An application reads its prompts from a remote server through a cache
// that the server's event stream keeps fresh: a read costs what a map
// lookup does, and a promotion made anywhere reaches it at once.
func Example() {
	baseURL, projectID, stop := startServer() // a server, as cmd/promptsd is
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cl, err := client.New(baseURL, "example-secret-0123456789") // os.Getenv("PROMPTS_API_KEY")
	if err != nil {
		log.Fatal(err)
	}
	c := cache.New(cl)
	go cl.Feed().Run(ctx, c)

	p, err := c.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.ActiveVersion.Content)
	// Output: Hello {{name}}, how can I help?
}

// startServer serves a memstore holding one prompt over the HTTP
// interface, with a read key.
func startServer() (baseURL, projectID string, stop func()) {
	ctx := context.Background()
	ms := memstore.New()
	proj, _ := ms.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	p, _ := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	_, _ = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}, how can I help?", Environments: []prompts.Environment{prompts.Production}})
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "app", Role: httpapi.RoleRead, Secret: "example-secret-0123456789"}); err != nil {
		log.Fatal(err)
	}
	h := httpapi.New(ms, httpapi.WithAuthenticator(keys))
	srv := httptest.NewServer(h)
	return srv.URL, proj.ID, func() { h.CloseStreams(); srv.Close() }
}
