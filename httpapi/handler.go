package httpapi

import (
	"hash/maphash"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/promptkit/prompts"
)

// DefaultBodyLimit is the largest request body the handler reads unless
// WithBodyLimit says otherwise: 1 MiB.
const DefaultBodyLimit = 1 << 20

// Handler serves the /v1/integration interface over a prompts.Store. It is
// an http.Handler, safe for concurrent use; make one with New.
type Handler struct {
	store   prompts.Store
	active  prompts.ActiveReader // store, when it is one (nil else): prompts.ReadActive's assertion, made once
	fresh   prompts.Store        // the store under store's caches, for reads that ask for a fresh answer; nil without one
	auth    Authenticator
	log     *slog.Logger
	observe func(*http.Request, error) // nil: none
	limit   int64
	mux     *http.ServeMux
	direct  []direct     // the routes ServeHTTP matches before the mux
	bufs    sync.Pool    // *[]byte response buffers
	answers answerCache  // the encoded answers of reads, by ETag
	budget  answerBudget // the answers being written (WithMaxAnswerMemory)
	// renderer renders versions with their partials, each version
	// parsed once, not per render.
	renderer *prompts.Renderer

	// The event log and webhooks, when the store keeps them (nil else).
	events       prompts.EventLog
	hooks        prompts.WebhookStore
	keys         prompts.KeyStore // nil: the key routes answer 501
	allowPrivate bool             // AllowPrivateWebhooks
	keepAlive    time.Duration    // WithStreamKeepAlive
	tail         *tail            // what every stream reads; nil without events
	closing      closing          // ends at CloseStreams

	// Header values shared by every response, set by direct assignment
	// to the header map. They are never changed after New.
	hdrJSON    []string
	hdrProblem []string
	hdrCache   []string
}

// Option configures a Handler.
type Option func(*Handler)

// WithBodyLimit sets the largest request body the handler reads, in bytes;
// a larger one is answered 413. Values below 1 keep the default, 1 MiB.
func WithBodyLimit(n int64) Option {
	return func(h *Handler) {
		if n > 0 {
			h.limit = n
		}
	}
}

// WithLogger sets the logger that records what the responses do not show:
// the cause of every 500, at Error, and of every 503, at Debug. In an
// outage every request fails alike, so a line each would bury the log: an
// application that wants to know when its store goes away and comes back
// watches the store's errors with WithErrorObserver, as the standalone
// server does (one line when the store becomes unavailable, one when it
// recovers). By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) {
		if l != nil {
			h.log = l
		}
	}
}

// WithErrorObserver sets f, which the handler calls with every error that
// the Store or the Authenticator returned to it and that it answers,
// whatever its code (not found, conflict, invalid, unavailable,
// internal, …): once per such error, on the request's goroutine, before
// the answer is written, with the request, whose context carries the
// application's values. So an application counts the store's errors by
// code, or notices the store going away, without wrapping the Store:
//
//	httpapi.WithErrorObserver(func(r *http.Request, err error) {
//		if errors.Is(err, httpapi.ErrUnknownKey) {
//			return // a client's wrong key, answered 401
//		}
//		storeErrors.Add(string(prompts.ErrorCode(err)), 1)
//	})
//
// err is the error as returned, except an Authenticator's failure other
// than ErrUnknownKey and prompts.CodeUnavailable, which is answered 500
// and reported wrapped by prompts.Internal (so that prompts.ErrorCode
// tells the code answered). What the handler refuses by itself is not
// reported: a missing key, a role that does not allow the request, a
// malformed body, a broken field rule (an input's Validate), a render
// that misses a variable, a resource of a project the key may not see.
// f must be safe for concurrent use and should return quickly.
func WithErrorObserver(f func(r *http.Request, err error)) Option {
	return func(h *Handler) { h.observe = f }
}

// WithAuthenticator sets what checks the X-API-Key of every request.
// Without one, every request is answered 401: the handler is closed by
// default, never open.
func WithAuthenticator(a Authenticator) Option {
	return func(h *Handler) { h.auth = a }
}

// DefaultStreamKeepAlive is how long an event stream stays silent at
// most: a comment line goes out when nothing else has for that long, so
// that proxies and clients see the connection is alive.
const DefaultStreamKeepAlive = 15 * time.Second

// WithStreamKeepAlive sets how long an event stream stays silent at most
// before a comment line (": keep-alive") goes out; values below 1 keep
// DefaultStreamKeepAlive.
func WithStreamKeepAlive(d time.Duration) Option {
	return func(h *Handler) {
		if d > 0 {
			h.keepAlive = d
		}
	}
}

// AllowPrivateWebhooks lets webhooks be created for any host: without
// it, a URL whose host is, or resolves to, a loopback, private,
// link-local, unspecified or multicast address (see package webhook) is
// refused with 400. Use it when receivers live on a private network and
// whoever holds an admin key may reach it; the dispatcher needs
// webhook.AllowPrivate as well.
func AllowPrivateWebhooks() Option {
	return func(h *Handler) { h.allowPrivate = true }
}

// New returns a Handler serving the interface over store.
//
// Its routes all start with /v1/integration (see routes.go). Mount it on an
// application's mux at the root:
//
//	mux.Handle("/v1/integration/", h)
//
// or under a prefix, with http.StripPrefix:
//
//	mux.Handle("/prompts-api/", http.StripPrefix("/prompts-api", h))
//
// The URLs the handler sends back (Location, Link) are relative references,
// so they stay right under a prefix or behind a proxy that rewrites paths.
//
// A read whose request says Cache-Control: no-cache (or max-age=0) is
// answered by the store under store's cache, when store is one (see
// package cache): fresh, never stale.
//
// The reads of a prompt in an environment go through store's ReadActive
// when it has one (prompts.ActiveReader): shared, since the handler
// changes nothing of the answer, so that a store that can answer without a
// copy does, and a stale answer is said so (Cache-Status).
//
// The event log and webhook routes need a store that keeps them
// (prompts.EventLogOf and prompts.WebhookStoreOf find them, under a cache
// too); over one that does not, they answer 501.
func New(store prompts.Store, opts ...Option) *Handler {
	events, _ := prompts.EventLogOf(store)
	hooks, _ := prompts.WebhookStoreOf(store)
	h := &Handler{
		store:      store,
		renderer:   prompts.NewRenderer(store),
		fresh:      underCaches(store),
		log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		limit:      DefaultBodyLimit,
		mux:        http.NewServeMux(),
		hdrJSON:    []string{"application/json"},
		hdrProblem: []string{"application/problem+json"},
		hdrCache:   []string{"private, no-cache"},
	}
	h.active, _ = store.(prompts.ActiveReader)
	h.events, h.hooks, h.keepAlive = events, hooks, DefaultStreamKeepAlive
	h.keys, _ = prompts.KeyStoreOf(store)
	h.closing = newClosing()
	h.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	h.answers.seed = maphash.MakeSeed()
	h.budget.limit = DefaultMaxAnswerMemory
	for _, o := range opts {
		o(h)
	}
	if events != nil {
		h.tail = newTail(events, h.log)
	}
	h.register(h.routes())
	return h
}

// ServeHTTP implements http.Handler. Like an http.ServeMux, it sets the
// request's Pattern to the pattern of the route that answers it (such as
// "GET /v1/integration/prompts/{prompt_id}"), for an application's
// logs and metrics. It sets the request's path values (r.PathValue) as
// the ServeMux does too, but for read 3 and render, the two routes of an
// application's hot path, which it matches itself: their prompt_id is
// set only for the error observer (WithErrorObserver), as setting it
// costs a map; an application's own logs read it from the path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d, v := h.matchDirect(r); d != nil {
		h.serveDirect(w, r, d, v)
		return
	}
	if !isCleanPath(r.URL.Path) {
		// The mux would redirect to the clean path, losing any prefix
		// the handler is mounted under: no such resource here.
		h.authed(h.notFound)(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// isCleanPath reports whether p is an absolute path with no empty, "." or
// ".." segment (a trailing slash is allowed).
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		seg := p[start:i]
		if seg == "." || seg == ".." || (seg == "" && i < len(p)) {
			return false
		}
		start = i + 1
	}
	return true
}
