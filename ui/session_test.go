package ui_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/ui"
)

func TestSignInAndOut(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()

	p := b.get(e.prefix)
	is.Equal(p.StatusCode, 200)
	is.True(hasField(p, "API key"))    // the sign-in form
	is.True(hasButton(p, "Sign in"))   // its button
	is.True(!hasButton(p, "Sign out")) // not signed in

	p = b.post(e.prefix+"signin", url.Values{"key": {adminKey}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(p.Header.Get("Location"), e.prefix)
	c := setCookie(p, "prompts_session")
	is.True(c != nil)
	is.True(c.HttpOnly)                           // scripts cannot read it
	is.Equal(c.SameSite, http.SameSiteStrictMode) // not sent from other sites
	is.True(!c.Secure)                            // plain HTTP here
	is.Equal(c.Path, e.prefix)                    // scoped to the mount point
	is.True(!strings.Contains(c.Value, adminKey)) // the cookie holds only a secret
	secret, err := base64.RawURLEncoding.DecodeString(c.Value)
	is.NoErr(err)
	is.Equal(len(secret), 32) // of 256 random bits

	p = b.follow(p)
	is.Equal(p.StatusCode, 200)
	is.True(hasLink(p, "Alpha"))      // the projects, by name
	is.True(hasLink(p, "Beta"))       //
	is.True(hasButton(p, "Sign out")) // on every signed-in page
	is.True(strings.Contains(text(p), "Signed in as root"))

	old := b.sessionCookie()
	p = b.post(e.prefix+"signout", nil)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	gone := setCookie(p, "prompts_session")
	is.True(gone != nil && gone.MaxAge < 0) // the browser drops it
	p = b.follow(p)
	is.True(hasField(p, "API key")) // signed out

	// The session ended on the server: the old cookie is worth nothing.
	b2 := e.browser()
	u, _ := url.Parse(e.srv.URL + e.prefix)
	b2.c.Jar.SetCookies(u, []*http.Cookie{{Name: old.Name, Value: old.Value, Path: e.prefix}})
	p = b2.get(e.prefix)
	is.True(hasField(p, "API key"))
	is.True(!hasLink(p, "Alpha"))
}

func TestSignInCookieIsSecureOverTLS(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, httptest.NewTLSServer)
	b := e.browser()
	b.get(e.prefix)
	p := b.post(e.prefix+"signin", url.Values{"key": {readKey}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	c := setCookie(p, "prompts_session")
	is.True(c.Secure)
	is.True(c.HttpOnly)
	is.Equal(c.SameSite, http.SameSiteStrictMode)

	// WithSecureCookies marks it Secure over plain HTTP too (TLS ended
	// by a proxy).
	e = newEnv(t, ui.WithSecureCookies())
	b = e.browser()
	b.get(e.prefix)
	p = b.post(e.prefix+"signin", url.Values{"key": {readKey}})
	is.True(setCookie(p, "prompts_session").Secure)
}

func TestSessionEndsAfterIdleTimeout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	b.signIn(readKey)

	// Used every 7 hours, it lives on (8 hours idle is the limit)…
	for range 3 {
		e.clock.Advance(7 * time.Hour)
		p := b.get(e.prefix)
		is.True(hasButton(p, "Sign out")) // still signed in
	}
	// …but after 8 hours without a request it is over.
	e.clock.Advance(8 * time.Hour)
	p := b.get(e.prefix)
	is.True(hasField(p, "API key"))
	is.True(!hasButton(p, "Sign out"))
	// And an inner page sends the browser to sign in, and back after.
	p = b.get(e.prefix + "projects/" + e.alpha.ID)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(p.Header.Get("Location"), e.prefix+"?next="+url.QueryEscape(e.prefix+"projects/"+e.alpha.ID))
	p = b.follow(p)
	next := hidden(p, "next")
	is.Equal(next, e.prefix+"projects/"+e.alpha.ID) // the form remembers where to go
	p = b.post(e.prefix+"signin", url.Values{"key": {readKey}, "next": {next}})
	is.Equal(p.Header.Get("Location"), e.prefix+"projects/"+e.alpha.ID)
}

func TestSessionEndsAtMaxAge(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, ui.WithIdleTimeout(time.Hour), ui.WithMaxAge(3*time.Hour))
	b := e.browser()
	b.signIn(readKey)
	e.clock.Advance(59 * time.Minute)
	is.True(hasButton(b.get(e.prefix), "Sign out"))
	e.clock.Advance(59 * time.Minute)
	is.True(hasButton(b.get(e.prefix), "Sign out"))
	e.clock.Advance(59 * time.Minute)
	is.True(hasButton(b.get(e.prefix), "Sign out")) // 2h57m old, busy
	e.clock.Advance(5 * time.Minute)
	is.True(hasField(b.get(e.prefix), "API key")) // 3h02m: over, however busy
}

func TestSignInRefusals(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, ui.WithSignInLimit(3, time.Minute))
	b := e.browser()
	b.get(e.prefix)

	// A wrong key: 401, the form again, the key not shown back.
	const wrong = "wrong-key-<b>0123456789"
	p := b.post(e.prefix+"signin", url.Values{"key": {wrong}})
	is.Equal(p.StatusCode, http.StatusUnauthorized)
	is.True(strings.Contains(text(p), "That API key is not known"))
	is.True(!strings.Contains(p.body, "wrong-key"))
	is.True(hasField(p, "API key"))
	is.True(setCookie(p, "prompts_session") == nil)

	// No token (the form not from this site): 403, no session.
	b2 := e.browser()
	p = b2.post(e.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {"forged"}})
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(setCookie(p, "prompts_session") == nil)

	// A token that is not the cookie's: 403.
	b2.get(e.prefix)
	p = b2.post(e.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {"forged"}})
	is.Equal(p.StatusCode, http.StatusForbidden)

	// Failed sign-ins are limited per address and key prefix: 3 a
	// minute here.
	is.Equal(b.post(e.prefix+"signin", url.Values{"key": {wrong}}).StatusCode, http.StatusUnauthorized)
	is.Equal(b.post(e.prefix+"signin", url.Values{"key": {wrong}}).StatusCode, http.StatusUnauthorized)
	p = b.post(e.prefix+"signin", url.Values{"key": {wrong[:8] + "-another-guess"}}) // a key of that prefix waits
	is.Equal(p.StatusCode, http.StatusTooManyRequests)
	is.True(p.Header.Get("Retry-After") != "")
	e.clock.Advance(time.Minute)
	p = b.post(e.prefix+"signin", url.Values{"key": {wrong}})
	is.Equal(p.StatusCode, http.StatusUnauthorized) // the window is over

	// next never leads to another site.
	b3 := e.browser()
	b3.get(e.prefix)
	p = b3.post(e.prefix+"signin", url.Values{"key": {readKey}, "next": {"//evil.example/" + e.prefix}})
	is.Equal(p.Header.Get("Location"), e.prefix)
	for _, next := range []string{"https://evil.example" + e.prefix, e.prefix + "../elsewhere", e.prefix + "x/..", e.prefix + "\\evil"} {
		b4 := e.browser()
		b4.get(e.prefix)
		p = b4.post(e.prefix+"signin", url.Values{"key": {readKey}, "next": {next}})
		is.Equal(p.Header.Get("Location"), e.prefix) // only paths under the prefix
	}
}

func TestSignOutNeedsTheToken(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	b.signIn(readKey)
	p := b.post(e.prefix+"signout", url.Values{"csrf": {"forged"}})
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(hasButton(b.get(e.prefix), "Sign out")) // still signed in
}

func TestNewRefusesBadArguments(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, err := ui.New(nil, e.keys)
	is.True(err != nil)
	_, err = ui.New(e.store, nil)
	is.True(err != nil)
	for _, p := range []string{"", "ui", "/ui", "ui/", "//", "/a//b/", "/{x}/", "/a b/", "/../"} {
		_, err = ui.New(e.store, e.keys, ui.WithPrefix(p))
		is.True(err != nil) // a bad prefix
	}
	_, err = ui.New(e.store, e.keys, ui.WithIdleTimeout(0))
	is.True(err != nil)
	_, err = ui.New(e.store, e.keys, ui.WithSignInLimit(0, time.Minute))
	is.True(err != nil)
	h, err := ui.New(e.store, e.keys, ui.WithPrefix("/"))
	is.NoErr(err)
	is.Equal(h.Prefix(), "/")
}

func TestMemorySessionsForgetExpired(t *testing.T) {
	is := is.New(t)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := ui.NewMemorySessions(c.Now)
	ctx := context.Background()
	s := ui.Session{SealedKey: []byte("sealed"), CSRF: "token"}
	is.NoErr(m.Save(ctx, "old", s, c.Now().Add(time.Hour)))
	got, ok, err := m.Load(ctx, "old")
	is.NoErr(err)
	is.True(ok)
	got.SealedKey[0] = 'X'
	again, _, _ := m.Load(ctx, "old")
	is.Equal(string(again.SealedKey), "sealed") // a copy was handed out
	c.Advance(2 * time.Hour)
	_, ok, _ = m.Load(ctx, "old")
	is.True(!ok) // expired
	for i := range 200 {
		is.NoErr(m.Save(ctx, "s"+string(rune('a'+i%26))+time.Duration(i).String(), s, c.Now().Add(time.Minute)))
	}
	c.Advance(time.Hour)
	for i := range 400 {
		is.NoErr(m.Save(ctx, "new"+time.Duration(i).String(), s, c.Now().Add(time.Minute)))
	}
	is.True(m.Len() <= 400) // the 200 expired were forgotten as new ones came
	is.NoErr(m.Delete(ctx, "unknown"))
}

// The sign-in form's token is its cookie's nonce signed with the
// handler's secret: a cookie planted in the browser (by a site that can
// set cookies for this host) with a token of the planter's choosing is
// refused, as is a genuine pair once an hour has passed; replicas that
// share a secret (WithSecret) take each other's forms, others do not.
func TestSignInTokenIsSignedByTheServer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	plant := func(b *browser, value string) {
		u, _ := url.Parse(e.srv.URL + e.prefix)
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "prompts_signin", Value: value, Path: e.prefix}})
	}
	signIn := func(b *browser, token string) page {
		return b.post(e.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {token}})
	}

	// The double submit of old: any value, given as cookie and field.
	b := e.browser()
	plant(b, "zzz")
	p := signIn(b, "zzz")
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(setCookie(p, "prompts_session") == nil) // nobody signed in
	is.True(strings.Contains(text(p), "stale or came from another site"))

	// A cookie shaped as the server makes them, with a token made up.
	b = e.browser()
	b.get(e.prefix)
	genuine := signinCookie(b)
	nonce, exp, ok := strings.Cut(genuine, ".")
	is.True(ok)
	for _, token := range []string{nonce, genuine, b.csrf + "x", ""} {
		plant(b, genuine)
		is.Equal(signIn(b, token).StatusCode, http.StatusForbidden)
	}
	// The genuine token of a cookie whose expiry was moved on.
	plant(b, nonce+"."+exp+"0")
	is.Equal(signIn(b, b.csrf).StatusCode, http.StatusForbidden)

	// A genuine pair, an hour old: refused, the form offered again.
	b = e.browser()
	b.get(e.prefix)
	e.clock.Advance(time.Hour)
	p = signIn(b, b.csrf)
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(hasField(p, "API key"))
	p = signIn(b, b.csrf) // the new form's token
	is.Equal(p.StatusCode, http.StatusSeeOther)

	// Another handler (another replica) has its own secret by default.
	other := newEnv(t)
	b = e.browser()
	b.get(e.prefix)
	moved := other.browser()
	u, _ := url.Parse(other.srv.URL + other.prefix)
	moved.c.Jar.SetCookies(u, []*http.Cookie{{Name: "prompts_signin", Value: signinCookie(b), Path: other.prefix}})
	p = moved.post(other.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {b.csrf}})
	is.Equal(p.StatusCode, http.StatusForbidden)

	// Replicas given one secret take each other's forms.
	shared := []byte(strings.Repeat("s", ui.MinSecretLen))
	one, two := newEnv(t, ui.WithSecret(shared)), newEnv(t, ui.WithSecret(shared))
	b = one.browser()
	b.get(one.prefix)
	moved = two.browser()
	u, _ = url.Parse(two.srv.URL + two.prefix)
	moved.c.Jar.SetCookies(u, []*http.Cookie{{Name: "prompts_signin", Value: signinCookie(b), Path: two.prefix}})
	p = moved.post(two.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {b.csrf}})
	is.Equal(p.StatusCode, http.StatusSeeOther)

	_, err := ui.New(e.store, e.keys, ui.WithSecret(shared[:ui.MinSecretLen-1]))
	is.True(err != nil) // too short a secret
}

// signinCookie returns the value of the sign-in cookie the browser holds.
func signinCookie(b *browser) string {
	u, _ := url.Parse(b.e.srv.URL + b.e.prefix)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "prompts_signin" {
			return c.Value
		}
	}
	b.e.t.Fatal("no sign-in cookie")
	return ""
}
