package main

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/mcp"
)

// mcpPath is where the server serves the Model Context Protocol.
const mcpPath = "/mcp"

// mountMCP serves package mcp at /mcp (unless -mcp=false), authenticated
// as the API is, with a key's sessions counted with its event streams
// (-max-streams-per-key). At the first signal its sessions end, as the
// event streams do.
func mountMCP(f *front, cfg config, store prompts.Store, g *guard, logger *slog.Logger, onShutdown func(func())) {
	if !cfg.mcp {
		return
	}
	h := mcp.New(store,
		mcp.WithAuthenticator(g.auth),
		mcp.WithLogger(logger),
		mcp.WithSessionGate(func(a httpapi.Access) (func(), bool) {
			if !g.streams.acquire(a.Name) {
				return nil, false
			}
			return func() { g.streams.release(a.Name) }, true
		}))
	onShutdown(h.Close)
	f.mux.Handle(mcpPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serveMCP(h, w, r) }))
}

// serveMCP serves r with h, unless its address is refused for sending too
// many unknown keys and its key is one (as the API does). The server's
// stream of a session (GET) may be closed to make room for new
// connections, as an event stream may: its client opens it again.
func (g *guard) serveMCP(h http.Handler, w http.ResponseWriter, r *http.Request) {
	if g.failures != nil && g.failures.blockEnd.Load() > 0 {
		if wait := g.failures.blocked(clientAddr(r, g.trustProxy)); wait > 0 {
			if key := mcpKey(r); key != "" {
				if _, err := g.auth.authenticate(r.Context(), key, false); errors.Is(err, httpapi.ErrUnknownKey) {
					tooMany(w, wait, "this address sent too many unknown API keys; it may send a valid one at once, or another after Retry-After")
					return
				}
			}
		}
	}
	if isMCPStream(r) {
		if c, _ := r.Context().Value(connAuthKey{}).(*connAuth); c != nil {
			c.stream.Store(true)
			defer c.stream.Store(false)
		}
	}
	h.ServeHTTP(w, r)
}

// mcpKey is the key of an MCP request: X-API-Key, or Authorization's
// bearer token.
func mcpKey(r *http.Request) string {
	if k := r.Header["X-Api-Key"]; len(k) == 1 {
		return k[0]
	}
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}

// isMCPStream reports whether r opens the server's stream of an MCP
// session (GET /mcp), which lasts as long as the session: no request
// timeout ends it.
func isMCPStream(r *http.Request) bool {
	return r.URL.Path == mcpPath && r.Method == http.MethodGet
}
