package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/cpuclock"
	"github.com/promptkit/prompts/internal/wire"
	"github.com/promptkit/prompts/memstore"
)

// BenchmarkReadPrompt measures read 3, every application's hot path:
// GET /v1/integration/prompts/{id} of a prompt with a description and an
// active version of about 700 bytes (a 1.1 KB response, as in the load
// harness, bench/load), through the whole handler (authentication,
// routing, store, encoding, ETag) on memstore.
func BenchmarkReadPrompt(b *testing.B) {
	store, id := benchStore(b)
	benchRead(b, benchHandler(b, store), id)
}

// BenchmarkReadPromptMounted is BenchmarkReadPrompt with the handler
// mounted on an application's http.ServeMux, as the package documentation
// shows: what one more route lookup costs.
func BenchmarkReadPromptMounted(b *testing.B) {
	store, id := benchStore(b)
	mux := http.NewServeMux()
	mux.Handle("/v1/integration/", benchHandler(b, store))
	mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
	benchRead(b, mux, id)
}

func benchHandler(b testing.TB, store prompts.Store) http.Handler {
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "bench", Role: httpapi.RoleRead, Secret: "bench-key-0123456789abcdef0123456789abcdef"}); err != nil {
		b.Fatal(err)
	}
	return httpapi.New(store, httpapi.WithAuthenticator(keys))
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
	body := api.AppendActive(nil, ap)
	ct, tag, cache, length := []string{"application/json"}, []string{string(wire.AppendETag(nil, ap))}, []string{"private, no-cache"}, []string{strconv.Itoa(len(body))}
	benchRead(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"], h["Etag"], h["Cache-Control"], h["Content-Length"] = ct, tag, cache, length
		w.Write(body) //nolint:errcheck
	}), id)
}

// benchStore returns a memstore with a prompt that has a description and
// an active version, and the prompt's id.
func benchStore(b testing.TB) (*memstore.Store, string) {
	return benchStoreContent(b, benchContent)
}

// benchStoreContent is benchStore with the version's content given.
func benchStoreContent(b testing.TB, content string) (*memstore.Store, string) {
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
	_, err = store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:     p.ID,
		Content:      content,
		Metadata:     prompts.Metadata(`{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`),
		Environments: []prompts.Environment{prompts.Production},
	})
	if err != nil {
		b.Fatal(err)
	}
	return store, p.ID
}

// benchContent is a support agent's system prompt of about 700 bytes.
const benchContent = `You are the support assistant of {{company}}. Greet {{customer_name}} by name, ` +
	`warmly and briefly, in the language of their last message. Ask one question that helps ` +
	`you understand their problem; never ask for passwords, card numbers or other secrets. ` +
	`If the customer mentions an order, ask for the order number and repeat it back before ` +
	`looking it up. If they are upset, acknowledge it in one sentence before anything else. ` +
	`Keep every answer under 80 words, use plain language, no jargon, and no emoji unless the ` +
	`customer uses them first. When you cannot help, say so and offer a human agent: ` +
	`{{handoff_url}}. Sign off with the name {{agent_name}}.`

// benchRead serves the request for read 3 of the prompt again and again.
// The response writer keeps nothing but the status: what is measured is
// the handler, not a recorder's copies. Like net/http's, it makes a new
// header map for every response.
func benchRead(b *testing.B, h http.Handler, id string) {
	req := httptest.NewRequest("GET", "/v1/integration/prompts/"+id, nil)
	req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
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

// discardWriter is an http.ResponseWriter that discards the body.
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

// BenchmarkReadPromptLarge is BenchmarkReadPrompt of a prompt whose
// answer is 40 KB, more than the handler keeps encoded: every read
// encodes the body.
func BenchmarkReadPromptLarge(b *testing.B) {
	store, id := benchStoreContent(b, strings.Repeat(benchContent, 55))
	benchRead(b, benchHandler(b, store), id)
}

// BenchmarkReadSplit is read 3 of an environment that holds a split of
// two versions (90/10) of BenchmarkReadPrompt's prompt, without a subject
// (the first entry's version) and with one (the version picked for it,
// the hash included; 64 subjects in turn, so both versions are served),
// and of the same prompt in an environment that holds one version.
// Besides the wall time, the process's CPU time per read (cpu-ns/op),
// which a busy host disturbs less. BENCHMARKS.md ("Splits") has the
// ratios.
func BenchmarkReadSplit(b *testing.B) {
	h, id := benchSplit(b)
	requests := func(query ...string) []*http.Request {
		out := make([]*http.Request, len(query))
		for i, q := range query {
			out[i] = httptest.NewRequest("GET", "/v1/integration/prompts/"+id+"?"+q, nil)
			out[i].Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
		}
		return out
	}
	for _, bc := range []struct {
		name string
		reqs []*http.Request
	}{
		{"one-version", requests("environment=staging")},
		{"split-without-subject", requests("environment=production")},
		{"split-with-subject", requests(splitSubjects()...)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := &discardWriter{}
			b.ReportAllocs()
			i := 0
			cpu := cpuclock.Now()
			for b.Loop() {
				w.header, w.status = http.Header{}, 0
				h.ServeHTTP(w, bc.reqs[i%len(bc.reqs)])
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				i++
			}
			b.ReportMetric(float64(cpuclock.Now()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkReadSplitOverHTTP is BenchmarkReadSplit over a real
// connection on loopback (an httptest server, and a Go client in the same
// process reading each answer whole, one request at a time): what read 3
// costs an application, the network path included (cpu-ns/op: server
// and client together).
func BenchmarkReadSplitOverHTTP(b *testing.B) {
	h, id := benchSplit(b)
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	hc := srv.Client()
	for _, bc := range []struct {
		name  string
		query []string
	}{
		{"one-version", []string{"environment=staging"}},
		{"split-without-subject", []string{"environment=production"}},
		{"split-with-subject", splitSubjects()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			reqs := make([]*http.Request, len(bc.query))
			for i, q := range bc.query {
				reqs[i] = mustNewRequest(b, srv.URL+"/v1/integration/prompts/"+id+"?"+q)
			}
			b.ReportAllocs()
			i := 0
			cpu := cpuclock.Now()
			for b.Loop() {
				res, err := hc.Do(reqs[i%len(reqs)])
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("status %d", res.StatusCode)
				}
				i++
			}
			b.ReportMetric(float64(cpuclock.Now()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func mustNewRequest(b *testing.B, u string) *http.Request {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-API-Key", "bench-key-0123456789abcdef0123456789abcdef")
	return req
}

// splitSubjects returns the queries of reads of production for 64
// subjects.
func splitSubjects() []string {
	var out []string
	for i := range 64 {
		out = append(out, "environment=production&subject=user-"+strconv.Itoa(1000+i))
	}
	return out
}

// benchSplit returns the handler of the split benchmarks over a memstore
// with BenchmarkReadPrompt's prompt, whose staging holds its version 1
// and production a split of it (90) and a version 2 of the same size
// (10), and the prompt's id.
func benchSplit(b *testing.B) (http.Handler, string) {
	ctx := context.Background()
	store, id := benchStore(b)
	v2, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: id, Content: benchContent + " Thank them for waiting.",
		Metadata: prompts.Metadata(`{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Staging, VersionNumber: prompts.Some(1)}); err != nil {
		b.Fatal(err)
	}
	if _, err := store.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 1, Weight: 90}, {VersionNumber: v2.VersionNumber, Weight: 10}}}); err != nil {
		b.Fatal(err)
	}
	return benchHandler(b, store), id
}
