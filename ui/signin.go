package ui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

type signinData struct {
	Token string // the sign-in form's token: its cookie's nonce, signed
	Next  string
	Error string
	Keys  bool   // sign-in with a key is on
	OIDC  string // the OpenID Connect provider's name, or ""
	Start string // the address that starts signing in with it
}

// index is GET {prefix}: the projects when signed in, else the sign-in
// form.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r}
	ok, err := h.signedIn(c)
	if err != nil {
		c.storeError(err)
		return
	}
	if !c.fieldsOK() {
		return
	}
	if !ok {
		c.signinPage(http.StatusOK, h.safeNext(r.URL.Query().Get("next")), "")
		return
	}
	c.projects()
}

// signinTTL is how long a sign-in form may be used.
const signinTTL = time.Hour

// signinInfo is the HKDF label of the key that signs sign-in tokens:
// whatever else is ever derived from the handler's secret gets another.
const signinInfo = "github.com/promptkit/prompts/ui sign-in token, HMAC-SHA256"

// newSignin returns the value of a new sign-in cookie, a random nonce and
// when it expires, and the token of its form: the cookie's value signed
// with the handler's secret.
func (h *Handler) newSignin() (cookie, token string) {
	cookie = randomToken() + "." + strconv.FormatInt(h.now().Add(signinTTL).Unix(), 10)
	return cookie, h.signinToken(cookie)
}

// signinToken is the sign-in form's token for the cookie's value:
// HMAC-SHA256 under a key derived from the handler's secret.
func (h *Handler) signinToken(cookie string) string {
	m := hmac.New(sha256.New, h.signKey)
	m.Write([]byte(cookie))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signinExpiry is when the sign-in cookie's form expires (its value was
// checked by validSignin).
func signinExpiry(cookie string) time.Time {
	_, exp, _ := strings.Cut(cookie, ".")
	unix, _ := strconv.ParseInt(exp, 10, 64)
	return time.Unix(unix, 0)
}

// validSignin reports whether token is the token of the sign-in cookie's
// value, and that cookie has not expired. Only a handler with the secret
// can make a token, so a cookie planted in a browser with a token of the
// planter's choosing is refused.
func (h *Handler) validSignin(cookie, token string) bool {
	_, exp, ok := strings.Cut(cookie, ".")
	if !ok {
		return false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !h.now().Before(time.Unix(unix, 0)) {
		return false
	}
	return hmac.Equal([]byte(token), []byte(h.signinToken(cookie)))
}

// signinPage shows the sign-in form with a fresh token, and the nonce
// it signs in its cookie.
func (c *call) signinPage(status int, next, msg string) {
	value, token := c.h.newSignin()
	http.SetCookie(c.w, c.h.cookie(c.r, signinCookie, value, int(signinTTL/time.Second)))
	if next == c.h.prefix {
		next = ""
	}
	d := signinData{Token: token, Next: next, Error: msg, Keys: !c.h.noKeys}
	if o := c.h.oidc; o != nil {
		d.OIDC, d.Start = o.cfg.Name, c.h.prefix+"oidc/start"
		if next != "" {
			d.Start += "?next=" + url.QueryEscape(next)
		}
	}
	c.render(status, "signin", c.view("Sign in", d))
}

// signIn is POST {prefix}signin: the key becomes a session. The form
// must carry the token of the nonce its cookie holds, signed by the
// handler, so another site cannot sign a browser in with a key of its
// own, even where it can set the browser's cookies. A wrong key counts against the
// client's address; the key is never shown back. The session keeps the
// key sealed under the cookie's secret, to ask the Authenticator about
// it again at every request.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		c.fail(http.StatusBadRequest, errorData{Title: "Invalid form", Message: "The sign-in form could not be read."})
		return
	}
	next := h.safeNext(r.PostForm.Get("next"))
	if h.noKeys {
		c.signinPage(http.StatusForbidden, next, "Signing in with an API key is turned off here. Sign in with "+h.oidc.cfg.Name+".")
		return
	}
	ck, err := r.Cookie(signinCookie)
	if err != nil || !h.validSignin(ck.Value, r.PostForm.Get("csrf")) {
		c.signinPage(http.StatusForbidden, next, "The sign-in form was stale or came from another site, so it was refused. Sign in again below.")
		return
	}
	if !c.fieldsOK() {
		return
	}
	addr, now := clientAddr(r), h.now()
	// Each form works once: the page that answers gives a new one.
	if !h.used.use(ck.Value, signinExpiry(ck.Value), now) {
		c.signinPage(http.StatusForbidden, next, "The sign-in form was used already, so it was refused. Sign in again below.")
		return
	}
	key := r.PostForm.Get("key")
	if key == "" {
		c.signinPage(http.StatusBadRequest, next, "Enter an API key.")
		return
	}
	limited := limitKey(addr, key)
	if wait, blocked := h.limiter.blocked(limited, now); blocked {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		c.signinPage(http.StatusTooManyRequests, next, "Too many failed sign-ins from this address with keys like this one. Wait a minute, then try again.")
		return
	}
	a, err := h.auth.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, httpapi.ErrUnknownKey) || (err == nil && !allows(a.Role, httpapi.RoleRead)):
		h.limiter.failed(limited, now)
		c.signinPage(http.StatusUnauthorized, next, "That API key is not known. Check it and try again.")
		return
	case err != nil:
		if prompts.ErrorCode(err) != prompts.CodeUnavailable {
			err = prompts.Internal(err)
		}
		c.storeError(err)
		return
	}
	value, err := h.startSession(r, key, func(secret []byte) (Session, error) {
		sealed, err := sealKey(secret, key)
		return Session{SealedKey: sealed}, err
	})
	if err != nil {
		c.storeError(err)
		return
	}
	http.SetCookie(w, h.cookie(r, sessionCookie, value, 0))
	http.SetCookie(w, h.cookie(r, signinCookie, "", -1))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// startSession stores a new session for the request's browser, made by
// seal with the new cookie's secret, and returns the cookie's value. An
// earlier session of this browser ends; who names the key or person in
// the session index, whose limits may end the least recently used. An
// error is the SessionStore's.
func (h *Handler) startSession(r *http.Request, who string, seal func(secret []byte) (Session, error)) (string, error) {
	// A new id at every sign-in; an earlier session of this browser ends.
	if old, err := r.Cookie(sessionCookie); err == nil && old.Value != "" {
		if err := h.endSession(r.Context(), storeID(old.Value)); err != nil {
			return "", err
		}
	}
	value := randomToken()
	secret, _ := parseSecret(value)
	s, err := seal(secret)
	if err != nil {
		return "", prompts.Internal(err)
	}
	now := h.now()
	s.CSRF, s.Created, s.LastSeen = randomToken(), now, now
	id := storeID(value)
	if err := h.save(r.Context(), id, s); err != nil {
		return "", err
	}
	// Past the session limits, the least recently used end.
	h.endSessions(r.Context(), h.sessIdx.use(id, h.keyID(who)))
	return value, nil
}

// signOut is POST {prefix}signout: the session ends, here and in the
// store, so its cookie is worth nothing any more. It needs the session's
// CSRF token, but not the Authenticator: one can sign out while it does
// not answer.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	c := &call{h: h, w: w, r: r}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	s, id, _, ok, err := h.loadSession(r)
	if err != nil {
		c.storeError(err)
		return
	}
	if !ok {
		// Signed out already (or the session ended): nothing to end.
		http.SetCookie(w, h.cookie(r, sessionCookie, "", -1))
		http.Redirect(w, r, h.prefix, http.StatusSeeOther)
		return
	}
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, nil, http.StatusBadRequest, "Invalid form", "The form could not be read. You are still signed in.")
		return
	}
	if !validToken(r.PostForm.Get("csrf"), s.CSRF) {
		h.fail(w, r, nil, http.StatusForbidden, "Refused", "The form's security token is missing or wrong (was it sent from an old page or another site?). You are still signed in. Reload the page and try again.")
		return
	}
	if !c.fieldsOK() {
		return
	}
	if err := h.endSession(r.Context(), id); err != nil {
		c.storeError(err)
		return
	}
	http.SetCookie(w, h.cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, h.prefix, http.StatusSeeOther)
}
