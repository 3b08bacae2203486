package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/wire"
	"github.com/promptkit/prompts/memstore"
)

// BenchmarkServerRead is read 3 through the whole of the server's handler
// as it runs by default (the access log, metrics and request ids around
// the front and the API, a named key), without the network: what the
// server adds to net/http, against BenchmarkServerReadBare, the bare
// server of the load harness (bench/load), which writes the same bytes
// and headers and does nothing else.
func BenchmarkServerRead(b *testing.B) {
	store, id := benchServerStore(b)
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "bench", Role: httpapi.RoleAdmin, Secret: benchKey}); err != nil {
		b.Fatal(err)
	}
	logs := newLogWriter(io.Discard, logFlushEvery)
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	m := newMetrics()
	f := newFront(m, true)
	api := httpapi.New(store, httpapi.WithAuthenticator(namedKeys{keys: keys}), httpapi.WithLogger(logger),
		httpapi.WithErrorObserver(func(*http.Request, error) {}))
	f.open(api, nil, func(context.Context) (string, error) { return "memory", nil })
	benchServe(b, notInlined(f, newAccessLog(logs, slog.LevelInfo, true), m, defaultRequestTimeout), id)
}

// BenchmarkServerReadBare is the floor of BenchmarkServerRead.
func BenchmarkServerReadBare(b *testing.B) {
	store, id := benchServerStore(b)
	ap, err := store.GetActive(context.Background(), id, prompts.Production)
	if err != nil {
		b.Fatal(err)
	}
	body := api.AppendActive(nil, ap)
	ct, tag, cache, length := []string{"application/json"}, []string{string(wire.AppendETag(nil, ap))}, []string{"private, no-cache"}, []string{strconv.Itoa(len(body))}
	benchServe(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"], h["Etag"], h["Cache-Control"], h["Content-Length"] = ct, tag, cache, length
		w.Write(body) //nolint:errcheck
	}), id)
}

// notInlined is observed, called as serve calls it: not inlined into its
// caller. Inlined into a benchmark, its handler is compiled again there,
// and differently (the request's copy was then an allocation of its own).
var notInlined = observed

const benchKey = "bench-key-0123456789abcdef0123456789abcdef"

// defaultRequestTimeout is -request-timeout's default.
const defaultRequestTimeout = 15e9

func benchServerStore(b testing.TB) (*memstore.Store, string) {
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	desc := "The first message of the support assistant."
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Support greeting", Description: &desc})
	if err != nil {
		b.Fatal(err)
	}
	content := ""
	for len(content) < 700 {
		content += "You are the support assistant of {{company}}. Greet {{customer_name}} by name. "
	}
	_, err = store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:     p.ID,
		Content:      content,
		Metadata:     prompts.Metadata(`{"model":"gpt-5","temperature":0.2}`),
		Environments: []prompts.Environment{prompts.Production},
	})
	if err != nil {
		b.Fatal(err)
	}
	return store, p.ID
}

// benchServe serves read 3 again and again to a writer that, like
// net/http's, makes a new header map for every response and keeps
// nothing but the status.
func benchServe(b *testing.B, h http.Handler, id string) {
	req := httptest.NewRequest("GET", "/v1/integration/prompts/"+id, nil)
	req = req.WithContext(withConnAuth(req.Context(), nil)) // as the server's connections have it
	req.Header.Set("X-API-Key", benchKey)
	w := &discardWriter{}
	b.ReportAllocs()
	for b.Loop() {
		w.header, w.status = http.Header{}, 0
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
