package ui

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/promptkit/prompts/httpapi"
)

// Session is what the server keeps of one signed-in browser. The browser
// holds only a random id; a SessionStore keeps the Session under a hash
// of that id, so that what a store holds cannot be replayed as a cookie.
type Session struct {
	// Access is what the key that signed in may see and do, as the
	// Authenticator answered at sign-in. The key itself is not kept.
	Access httpapi.Access
	// CSRF is the token every form that changes something carries.
	CSRF string
	// Created is when the session began; LastSeen when it was last used.
	Created, LastSeen time.Time
	// Flash is a message for the next page shown, then cleared.
	Flash string
}

// SessionStore keeps sessions. Implementations must be safe for
// concurrent use. The handler checks a session's age itself, so a store
// may keep an expired session a while; it must not hand out one that
// was deleted.
type SessionStore interface {
	// Load returns the session stored under id, and whether there is one.
	Load(ctx context.Context, id string) (Session, bool, error)
	// Save stores s under id, replacing what was there; the store may
	// forget it after expires.
	Save(ctx context.Context, id string, s Session, expires time.Time) error
	// Delete forgets the session under id; an unknown id is no error.
	Delete(ctx context.Context, id string) error
}

// MemorySessions is a SessionStore in the memory of the process. It
// forgets expired sessions lazily, as it saves new ones, with no
// goroutine of its own. Its sessions are lost when the process stops,
// and other processes do not see them.
type MemorySessions struct {
	now   func() time.Time
	mu    sync.Mutex
	m     map[string]memSession
	saves int
}

type memSession struct {
	s       Session
	expires time.Time
}

// NewMemorySessions returns an empty MemorySessions reading the time from
// now (time.Now when nil).
func NewMemorySessions(now func() time.Time) *MemorySessions {
	if now == nil {
		now = time.Now
	}
	return &MemorySessions{now: now, m: map[string]memSession{}}
}

// Load implements SessionStore.
func (m *MemorySessions) Load(_ context.Context, id string) (Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[id]
	if !ok {
		return Session{}, false, nil
	}
	if !m.now().Before(e.expires) {
		delete(m.m, id)
		return Session{}, false, nil
	}
	e.s.Access.ProjectIDs = slices.Clone(e.s.Access.ProjectIDs)
	return e.s, true, nil
}

// Save implements SessionStore. After as many saves as half the sessions
// it holds (64 at least), it forgets those that expired, so it holds at
// most about twice the live ones, at a constant cost a save.
func (m *MemorySessions) Save(_ context.Context, id string, s Session, expires time.Time) error {
	s.Access.ProjectIDs = slices.Clone(s.Access.ProjectIDs)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[id] = memSession{s: s, expires: expires}
	if m.saves++; m.saves >= 64 && 2*m.saves >= len(m.m) {
		m.saves = 0
		now := m.now()
		for k, e := range m.m {
			if !now.Before(e.expires) {
				delete(m.m, k)
			}
		}
	}
	return nil
}

// Delete implements SessionStore.
func (m *MemorySessions) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, id)
	return nil
}

// Len returns the number of sessions held, expired ones not yet forgotten
// included.
func (m *MemorySessions) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

// The cookies: the session's id, and the sign-in form's token (a double
// submit: a sign-in cannot be forged from another site).
const (
	sessionCookie = "prompts_session"
	signinCookie  = "prompts_signin"
)

// randomToken returns 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// storeID is the id a SessionStore keeps a session under: a hash of the
// cookie's value.
func storeID(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

func (h *Handler) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     h.prefix,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   h.secure || r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	}
}

// session returns the request's session, when it has a live one, and the
// id it is stored under. A session used after its idle timeout or maximum
// age is deleted.
func (h *Handler) session(r *http.Request) (Session, string, bool, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return Session{}, "", false, nil
	}
	id := storeID(c.Value)
	s, ok, err := h.sessions.Load(r.Context(), id)
	if err != nil || !ok {
		return Session{}, "", false, err
	}
	now := h.now()
	if !now.Before(s.LastSeen.Add(h.idle)) || !now.Before(s.Created.Add(h.maxAge)) {
		return Session{}, "", false, h.sessions.Delete(r.Context(), id)
	}
	// A session's LastSeen moves on at most once a minute, so that a
	// shared store is not written at every request.
	if now.Sub(s.LastSeen) >= time.Minute {
		s.LastSeen = now
		if err := h.save(r.Context(), id, s); err != nil {
			return Session{}, "", false, err
		}
	}
	return s, id, true, nil
}

func (h *Handler) save(ctx context.Context, id string, s Session) error {
	expires := s.LastSeen.Add(h.idle)
	if end := s.Created.Add(h.maxAge); end.Before(expires) {
		expires = end
	}
	return h.sessions.Save(ctx, id, s, expires)
}

// validToken reports whether the form's token is want, in constant time.
func validToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// limiter counts failed sign-ins per client address in fixed windows.
type limiter struct {
	max    int
	window time.Duration
	mu     sync.Mutex
	seen   map[string]*attempts
}

type attempts struct {
	start time.Time
	n     int
}

// maxTracked bounds the addresses the limiter remembers; past it, it
// forgets those whose window ended, and if that is not enough, all.
const maxTracked = 10000

// blocked reports whether addr has used up its failures, and for how long.
func (l *limiter) blocked(addr string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.seen[addr]
	if a == nil || now.Sub(a.start) >= l.window {
		return 0, false
	}
	if a.n >= l.max {
		return a.start.Add(l.window).Sub(now), true
	}
	return 0, false
}

// failed counts a failed sign-in from addr.
func (l *limiter) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.seen[addr]
	if a == nil || now.Sub(a.start) >= l.window {
		if len(l.seen) >= maxTracked {
			for k, v := range l.seen {
				if now.Sub(v.start) >= l.window {
					delete(l.seen, k)
				}
			}
			if len(l.seen) >= maxTracked {
				clear(l.seen)
			}
		}
		a = &attempts{start: now}
		l.seen[addr] = a
	}
	a.n++
}

// clientAddr is the host of the request's remote address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
