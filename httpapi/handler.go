package httpapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/promptkit/prompts"
)

// DefaultBodyLimit is the largest request body the handler reads unless
// WithBodyLimit says otherwise: 1 MiB.
const DefaultBodyLimit = 1 << 20

// Handler serves the /v1/integration interface over a prompts.Store. It is
// an http.Handler, safe for concurrent use; make one with New.
type Handler struct {
	store   prompts.Store
	stale   staleReader // store, when it can report stale answers (a cache.Store)
	auth    Authenticator
	log     *slog.Logger
	observe func(r *http.Request, err error)
	limit   int64
	mux     *http.ServeMux
	bufs    sync.Pool // *[]byte response buffers

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
// watches the store's errors itself, as the standalone server does (one
// line when the store becomes unavailable, one when it recovers). By
// default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) {
		if l != nil {
			h.log = l
		}
	}
}

// WithErrorObserver sets f to be called, on the request's goroutine, with
// every error of the Store or the Authenticator that the handler answers,
// whatever its code, before it answers: to count errors, or to notice a
// store going unavailable without wrapping it. r's context carries the
// application's values.
func WithErrorObserver(f func(r *http.Request, err error)) Option {
	return func(h *Handler) { h.observe = f }
}

// WithAuthenticator sets what checks the X-API-Key of every request.
// Without one, every request is answered 401: the handler is closed by
// default, never open.
func WithAuthenticator(a Authenticator) Option {
	return func(h *Handler) { h.auth = a }
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
func New(store prompts.Store, opts ...Option) *Handler {
	stale, _ := store.(staleReader)
	h := &Handler{
		stale:      stale,
		store:      store,
		log:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		limit:      DefaultBodyLimit,
		mux:        http.NewServeMux(),
		hdrJSON:    []string{"application/json"},
		hdrProblem: []string{"application/problem+json"},
		hdrCache:   []string{"private, no-cache"},
	}
	h.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	for _, o := range opts {
		o(h)
	}
	h.register(h.routes())
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isCleanPath(r.URL.Path) {
		// The mux would redirect to the clean path, losing any prefix
		// the handler is mounted under: no such resource here.
		h.authed(h.notFound)(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// handlerFunc is a route's handler, called once the key is known.
type handlerFunc func(w http.ResponseWriter, r *http.Request, a Access)

// route is one method and path of the interface.
type route struct {
	pattern string // "METHOD /path", a ServeMux pattern
	role    Role   // the least role that may use it
	handle  handlerFunc
}

// register adds the routes to the mux, each behind authentication, and
// answers everything else as problems: a known path with another method
// is 405 with the Allow header listing the path's methods, any other path
// 404. Authentication runs first in every case.
func (h *Handler) register(routes []route) {
	var paths []string
	allow := map[string][]string{}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		h.mux.Handle(rt.pattern, h.authed(h.permitted(rt.role, rt.handle)))
		if _, ok := allow[path]; !ok {
			paths = append(paths, path)
		}
		allow[path] = append(allow[path], method)
		if method == http.MethodGet {
			allow[path] = append(allow[path], http.MethodHead)
		}
	}
	for _, path := range paths {
		methods := allow[path]
		slices.Sort(methods)
		h.mux.Handle(path, h.authed(h.methodNotAllowed(strings.Join(methods, ", "))))
	}
	h.mux.Handle("/", h.authed(h.notFound))
}

// authed returns next behind authentication: a missing, empty or unknown
// key is 401 before anything else is looked at.
func (h *Handler) authed(next handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := h.authenticate(w, r)
		if ok {
			next(w, r, a)
		}
	}
}

func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (Access, bool) {
	keys := r.Header["X-Api-Key"]
	if len(keys) == 0 || keys[0] == "" || h.auth == nil {
		h.unauthenticated(w)
		return Access{}, false
	}
	a, err := h.auth.Authenticate(r.Context(), keys[0])
	if err != nil {
		switch {
		case errors.Is(err, ErrUnknownKey):
			h.unauthenticated(w)
		case prompts.ErrorCode(err) == prompts.CodeUnavailable:
			h.storeError(w, r, err)
		default:
			// The authenticator failed: whatever its error says, the
			// request is not the client's fault.
			h.storeError(w, r, prompts.Internal(err))
		}
		return Access{}, false
	}
	return a, true
}

// permitted returns next behind the check of the key's role: a key whose
// role does not allow need is 403, before the request's body or anything
// else is looked at.
func (h *Handler) permitted(need Role, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if !a.Role.allows(need) {
			h.forbidden(w, need)
			return
		}
		if need > RoleRead {
			// The key's name is the actor of its changes, and the client
			// cannot change it: a bad one is the Authenticator's fault.
			if err := (prompts.Change{Actor: a.Name}).Validate(); err != nil {
				h.storeError(w, r, prompts.Internal(fmt.Errorf("httpapi: the Authenticator gave the key a name that cannot be an actor: %w", err)))
				return
			}
		}
		next(w, r, a)
	}
}

func (h *Handler) notFound(w http.ResponseWriter, _ *http.Request, _ Access) {
	h.problem(w, kindOf(prompts.CodeNotFound), "no such resource", nil)
}

func (h *Handler) methodNotAllowed(allow string) handlerFunc {
	v := []string{allow}
	return func(w http.ResponseWriter, r *http.Request, _ Access) {
		w.Header()["Allow"] = v
		h.problem(w, kindMethodNotAllowed, "method "+r.Method+" is not allowed here; allowed: "+allow, nil)
	}
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
