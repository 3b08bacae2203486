package ui_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/ui"
)

// ExampleNew mounts the web interface at /admin/prompts/ beside the HTTP
// interface, both behind the same keys.
func ExampleNew() {
	store := memstore.New()
	keys := httpapi.NewKeys()
	// A real service reads the secret, or its sha256: hash, from its
	// secret store.
	if err := keys.Add(httpapi.Key{Name: "alice", Role: httpapi.RoleDeploy, Secret: "s3cr3t-key-0123456789"}); err != nil {
		log.Fatal(err)
	}
	web, err := ui.New(store, keys, ui.WithPrefix("/admin/prompts/"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/prompts/", web)
	mux.Handle("/v1/integration/", httpapi.New(store, httpapi.WithAuthenticator(keys)))

	// Signed out, the prefix shows the sign-in form.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/prompts/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(strings.Contains(rec.Body.String(), `<form method="post" action="/admin/prompts/signin"`))
	fmt.Println(rec.Header().Get("X-Content-Type-Options"))
	// Output:
	// 200 text/html; charset=utf-8
	// true
	// nosniff
}
