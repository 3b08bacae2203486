package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
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

// notFound embeds a memstore and finds no prompt by id.
type notFound struct{ *memstore.Store }

func (notFound) GetActive(context.Context, string, prompts.Environment) (prompts.ActivePrompt, error) {
	return prompts.ActivePrompt{}, prompts.NotFound("prompt")
}

// notFoundRead is notFound with its own ReadActive, as prompts.ActiveReader
// asks of a type that answers GetActive its own way.
type notFoundRead struct{ notFound }

func (n notFoundRead) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	return prompts.ReadActive(ctx, struct{ prompts.Store }{n.notFound}, q) // its GetActive
}

// A store that embeds memstore and answers GetActive its own way is read
// through its own GetActive when it defines ReadActive too, or is given
// as a plain prompts.Store (which has no ReadActive); else Go promotes
// memstore's ReadActive to it, and the handler reads through that, as
// prompts.ActiveReader says.
func TestReadsOfAnEmbeddingStore(t *testing.T) {
	mem, id := benchStore(t)
	for name, tc := range map[string]struct {
		store prompts.Store
		want  int
	}{
		"with its own ReadActive":    {notFoundRead{notFound{mem}}, http.StatusNotFound},
		"as a plain Store":           {struct{ prompts.Store }{notFound{mem}}, http.StatusNotFound},
		"with memstore's ReadActive": {notFound{mem}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			h := benchHandler(t, tc.store)
			req := httptest.NewRequest(http.MethodGet, "/v1/integration/prompts/"+id, nil)
			req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			is.Equal(w.Code, tc.want)
		})
	}
}

// recording is a third party's prompts.ActiveReader: it records what it
// is asked, and answers stale when told to.
type recording struct {
	prompts.Store
	mu    sync.Mutex
	asked []prompts.ActiveQuery
	stale bool
}

func (s *recording) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	s.mu.Lock()
	s.asked = append(s.asked, q)
	stale := s.stale
	s.mu.Unlock()
	a, _, err := prompts.ReadActive(ctx, s.Store, q)
	return a, stale, err
}

func (s *recording) last() prompts.ActiveQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[len(s.asked)-1]
}

// The reads of a prompt in an environment ask a store's ReadActive,
// shared (the handler changes nothing of the answer), fresh when the
// request says Cache-Control: no-cache; a stale answer is said so in
// Cache-Status.
func TestReadsAskTheStoresReadActive(t *testing.T) {
	mem, id := benchStore(t)
	p, err := mem.GetPrompt(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	s := &recording{Store: mem}
	h := benchHandler(t, s)
	for _, tc := range []struct {
		path string
		want prompts.ActiveQuery
	}{
		{"/v1/integration/prompts/" + id, prompts.ActiveQuery{PromptID: id, Environment: prompts.Production}},
		{"/v1/integration/prompts/" + id + "?environment=staging", prompts.ActiveQuery{PromptID: id, Environment: prompts.Staging}},
		{"/v1/integration/prompts/" + id + "/environments/staging", prompts.ActiveQuery{PromptID: id, Environment: prompts.Staging}},
		{"/v1/integration/projects/" + p.ProjectID + "/prompts/" + p.Key, prompts.ActiveQuery{ProjectID: p.ProjectID, Key: p.Key, Environment: prompts.Production}},
	} {
		for _, stale := range []bool{false, true} {
			for _, fresh := range []bool{false, true} {
				is := is.New(t)
				s.mu.Lock()
				s.stale = stale
				s.mu.Unlock()
				req := httptest.NewRequest(http.MethodGet, tc.path, nil)
				req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
				if fresh {
					req.Header.Set("Cache-Control", "no-cache")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				is.Equal(w.Code, http.StatusOK)
				want := tc.want
				want.Shared, want.Fresh = true, fresh
				is.Equal(s.last(), want)                                                        // asked as the request says
				is.Equal(w.Header().Get("Cache-Status") == "prompts; hit; detail=stale", stale) // stale said so
			}
		}
	}
}
