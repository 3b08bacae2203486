package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptkit/prompts/httpapi"
)

// streamLimit bounds the event streams one key holds open at once: a
// stream holds a connection for as long as its client likes, and a key
// could otherwise hold every connection the server has.
type streamLimit struct {
	max  int
	mu   sync.Mutex
	open map[string]int // by key name
}

func newStreamLimit(max int) *streamLimit {
	return &streamLimit{max: max, open: make(map[string]int)}
}

// acquire counts one more stream of key, unless it holds max.
func (s *streamLimit) acquire(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= s.max {
		return false
	}
	s.open[key]++
	return true
}

func (s *streamLimit) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key]--; s.open[key] <= 0 {
		delete(s.open, key)
	}
}

// keyFailures counts the unknown keys each client address sends: one that
// sends unknownKeyLimit within unknownKeyWindow is refused (429) for
// unknownKeyBlock, for unknown keys only, so that guessing keys is slow
// while a valid key from that address (a proxy's, or a colleague's behind
// the same NAT) is still served.
type keyFailures struct {
	now      func() time.Time
	mu       sync.Mutex
	addrs    map[string]*failures
	blockEnd atomic.Int64 // the latest end of any block, in Unix nanoseconds: a read without the lock
}

type failures struct {
	n            int
	start, until time.Time // the window's start; the block's end
}

const (
	unknownKeyLimit  = 20
	unknownKeyWindow = 10 * time.Second
	unknownKeyBlock  = time.Minute
	// maxTrackedAddrs bounds the addresses counted at once; past it, new
	// ones are not counted until old windows end.
	maxTrackedAddrs = 100_000
)

func newKeyFailures() *keyFailures {
	return &keyFailures{now: time.Now, addrs: make(map[string]*failures)}
}

// failed counts an unknown key sent from addr.
func (k *keyFailures) failed(addr string) {
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	f := k.addrs[addr]
	if f == nil {
		if len(k.addrs) >= maxTrackedAddrs {
			k.prune(now)
			if len(k.addrs) >= maxTrackedAddrs {
				return
			}
		}
		f = &failures{start: now}
		k.addrs[addr] = f
	}
	if now.Sub(f.start) > unknownKeyWindow {
		f.n, f.start = 0, now
	}
	f.n++
	if f.n >= unknownKeyLimit && now.After(f.until) {
		f.until = now.Add(unknownKeyBlock)
		if end := f.until.UnixNano(); end > k.blockEnd.Load() {
			k.blockEnd.Store(end)
		}
	}
}

// prune forgets the addresses whose window and block have ended.
func (k *keyFailures) prune(now time.Time) {
	for a, f := range k.addrs {
		if now.Sub(f.start) > unknownKeyWindow && now.After(f.until) {
			delete(k.addrs, a)
		}
	}
}

// blocked returns how long addr stays refused for unknown keys, or 0.
func (k *keyFailures) blocked(addr string) time.Duration {
	now := k.now()
	if now.UnixNano() >= k.blockEnd.Load() {
		return 0 // no address is blocked: the common case, without the lock
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if f := k.addrs[addr]; f != nil && now.Before(f.until) {
		return f.until.Sub(now)
	}
	return 0
}

// clientAddr is the address of the client that sent r: its connection's
// remote host or, behind a proxy the server trusts, the last address of
// X-Forwarded-For (the one the proxy added).
func clientAddr(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if v := r.Header["X-Forwarded-For"]; len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if last = strings.TrimSpace(last); last != "" {
				return last
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// guard answers, before the API, what the server limits on its own: a
// key's streams beyond -max-streams-per-key, and unknown keys from an
// address that sent too many. Everything else goes to the API as it came.
type guard struct {
	auth       namedKeys
	streams    *streamLimit
	failures   *keyFailures
	trustProxy bool
}

// serve serves r with api, unless a limit answers it first.
func (g *guard) serve(api http.Handler, w http.ResponseWriter, r *http.Request) {
	stream := isStream(r)
	var wait time.Duration
	if g.failures != nil && g.failures.blockEnd.Load() > 0 {
		wait = g.failures.blocked(clientAddr(r, g.trustProxy))
	}
	keys := r.Header["X-Api-Key"]
	if (!stream && wait == 0) || len(keys) != 1 || keys[0] == "" {
		api.ServeHTTP(w, r) // the usual path; a missing key is the API's 401
		return
	}
	a, err := g.auth.authenticate(r.Context(), keys[0], false)
	switch {
	case errors.Is(err, httpapi.ErrUnknownKey) && wait > 0:
		r.Pattern = "/v1/integration" // for the access log and the metrics
		tooMany(w, wait, "this address sent too many unknown API keys; it may send a valid one at once, or another after Retry-After")
		return
	case err != nil || !stream:
		api.ServeHTTP(w, r) // the API answers the key as it does
		return
	}
	if !g.streams.acquire(a.Name) {
		r.Pattern = "GET /v1/integration/events"
		tooMany(w, 5*time.Second, "the key holds "+strconv.Itoa(g.streams.max)+" open event streams and MCP sessions, the most it may (-max-streams-per-key); close one, or retry after Retry-After")
		return
	}
	defer g.streams.release(a.Name)
	if c, _ := r.Context().Value(connAuthKey{}).(*connAuth); c != nil {
		c.stream.Store(true) // the connection limit may close it to make room
		defer c.stream.Store(false)
	}
	api.ServeHTTP(w, r)
}

// tooMany answers 429 with Retry-After, as a problem of the API's shape.
func tooMany(w http.ResponseWriter, retry time.Duration, detail string) {
	secs := int((retry + time.Second - 1) / time.Second)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	w.WriteHeader(http.StatusTooManyRequests)
	io.WriteString(w, `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"`+detail+`","code":"too_many_requests"}`)
}
