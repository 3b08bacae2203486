package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

// A read of a prompt, by id or by key, over a store that shares its
// answers (memstore, a cache) makes no copy of the prompt: one allocation
// fewer than over the same store seen as a plain prompts.Store, for the
// same answer.
func TestReadsShareTheStoresAnswer(t *testing.T) {
	is := is.New(t)
	mem, id := benchStore(t)
	p, err := mem.GetPrompt(t.Context(), id)
	is.NoErr(err)
	paths := []string{"/v1/integration/prompts/" + id, "/v1/integration/projects/" + p.ProjectID + "/prompts/" + p.Key}
	type plain struct{ prompts.Store } // hides every method but the Store's
	for name, store := range map[string]prompts.Store{"memstore": mem, "cache": cache.New(mem, cache.Standalone())} {
		shared, copied := benchHandler(t, store), benchHandler(t, plain{store})
		for _, path := range paths {
			read := func(h http.Handler) (string, float64) {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
				var body string
				allocs := testing.AllocsPerRun(50, func() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					is.Equal(w.Code, http.StatusOK)
					body = w.Body.String()
				})
				return body, allocs
			}
			sharedBody, sharedAllocs := read(shared)
			copiedBody, copiedAllocs := read(copied)
			is.Equal(sharedBody, copiedBody)
			t.Logf("%s %s: %.0f allocations, %.0f with the copy", name, path, sharedAllocs, copiedAllocs)
			is.Equal(sharedAllocs, copiedAllocs-1) // the copy, and only it, saved
		}
	}
}

// notFound embeds a memstore and finds no prompt.
type notFound struct{ *memstore.Store }

func (notFound) GetActive(context.Context, string, prompts.Environment) (prompts.ActivePrompt, error) {
	return prompts.ActivePrompt{}, prompts.NotFound("prompt")
}

// A store that embeds memstore and answers GetActive its own way is read
// through its own GetActive, not the embedded store's shared reads.
func TestReadsOfAnEmbeddingStoreAreItsOwn(t *testing.T) {
	is := is.New(t)
	mem, id := benchStore(t)
	h := benchHandler(t, notFound{mem})
	req := httptest.NewRequest(http.MethodGet, "/v1/integration/prompts/"+id, nil)
	req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	is.Equal(w.Code, http.StatusNotFound)
}
