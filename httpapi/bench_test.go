package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// BenchmarkReadPrompt measures read 3, every application's hot path:
// GET /v1/integration/prompts/{id} of a prompt with a description and an
// active version, through the whole handler (authentication, routing,
// store, encoding, ETag) on memstore.
func BenchmarkReadPrompt(b *testing.B) {
	store, id := benchStore(b)
	keys := httpapi.NewKeys()
	if err := keys.Add("bench-key-0123456789abcdef0123456789abcdef"); err != nil {
		b.Fatal(err)
	}
	benchRead(b, httpapi.New(store, httpapi.WithAuthenticator(keys)), id)
}

// BenchmarkReadPromptBare is the floor BenchmarkReadPrompt is measured
// against: a bare handler that writes the same bytes with the same
// headers, doing nothing else.
func BenchmarkReadPromptBare(b *testing.B) {
	store, id := benchStore(b)
	ap, err := store.GetActive(context.Background(), id, prompts.Production)
	if err != nil {
		b.Fatal(err)
	}
	body := ap.AppendJSON(nil)
	benchRead(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", `"0123456789abcdef"`)
		w.Write(body) //nolint:errcheck
	}), id)
}

// benchStore returns a memstore with a prompt that has a description and
// an active version, and the prompt's id.
func benchStore(b *testing.B) (*memstore.Store, string) {
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	desc := "Greets a customer by name."
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting", Description: &desc})
	if err != nil {
		b.Fatal(err)
	}
	_, err = store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:     p.ID,
		Content:      "You are a friendly support agent. Greet {{name}} and ask how you can help.",
		Metadata:     prompts.Metadata(`{"model":"gpt-5","temperature":0.2}`),
		Environments: []prompts.Environment{prompts.Production},
	})
	if err != nil {
		b.Fatal(err)
	}
	return store, p.ID
}

func benchRead(b *testing.B, h http.Handler, id string) {
	req := httptest.NewRequest("GET", "/v1/integration/prompts/"+id, nil)
	req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
