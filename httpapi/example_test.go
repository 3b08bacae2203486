package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// ExampleNew mounts the handler on an application's mux under /prompts-api,
// with one API key for every project.
func ExampleNew() {
	store := memstore.New()
	project, err := store.CreateProject(context.Background(), prompts.NewProject{Name: "Support"})
	if err != nil {
		log.Fatal(err)
	}

	keys := httpapi.NewKeys()
	// An admin key for every project (no ProjectIDs). A real service reads
	// the secret, or its sha256: hash, from its secret store.
	if err := keys.Add(httpapi.Key{Name: "ci", Role: httpapi.RoleAdmin, Secret: "s3cr3t-key-0123456789"}); err != nil {
		log.Fatal(err)
	}
	api := httpapi.New(store, httpapi.WithAuthenticator(keys))

	mux := http.NewServeMux()
	mux.Handle("/prompts-api/", http.StripPrefix("/prompts-api", api))
	// At the root it would be: mux.Handle("/v1/integration/", api)

	req := httptest.NewRequest("POST", "/prompts-api/v1/integration/prompts",
		strings.NewReader(`{"project_id":"`+project.ID+`","key":"support/greeting","name":"Greeting"}`))
	req.Header.Set("X-API-Key", "s3cr3t-key-0123456789")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.HasPrefix(rec.Header().Get("Location"), "prompts/"))

	req = httptest.NewRequest("GET", "/prompts-api/v1/integration/prompts", nil) // no key
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output:
	// 200 true
	// 401 application/problem+json
}

// ExampleHandler_CloseStreams follows the event log as a stream, and ends
// it as a server that shuts down does.
func ExampleHandler_CloseStreams() {
	store := memstore.New()
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "reader", Role: httpapi.RoleRead, Secret: "s3cr3t-key-0123456789"}); err != nil {
		log.Fatal(err)
	}
	api := httpapi.New(store, httpapi.WithAuthenticator(keys))
	srv := httptest.NewUnstartedServer(api)
	srv.Config.RegisterOnShutdown(api.CloseStreams) // Shutdown ends the streams
	srv.Start()
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/v1/integration/events", nil)
	req.Header.Set("X-API-Key", "s3cr3t-key-0123456789")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()

	// A change made after the stream started: its event comes.
	if _, err := store.CreateProject(context.Background(), prompts.NewProject{Name: "Support"}); err != nil {
		log.Fatal(err)
	}
	lines := bufio.NewScanner(res.Body)
	for range 2 {
		lines.Scan()
		fmt.Println(lines.Text())
	}
	api.CloseStreams()
	for lines.Scan() { // the rest of the event, then the end
	}
	fmt.Println("ended")
	// Output:
	// id: 1
	// event: project.created
	// ended
}
