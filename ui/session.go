package ui

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// Session is what the server keeps of one signed-in browser. The browser
// holds a random secret in a cookie; a SessionStore keeps the Session
// under a hash of that secret, so that what a store holds cannot be
// replayed as a cookie, and the API key in it is sealed under a key
// derived from the secret, so that it cannot be read without the cookie.
type Session struct {
	// SealedKey is the API key that signed in, sealed with AES-256-GCM
	// under a key derived (HKDF-SHA256) from the cookie's secret, which
	// no store sees. At every request the handler opens it and asks the
	// Authenticator what the key may see and do now.
	SealedKey []byte
	// SealedPerson is, for a person signed in with OpenID Connect
	// instead of a key, the person's access (their email as its Name,
	// the role and projects of the rule they matched), sealed as
	// SealedKey is, under another key derived from the cookie's secret.
	SealedPerson []byte
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
// was deleted. A store shared by replicas may encode a Session as it
// likes (encoding/json keeps every field): it holds no API key in the
// clear, and no cookie, so it need not be kept secret as keys are; what
// it must keep is its integrity, as a session's CSRF token and age
// are taken from it.
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
	e.s.SealedKey = slices.Clone(e.s.SealedKey)
	e.s.SealedPerson = slices.Clone(e.s.SealedPerson)
	return e.s, true, nil
}

// Save implements SessionStore. After as many saves as half the sessions
// it holds (64 at least), it forgets those that expired, so it holds at
// most about twice the live ones, at a constant cost a save.
func (m *MemorySessions) Save(_ context.Context, id string, s Session, expires time.Time) error {
	s.SealedKey = slices.Clone(s.SealedKey)
	s.SealedPerson = slices.Clone(s.SealedPerson)
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

// The cookies: the session's secret, and the sign-in form's nonce (its
// token is the nonce signed by the handler: a sign-in cannot be forged
// from another site).
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

// secretLen is the size of a session's secret: 256 bits. The session
// cookie holds it as randomToken makes it.
const secretLen = 32

// parseSecret returns the secret a session cookie holds, when it is one.
func parseSecret(v string) ([]byte, bool) {
	if len(v) != base64.RawURLEncoding.EncodedLen(secretLen) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) != secretLen {
		return nil, false
	}
	return b, true
}

// storeID is the id a SessionStore keeps a session under: a hash of the
// cookie's value.
func storeID(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

// sealInfo is the HKDF label of the key that seals a session's API key:
// whatever else is ever derived from the secret gets another.
const sealInfo = "github.com/promptkit/prompts/ui session API key, AES-256-GCM"

// sealer returns the AEAD that seals the API key of the session whose
// cookie holds secret: AES-256-GCM under a key derived from the secret
// with HKDF-SHA256, a random nonce before each sealed key.
func sealer(secret []byte) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, secret, nil, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	return newGCM(k)
}

// newGCM returns AES-256-GCM under k, a random nonce before each sealed
// message.
func newGCM(k []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCMWithRandomNonce(b)
}

// sealKey seals the API key under the session's secret.
func sealKey(secret []byte, key string) ([]byte, error) {
	a, err := sealer(secret)
	if err != nil {
		return nil, err
	}
	return a.Seal(nil, nil, []byte(key), nil), nil
}

// openKey returns the API key sealed under the session's secret, and
// false when sealed was not sealed under it (or was altered).
func openKey(secret, sealed []byte) (string, bool) {
	a, err := sealer(secret)
	if err != nil {
		return "", false
	}
	key, err := a.Open(nil, nil, sealed, nil)
	if err != nil {
		return "", false
	}
	return string(key), true
}

func (h *Handler) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     h.prefix,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   h.secure || r.TLS != nil || (h.secureIf != nil && h.secureIf(r)),
		SameSite: http.SameSiteStrictMode,
	}
}

// loadSession returns the request's session, when it has a live one, the
// id it is stored under and the cookie's secret. A session used after its
// idle timeout or maximum age is deleted. The key is not checked here:
// signedIn does that.
func (h *Handler) loadSession(r *http.Request) (Session, string, []byte, bool, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return Session{}, "", nil, false, nil
	}
	secret, ok := parseSecret(c.Value)
	if !ok {
		return Session{}, "", nil, false, nil
	}
	id := storeID(c.Value)
	s, ok, err := h.sessions.Load(r.Context(), id)
	if err != nil || !ok {
		return Session{}, "", nil, false, err
	}
	now := h.now()
	if !now.Before(s.LastSeen.Add(h.idle)) || !now.Before(s.Created.Add(h.maxAge)) {
		return Session{}, "", nil, false, h.endSession(r.Context(), id)
	}
	return s, id, secret, true, nil
}

// signedIn reports whether the call's request has a live session, and
// fills the call with it and with what its key may see and do now. The
// key is opened from the session and given to the Authenticator, as the
// HTTP interface does at every request: a key it no longer knows (or
// that may do nothing) ends the session, and the role and projects it
// answers now bound this request. A session that does not open with the
// cookie's secret (an entry put under another id) ends too. An error is
// the SessionStore's, or an *authError.
func (h *Handler) signedIn(c *call) (bool, error) {
	ctx := c.r.Context()
	s, id, secret, ok, err := h.loadSession(c.r)
	if err != nil || !ok {
		return false, err
	}
	if len(s.SealedPerson) > 0 {
		// A person's access is what the rule gave at sign-in, until the
		// session ends.
		a, ok := openPerson(secret, s.SealedPerson)
		if !ok || !allows(a.Role, httpapi.RoleRead) {
			return false, h.endSession(ctx, id)
		}
		if err := h.touch(c, s, id, "person:"+a.Name, a); err != nil {
			return false, err
		}
		return true, nil
	}
	key, ok := openKey(secret, s.SealedKey)
	if !ok {
		return false, h.endSession(ctx, id)
	}
	a, err := h.auth.Authenticate(ctx, key)
	switch {
	case errors.Is(err, httpapi.ErrUnknownKey) || (err == nil && !allows(a.Role, httpapi.RoleRead)):
		return false, h.endSession(ctx, id)
	case err != nil:
		if prompts.ErrorCode(err) != prompts.CodeUnavailable {
			// Whatever the authenticator's error says, it is not the
			// person's fault.
			err = prompts.Internal(err)
		}
		return false, &authError{err}
	}
	if err := h.touch(c, s, id, key, a); err != nil {
		return false, err
	}
	return true, nil
}

// touch makes the session id, of the key or person who, the most
// recently used, and fills the call with it and its access a.
func (h *Handler) touch(c *call, s Session, id, who string, a httpapi.Access) error {
	ctx := c.r.Context()
	// The most recently used, in the handler's index (a session of
	// another replica joins it), which may end the least recently used.
	h.endSessions(ctx, h.sessIdx.use(id, h.keyID(who)))
	// A session's LastSeen moves on at most once a minute, so that a
	// shared store is not written at every request.
	if now := h.now(); now.Sub(s.LastSeen) >= time.Minute {
		s.LastSeen = now
		if err := h.save(ctx, id, s); err != nil {
			return err
		}
	}
	c.s, c.sid, c.access, c.signed = s, id, a, true
	return nil
}

// authError is the Authenticator's failure to answer for a session's key.
type authError struct{ err error }

func (e *authError) Error() string { return "checking the session's API key: " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// endSession deletes the session id from the store and the index.
func (h *Handler) endSession(ctx context.Context, id string) error {
	h.sessIdx.forget(id)
	return h.sessions.Delete(ctx, id)
}

// endSessions deletes from the store the sessions that the index ended
// to stay within its limits. An error is logged: the request that ended
// them goes on.
func (h *Handler) endSessions(ctx context.Context, ids []string) {
	for _, id := range ids {
		if err := h.sessions.Delete(ctx, id); err != nil {
			h.log.WarnContext(ctx, "ui: ending a session past the session limits", "err", err)
		}
	}
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

// limiter counts failed sign-ins per client address and key prefix
// (limitKey) in fixed windows.
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

// maxTracked bounds the addresses (and prefixes) the limiter remembers; past it, it
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
