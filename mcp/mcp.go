package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// Handler serves the Model Context Protocol over a prompts.Store: over
// Streamable HTTP as an http.Handler, and over any other transport of the
// SDK (stdio) with Serve. Make one with New; it is safe for concurrent
// use.
type Handler struct {
	store          prompts.Store
	events         prompts.EventLog // nil: no list_changed
	auth           httpapi.Authenticator
	env            prompts.Environment
	log            *slog.Logger
	gate           func(httpapi.Access) (release func(), ok bool)
	sessionTimeout time.Duration
	schemas        *sdk.SchemaCache
	http           *sdk.StreamableHTTPHandler
	projects       projectCache
	// render renders a version of a prompt, partials resolved
	// (prompts.Renderer.Render, which parses each version once).
	render func(ctx context.Context, in prompts.RenderRequest) (prompts.PromptVersion, prompts.Rendered, error)

	mu       sync.Mutex
	views    map[viewKey]*view
	sessions map[string]*session          // by Mcp-Session-Id
	served   map[*sdk.ServerSession]*view // Serve's
	revoked  map[string]struct{}          // kept keys revoked since the tail started
	closed   bool
	tail     *tail // running while a view exists; nil else
	wg       sync.WaitGroup
}

// Option configures a Handler.
type Option func(*Handler)

// WithEnvironment sets the environment whose active versions the prompts
// are when the URL names none (?environment=); prompts.Production by
// default.
func WithEnvironment(env prompts.Environment) Option {
	return func(h *Handler) { h.env = env }
}

// WithLogger sets the logger of what answers do not show (a store's
// failure behind a 500, a tail that cannot read the event log). By default
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) {
		if l != nil {
			h.log = l
		}
	}
}

// WithAuthenticator sets what checks the key of every HTTP request, sent
// as X-API-Key or as Authorization: Bearer <key>; the key's Access (role
// and projects) bounds what the session sees and may do, as over the
// /v1/integration interface. Without one, every HTTP request is answered
// 401: the handler is closed by default. (Serve takes the Access itself.)
func WithAuthenticator(a httpapi.Authenticator) Option {
	return func(h *Handler) { h.auth = a }
}

// WithSessionGate sets acquire, called with the key's Access before a
// session is opened over HTTP: it returns false to refuse the session (429
// with Retry-After), or a func that the handler calls once when the
// session ends. The standalone server counts a key's sessions with its
// event streams this way.
func WithSessionGate(acquire func(a httpapi.Access) (release func(), ok bool)) Option {
	return func(h *Handler) { h.gate = acquire }
}

// DefaultSessionTimeout is how long a session over HTTP lives without a
// request of its client. See WithSessionTimeout.
const DefaultSessionTimeout = 10 * time.Minute

// WithSessionTimeout sets how long a session over HTTP lives without a
// request of its client; while the client holds the session's stream
// (GET) open, it is not idle. A client gone without ending its session
// (DELETE) holds it, and its key's count of sessions, that long at most.
// Values below 1 keep DefaultSessionTimeout.
func WithSessionTimeout(d time.Duration) Option {
	return func(h *Handler) {
		if d > 0 {
			h.sessionTimeout = d
		}
	}
}

// New returns a Handler serving the prompts of store over MCP.
//
// Mount it where clients reach it, such as at /mcp:
//
//	mux.Handle("/mcp", mcp.New(store, mcp.WithAuthenticator(keys)))
//
// The handler starts no goroutine of its own until a session opens: each
// session has the goroutines the SDK gives it, plus one that waits for its
// end; and while at least one session is open, one goroutine of the
// handler follows the store's event log (prompts.EventLogOf) to tell the
// sessions when their list of prompts changes. It stops with the last
// session. Close ends every session and waits for all of them.
func New(store prompts.Store, opts ...Option) *Handler {
	events, _ := prompts.EventLogOf(store)
	h := &Handler{
		store:          store,
		events:         events,
		env:            prompts.Production,
		log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		sessionTimeout: DefaultSessionTimeout,
		schemas:        sdk.NewSchemaCache(),
		views:          make(map[viewKey]*view),
		sessions:       make(map[string]*session),
		served:         make(map[*sdk.ServerSession]*view),
	}
	for _, o := range opts {
		o(h)
	}
	h.render = prompts.NewRenderer(store).Render
	h.http = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if v, _ := r.Context().Value(viewCtxKey{}).(*view); v != nil {
			return v.server
		}
		return nil // the SDK answers: no session
	}, &sdk.StreamableHTTPOptions{
		Logger: h.log,
		// Idle sessions are ended by the handler (start, done), which
		// sees every request, prompts/get's fast path's too.
		JSONResponse: true,
		// The SDK's protection against DNS rebinding refuses a request
		// to a loopback address whose Host is not a loopback name: keys
		// protect this handler, and a server behind a local proxy needs
		// other Host names.
		DisableLocalhostProtection: true,
	})
	return h
}

// session is a session over HTTP: its view, and how to end it.
type session struct {
	view *view
	ss   *sdk.ServerSession // nil until its first request is answered

	// Under h.mu: the requests of the session under way, and the timer
	// that ends it once it has had none for h.sessionTimeout.
	busy  int
	timer *time.Timer
}

// start marks a request of s under way: s is not idle.
func (h *Handler) start(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.busy++
	if s.timer != nil {
		s.timer.Stop()
	}
}

// done marks a request of s done; with none under way, s is idle, and ends
// after h.sessionTimeout unless another comes.
func (h *Handler) done(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.busy--; s.busy == 0 && s.timer != nil {
		s.timer.Reset(h.sessionTimeout)
	}
}

type viewCtxKey struct{}

// ServeHTTP implements http.Handler: the Streamable HTTP transport of MCP
// (POST for the client's messages, GET for the server's stream, DELETE to
// end a session). Every request carries a key (X-API-Key, or
// Authorization: Bearer); a session belongs to the key that opened it,
// and is not found for any other. ?environment= on the URL of the request
// that opens a session sets its environment; on a request of a session it
// may only name that environment (400 for another).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	env := h.env
	q, envGiven := r.URL.Query()["environment"]
	if envGiven {
		if len(q) != 1 {
			problem(w, http.StatusBadRequest, "invalid", "environment: is given more than once")
			return
		}
		env = prompts.Environment(q[0])
	}
	if err := env.Validate(); err != nil {
		problem(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		h.mu.Lock()
		s := h.sessions[sid]
		var ss *sdk.ServerSession
		if s != nil {
			ss = s.ss
		}
		h.mu.Unlock()
		if s == nil || s.view.key.access != identity(a) {
			// Another key's session is not found either: a session id
			// is no credential.
			problem(w, http.StatusNotFound, "not_found", "no such session: open a new one (initialize)")
			return
		}
		if envGiven && env != s.view.env {
			problem(w, http.StatusBadRequest, "invalid", "environment: the session's is "+strconv.Quote(string(s.view.env))+
				", not "+strconv.Quote(string(env))+"; open a new session (initialize) for another")
			return
		}
		h.start(s) // a request under way, the server's stream (GET) too
		defer h.done(s)
		if r.Method == http.MethodGet {
			w = &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), every: streamWriteTimeout}
		}
		if r.Method == http.MethodPost && ss != nil && h.fastGet(w, r, s.view, ss) {
			return
		}
		h.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewCtxKey{}, s.view)))
		return
	}
	if r.Method != http.MethodPost {
		h.http.ServeHTTP(w, r) // the SDK's answer to a request without a session
		return
	}
	method, id, ok := peek(w, r)
	if ok && method != "initialize" && !sessionless(r) {
		// A client's mistake: not the server's error to log, nor the
		// SDK's (which logs it as an error and answers code 0).
		h.log.Debug("mcp: a request without a session that is no initialize", "method", method)
		answerRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
			"method "+strconv.Quote(method)+" needs a session: send initialize first, then its Mcp-Session-Id with every request")
		return
	}
	release := func() {}
	if h.gate != nil && ok && method == "initialize" {
		rel, ok := h.gate(a)
		if !ok {
			w.Header().Set("Retry-After", "5")
			problem(w, http.StatusTooManyRequests, "too_many_requests", "the key holds the most sessions it may; end one (DELETE), or retry after Retry-After")
			return
		}
		release = rel
	}
	v, err := h.openView(r.Context(), a, env)
	if err != nil {
		release()
		h.storeProblem(w, err)
		return
	}
	h.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewCtxKey{}, v)))
	h.settle(v, w.Header().Get("Mcp-Session-Id"), release)
}

// peek returns the method and id of the one JSON-RPC message of r's
// body, and whether it is one; it reads the body (at most
// sdk.DefaultMaxRequestBodyBytes, as the SDK does) and puts it back.
// initialize is the request that opens a session that lives.
func peek(w http.ResponseWriter, r *http.Request) (method string, id json.RawMessage, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sdk.DefaultMaxRequestBodyBytes))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Method == "" {
		return "", nil, false
	}
	if !plainID(msg.ID) {
		msg.ID = nil
	}
	return msg.Method, msg.ID, true
}

// sessionless reports whether r speaks a version of the protocol whose
// requests need no session (2026-07-28 on), which the SDK answers.
func sessionless(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28"
}

// answerRPCError answers a JSON-RPC error with the HTTP status given.
func answerRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// errReader returns its error, or io.EOF.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

// settle follows the session that a request without a session id made,
// if it made one that lives, until it ends.
func (h *Handler) settle(v *view, sid string, release func()) {
	var ss *sdk.ServerSession
	if sid != "" {
		for s := range v.server.Sessions() {
			if s.ID() == sid {
				ss = s
				break
			}
		}
	}
	h.mu.Lock()
	v.pending--
	s := h.sessions[sid]
	if ss == nil || s == nil {
		delete(h.sessions, sid)
		h.mu.Unlock()
		release()
		h.closeView(v)
		return
	}
	s.ss = ss
	s.timer = time.AfterFunc(h.sessionTimeout, func() { ss.Close() })
	if s.busy > 0 {
		s.timer.Stop()
	}
	v.sessions++
	stopExpiry := h.expire(v.access, ss)
	_, revoked := h.revoked[v.access.KeyID]
	end := func() {
		ss.Wait()
		stopExpiry()
		h.mu.Lock()
		s.timer.Stop()
		delete(h.sessions, sid)
		v.sessions--
		h.mu.Unlock()
		release()
		h.closeView(v)
	}
	if h.closed || (revoked && v.access.KeyID != "") {
		// Close ran while this session opened, or its key's revocation
		// was read: it ends now.
		h.mu.Unlock()
		ss.Close()
		end()
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		end()
	}()
}

// expire ends ss when the key of a expires (never for a key without
// expiry); call the func it returns once ss ended.
func (h *Handler) expire(a httpapi.Access, ss *sdk.ServerSession) (stop func()) {
	if a.ExpiresAt.IsZero() {
		return func() {}
	}
	t := time.AfterFunc(time.Until(a.ExpiresAt), func() { ss.Close() })
	return func() { t.Stop() }
}

// newSessionID is the view's server's GetSessionID: a new random id,
// known to the handler before its session is.
func (h *Handler) newSessionID(v *view) string {
	sid := rand.Text()
	h.mu.Lock()
	h.sessions[sid] = &session{view: v}
	h.mu.Unlock()
	return sid
}

// Serve serves one session over t (such as &mcp.StdioTransport{} of the
// SDK) for a key with access a, in the handler's environment, until the
// client ends it or ctx ends. It returns nil when the client ended it.
//
// a is the caller's to authenticate, just before (an Authenticator such
// as httpapi.StoreKeys). Serve refuses, with ErrKeyEnded, a key that
// expired (a.ExpiresAt) or whose revocation the handler has read from
// the event log since it began following it; a session under way ends
// when its key is revoked or expires, as over HTTP.
func (h *Handler) Serve(ctx context.Context, t sdk.Transport, a httpapi.Access) error {
	if !a.ExpiresAt.IsZero() && !time.Now().Before(a.ExpiresAt) {
		return ErrKeyEnded
	}
	v, err := h.openView(ctx, a, h.env)
	if err != nil {
		return err
	}
	ss, err := v.server.Connect(ctx, t, nil)
	h.mu.Lock()
	v.pending--
	closed := h.closed
	_, revoked := h.revoked[a.KeyID]
	revoked = revoked && a.KeyID != ""
	if err == nil && !revoked {
		// Registered in the step that read h.revoked, so that a
		// revocation read afterwards finds the session (revoke).
		v.sessions++
		h.served[ss] = v
	}
	h.mu.Unlock()
	if err == nil && revoked {
		ss.Close()
		err = ErrKeyEnded
	}
	if err != nil {
		h.closeView(v)
		return err
	}
	if closed {
		ss.Close()
	}
	defer h.expire(a, ss)()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		ss.Close()
		<-done
		err = ctx.Err()
	}
	h.mu.Lock()
	v.sessions--
	delete(h.served, ss)
	h.mu.Unlock()
	h.closeView(v)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// Close ends every session (Serve's too, which then return), stops
// following the event log and waits for the goroutines of the sessions
// to end. A request that would open a session afterwards is answered 503,
// and Serve returns at once.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	var open []*sdk.ServerSession
	for _, s := range h.sessions {
		if s.ss != nil {
			open = append(open, s.ss)
		}
	}
	for ss := range h.served {
		open = append(open, ss)
	}
	h.mu.Unlock()
	for _, ss := range open {
		ss.Close()
	}
	h.wg.Wait()
}

// authenticate returns the key's access, or answers the request.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (httpapi.Access, bool) {
	key, ok := requestKey(r)
	if !ok || h.auth == nil {
		w.Header().Set("WWW-Authenticate", `Bearer, APIKey header="X-API-Key"`)
		problem(w, http.StatusUnauthorized, "unauthenticated", "a valid API key is required, in X-API-Key or Authorization: Bearer")
		return httpapi.Access{}, false
	}
	a, err := h.auth.Authenticate(r.Context(), key)
	switch {
	case err == nil:
		return a, true
	case errors.Is(err, httpapi.ErrUnknownKey):
		w.Header().Set("WWW-Authenticate", `Bearer, APIKey header="X-API-Key"`)
		problem(w, http.StatusUnauthorized, "unauthenticated", "a valid API key is required, in X-API-Key or Authorization: Bearer")
	default:
		h.storeProblem(w, err)
	}
	return httpapi.Access{}, false
}

// requestKey returns the request's one key: X-API-Key, or the token of
// Authorization: Bearer. Two keys, or none, are no key.
func requestKey(r *http.Request) (string, bool) {
	keys := r.Header["X-Api-Key"]
	var bearer []string
	for _, v := range r.Header["Authorization"] {
		scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			bearer = append(bearer, strings.TrimSpace(token))
		}
	}
	switch {
	case len(keys) == 1 && len(bearer) == 0 && keys[0] != "":
		return keys[0], true
	case len(keys) == 0 && len(bearer) == 1 && bearer[0] != "":
		return bearer[0], true
	}
	return "", false
}

// storeProblem answers a failure of the store or the authenticator:
// 503 with Retry-After when it is unavailable, else 500 (logged).
func (h *Handler) storeProblem(w http.ResponseWriter, err error) {
	if errors.Is(err, errClosed) || prompts.ErrorCode(err) == prompts.CodeUnavailable {
		w.Header().Set("Retry-After", "1")
		problem(w, http.StatusServiceUnavailable, "unavailable", "the store is unavailable; retry later")
		return
	}
	h.log.Error("mcp: cannot open a session", "err", err)
	problem(w, http.StatusInternalServerError, "internal", "the server failed; it is logged")
}

// problem answers an RFC 9457 problem of the /v1/integration interface's
// shape.
func problem(w http.ResponseWriter, status int, code, detail string) {
	b, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
		Code   string `json:"code"`
	}{"about:blank", http.StatusText(status), status, detail, code})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(b)
}

// streamWriteTimeout is how long a write of the session's stream may
// take: a client that stops reading is let go after it.
const streamWriteTimeout = time.Minute

// streamWriter moves the write deadline of a long-lived stream (the
// server's GET stream of a session) forward at each write, so that a
// server's WriteTimeout does not cut it while a client that stopped
// reading is still let go.
type streamWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	every time.Duration
}

func (s *streamWriter) WriteHeader(code int) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.every))
	s.ResponseWriter.WriteHeader(code)
}

func (s *streamWriter) Write(b []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.every))
	return s.ResponseWriter.Write(b)
}

func (s *streamWriter) Flush() { _ = s.rc.Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
