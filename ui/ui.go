package ui

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// Defaults of the options.
const (
	DefaultPrefix      = "/ui/"
	DefaultIdleTimeout = 8 * time.Hour
	DefaultMaxAge      = 24 * time.Hour
	// DefaultSignInLimit failed sign-ins from one client address with
	// keys of one prefix are allowed per DefaultSignInWindow; more are
	// answered 429.
	DefaultSignInLimit  = 10
	DefaultSignInWindow = time.Minute
)

// Handler serves the web interface. It is an http.Handler, safe for
// concurrent use; make one with New.
type Handler struct {
	store    prompts.Store
	render   *prompts.Renderer // renders versions, partials resolved; parses each version once
	auth     httpapi.Authenticator
	prefix   string
	log      *slog.Logger
	now      func() time.Time
	idle     time.Duration
	maxAge   time.Duration
	sessions SessionStore
	secret   []byte // WithSecret's, or random
	signKey  []byte // signs the sign-in form's token; derived from secret
	secure   bool   // Secure cookies over plain HTTP too
	limiter  *limiter
	sessIdx  *sessionIndex          // the sessions, by key, least recently used last
	used     *usedForms             // the sign-in forms used
	idKey    []byte                 // names keys in the index; derived from secret
	pages    func() (*pages, error) // parsed at the first page served (see loadPages)
	static   *assets
	mux      *http.ServeMux
	cop      *http.CrossOriginProtection

	secureIf func(*http.Request) bool // Secure cookies on the requests it says too

	oidc   *oidcState // WithOIDC's sign-in, or nil
	noKeys bool       // WithKeySignIn(false)
}

// Option configures a Handler.
type Option func(*Handler) error

// WithPrefix sets the path the handler is mounted at: it starts and ends
// with "/", and is made of plain path segments (letters, digits, "-",
// "_", "." and "~"). The handler expects the whole path, prefix included
// (mount it with mux.Handle(prefix, h), not behind http.StripPrefix); its
// links and its cookie are scoped to it. The default is "/ui/".
func WithPrefix(prefix string) Option {
	return func(h *Handler) error {
		if !validPrefix(prefix) {
			return fmt.Errorf("ui: the prefix %q must start and end with \"/\" and hold only letters, digits, '-', '_', '.' and '~' between them", prefix)
		}
		h.prefix = prefix
		return nil
	}
}

// WithLogger sets the logger that records what pages do not show: the
// cause of every 500, at Error, and of every 503, at Warn. By default
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) error {
		if l != nil {
			h.log = l
		}
		return nil
	}
}

// WithIdleTimeout sets how long a session lasts without a request:
// DefaultIdleTimeout (8 hours) unless set. It must be positive.
func WithIdleTimeout(d time.Duration) Option {
	return func(h *Handler) error {
		if d <= 0 {
			return errors.New("ui: the idle timeout must be positive")
		}
		h.idle = d
		return nil
	}
}

// WithMaxAge sets how long a session lasts at most, however busy:
// DefaultMaxAge (24 hours) unless set. It must be positive. (A key the
// Authenticator no longer knows ends its sessions sooner: at their next
// request.)
func WithMaxAge(d time.Duration) Option {
	return func(h *Handler) error {
		if d <= 0 {
			return errors.New("ui: the maximum age of a session must be positive")
		}
		h.maxAge = d
		return nil
	}
}

// WithClock sets the clock that sessions and the sign-in limit read, for
// tests. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(h *Handler) error {
		if now != nil {
			h.now = now
		}
		return nil
	}
}

// WithSessionStore sets where sessions are kept: by default in the
// process's memory (NewMemorySessions with the handler's clock). Replicas
// behind a load balancer without sticky sessions need a shared one.
func WithSessionStore(s SessionStore) Option {
	return func(h *Handler) error {
		if s == nil {
			return errors.New("ui: the session store must not be nil")
		}
		h.sessions = s
		return nil
	}
}

// MinSecretLen is the least size of a secret given to WithSecret: 256
// bits.
const MinSecretLen = 32

// WithSecret sets the handler's secret, which signs the token of the
// sign-in form (see the package's documentation). By default New makes a
// random one, known to this handler only: then a sign-in page served by
// one replica and posted to another is refused (403, the form shown
// again). Replicas behind a load balancer without sticky sessions need
// one secret, of at least MinSecretLen random bytes, kept as secret as
// their API keys; changing it refuses only the sign-in forms open at
// the time. The secret is copied.
func WithSecret(secret []byte) Option {
	return func(h *Handler) error {
		if len(secret) < MinSecretLen {
			return fmt.Errorf("ui: the secret must be at least %d bytes, not %d", MinSecretLen, len(secret))
		}
		h.secret = slices.Clone(secret)
		return nil
	}
}

// WithSecureCookies marks the session cookie Secure on every answer, not
// only on those over TLS: for a handler behind a proxy that ends TLS, so
// that the browser never sends the cookie in the clear.
func WithSecureCookies() Option {
	return func(h *Handler) error {
		h.secure = true
		return nil
	}
}

// WithSecureCookiesIf marks the session cookie Secure on the answers to
// the requests for which secure reports true (as well as over TLS): for a
// handler behind a proxy that ends TLS and says so per request, such as
// with X-Forwarded-Proto: https.
func WithSecureCookiesIf(secure func(r *http.Request) bool) Option {
	return func(h *Handler) error {
		h.secureIf = secure
		return nil
	}
}

// WithSignInLimit sets how many failed sign-ins one client address (the
// host of the request's RemoteAddr) may make per window with keys that
// begin with the same 8 bytes; more with such keys are answered 429
// until the window ends, while keys that begin otherwise are still
// served, so that someone guessing keys behind a proxy does not lock out
// everyone behind it. DefaultSignInLimit per DefaultSignInWindow unless
// set. The limit slows down guessing by hand; what makes keys unguessable
// is their length.
func WithSignInLimit(n int, per time.Duration) Option {
	return func(h *Handler) error {
		if n < 1 || per <= 0 {
			return errors.New("ui: the sign-in limit needs at least 1 attempt per positive duration")
		}
		h.limiter.max, h.limiter.window = n, per
		return nil
	}
}

// New returns a Handler over store, signing people in with the keys auth
// knows. It returns an error for a nil store or authenticator, and for
// an invalid option.
func New(store prompts.Store, auth httpapi.Authenticator, opts ...Option) (*Handler, error) {
	if store == nil {
		return nil, errors.New("ui: the store must not be nil")
	}
	if auth == nil {
		return nil, errors.New("ui: the authenticator must not be nil")
	}
	h := &Handler{
		store:   store,
		render:  prompts.NewRenderer(store),
		auth:    auth,
		prefix:  DefaultPrefix,
		log:     slog.New(slog.DiscardHandler),
		now:     time.Now,
		idle:    DefaultIdleTimeout,
		maxAge:  DefaultMaxAge,
		limiter: &limiter{max: DefaultSignInLimit, window: DefaultSignInWindow, seen: map[string]*attempts{}},
		sessIdx: newSessionIndex(),
		used:    newUsedForms(),
	}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, err
		}
	}
	if h.noKeys && h.oidc == nil {
		return nil, errors.New("ui: with sign-in by API key turned off, WithOIDC is needed: nobody could sign in")
	}
	if h.sessions == nil {
		h.sessions = NewMemorySessions(h.now)
	}
	if h.secret == nil {
		h.secret = make([]byte, MinSecretLen)
		rand.Read(h.secret) // never fails (crypto/rand)
	}
	signKey, err := hkdf.Key(sha256.New, h.secret, nil, signinInfo, 32)
	if err != nil {
		return nil, err
	}
	h.signKey = signKey
	if h.idKey, err = hkdf.Key(sha256.New, h.secret, nil, keyIDInfo, 32); err != nil {
		return nil, err
	}
	if h.static, err = loadAssets(); err != nil {
		return nil, err
	}
	// The templates are checked now, and parsed again, to be kept, when
	// the first page is served: a server that only serves the API never
	// holds them (see pages).
	if _, err = loadPages(); err != nil {
		return nil, err
	}
	h.pages = sync.OnceValues(loadPages)
	h.cop = http.NewCrossOriginProtection()
	h.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, nil, http.StatusForbidden, "Refused", "This request came from another site, so it was refused. Nothing was changed.")
	}))
	h.routes()
	return h, nil
}

// Prefix returns the path the handler is mounted at.
func (h *Handler) Prefix() string { return h.prefix }

// ServeHTTP implements http.Handler. Every answer, errors and static
// files included, carries the security headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	if !strings.HasPrefix(r.URL.Path, h.prefix) {
		if r.URL.Path+"/" == h.prefix {
			http.Redirect(w, r, h.prefix, http.StatusSeeOther)
			return
		}
		h.notFound(w, r, nil)
		return
	}
	h.cop.Handler(h.mux).ServeHTTP(w, r)
}

// contentSecurityPolicy allows the page's own styles, script, images and
// forms, and nothing inline.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

func validPrefix(p string) bool {
	if len(p) < 1 || p[0] != '/' || p[len(p)-1] != '/' || strings.Contains(p, "//") {
		return false
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		if seg == "." || seg == ".." {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
			default:
				return false
			}
		}
	}
	return true
}
