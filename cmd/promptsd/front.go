package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// readiness says whether the store answers now, with a word on its state
// that names no path nor address.
type readiness func(ctx context.Context) (string, error)

// front is the server's handler: the probes and the metrics at once, and
// /v1/integration once the store is open (503 until then).
type front struct {
	mux   *http.ServeMux
	api   atomic.Pointer[http.Handler]
	ui    atomic.Pointer[http.Handler] // nil until the store opens, and with -ui=false
	useUI bool                         // -ui
	ready atomic.Pointer[readiness]
}

// newFront serves /livez (the process answers), /readyz (the store
// answers, within a second: a real ping of the database, and the state of
// the cache's feed), /healthz (an alias of /livez, kept for the probes
// that used it) and /metrics. None needs a key.
func newFront(m *metrics, useUI bool) *front {
	f := &front{mux: http.NewServeMux(), useUI: useUI}
	live := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	}
	f.mux.HandleFunc("GET /livez", live)
	f.mux.HandleFunc("GET /healthz", live)
	f.mux.HandleFunc("GET /readyz", f.readyz)
	f.mux.Handle("GET /metrics", m.handler())
	return f
}

// open puts api, and the web interface web unless it is nil, in front of
// the store that ready asks.
func (f *front) open(api, web http.Handler, ready readiness) {
	f.ready.Store(&ready)
	if web != nil {
		f.ui.Store(&web)
	}
	f.api.Store(&api)
}

func (f *front) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ready := f.ready.Load()
	if ready == nil {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: starting, the store is not open yet\n")
		return
	}
	state, err := (*ready)(r.Context())
	if err != nil {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "not ready: the store does not answer ("+state+")\n")
		return
	}
	io.WriteString(w, "ready: "+state+"\n")
}

// starting is the problem every API request gets before the store opens:
// the same shape, status and code as the API's own 503.
const starting = `{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the server is starting: its store is not open yet; retry later","code":"unavailable"}`

// ServeHTTP sends every path under /v1/integration to the API as it came,
// those under /ui/ to the web interface (unless -ui=false), and the rest
// to the mux. A ServeMux would answer a path such as
// /v1/integration//prompts with a redirect to its clean form, before the
// API could ask for a key; the API answers such paths itself (401, then
// 404).
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const prefix = "/v1/integration"
	if p := r.URL.Path; p == prefix || strings.HasPrefix(p, prefix+"/") {
		if api := f.api.Load(); api != nil {
			(*api).ServeHTTP(w, r)
			return
		}
		r.Pattern = prefix // for the access log and the metrics: the API, not "unmatched"
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, starting)
		return
	}
	if p := r.URL.Path; f.useUI && (p == "/ui" || strings.HasPrefix(p, "/ui/")) {
		if web := f.ui.Load(); web != nil {
			(*web).ServeHTTP(w, r)
			return
		}
		r.Pattern = "/ui/"
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "the server is starting: its store is not open yet; reload in a moment\n")
		return
	}
	f.mux.ServeHTTP(w, r)
}
