package ui

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

type signinData struct {
	Token string // the sign-in form's token, also in its cookie
	Next  string
	Error string
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

// signinPage shows the sign-in form with a fresh token in its cookie.
func (c *call) signinPage(status int, next, msg string) {
	token := randomToken()
	http.SetCookie(c.w, c.h.cookie(c.r, signinCookie, token, 3600))
	if next == c.h.prefix {
		next = ""
	}
	c.render(status, "signin", c.view("Sign in", signinData{Token: token, Next: next, Error: msg}))
}

// signIn is POST {prefix}signin: the key becomes a session. The form
// must carry the token its cookie holds, so another site cannot sign a
// browser in with a key of its own. A wrong key counts against the
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
	ck, err := r.Cookie(signinCookie)
	if err != nil || !validToken(r.PostForm.Get("csrf"), ck.Value) {
		c.signinPage(http.StatusForbidden, next, "The sign-in form was stale or came from another site, so it was refused. Sign in again below.")
		return
	}
	if !c.fieldsOK() {
		return
	}
	addr, now := clientAddr(r), h.now()
	if wait, blocked := h.limiter.blocked(addr, now); blocked {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		c.signinPage(http.StatusTooManyRequests, next, "Too many failed sign-ins from this address. Wait a minute, then try again.")
		return
	}
	key := r.PostForm.Get("key")
	if key == "" {
		c.signinPage(http.StatusBadRequest, next, "Enter an API key.")
		return
	}
	a, err := h.auth.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, httpapi.ErrUnknownKey) || (err == nil && !allows(a.Role, httpapi.RoleRead)):
		h.limiter.failed(addr, now)
		c.signinPage(http.StatusUnauthorized, next, "That API key is not known. Check it and try again.")
		return
	case err != nil:
		if prompts.ErrorCode(err) != prompts.CodeUnavailable {
			err = prompts.Internal(err)
		}
		c.storeError(err)
		return
	}
	// A new id at every sign-in; an earlier session of this browser ends.
	if old, err := r.Cookie(sessionCookie); err == nil && old.Value != "" {
		if err := h.sessions.Delete(r.Context(), storeID(old.Value)); err != nil {
			c.storeError(err)
			return
		}
	}
	value := randomToken()
	secret, _ := parseSecret(value)
	sealed, err := sealKey(secret, key)
	if err != nil {
		c.storeError(prompts.Internal(err))
		return
	}
	s := Session{SealedKey: sealed, CSRF: randomToken(), Created: now, LastSeen: now}
	if err := h.save(r.Context(), storeID(value), s); err != nil {
		c.storeError(err)
		return
	}
	http.SetCookie(w, h.cookie(r, sessionCookie, value, 0))
	http.SetCookie(w, h.cookie(r, signinCookie, "", -1))
	http.Redirect(w, r, next, http.StatusSeeOther)
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
	if err := h.sessions.Delete(r.Context(), id); err != nil {
		c.storeError(err)
		return
	}
	http.SetCookie(w, h.cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, h.prefix, http.StatusSeeOther)
}
