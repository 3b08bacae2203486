package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/ui"
)

// signedIn reports whether the browser's session is live.
func (b *browser) signedIn() bool {
	b.e.t.Helper()
	return hasButton(b.get(b.e.prefix), "Sign out")
}

// A sign-in form works once: posted again (a replay of its cookie and
// token), it is refused and makes no session, whether its first post
// signed in or failed; each answer carries a new form, which works.
func TestASignInFormWorksOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	b.get(e.prefix)
	u, _ := url.Parse(e.srv.URL + e.prefix)
	form := b.c.Jar.Cookies(u)
	token := b.csrf
	p := b.post(e.prefix+"signin", url.Values{"key": {readKey}})
	is.Equal(p.StatusCode, http.StatusSeeOther) // signed in

	replay := e.browser()
	replay.c.Jar.SetCookies(u, form)
	p = replay.post(e.prefix+"signin", url.Values{"key": {adminKey}, "csrf": {token}})
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "used already"))
	is.True(setCookie(p, "prompts_session") == nil) // no session
	is.True(!replay.signedIn())

	// After a failure too: the form of the answer is the one to use.
	b2 := e.browser()
	b2.get(e.prefix)
	form, token = b2.c.Jar.Cookies(u), b2.csrf
	is.Equal(b2.post(e.prefix+"signin", url.Values{"key": {"not-a-key-0123456789"}}).StatusCode, http.StatusUnauthorized)
	replay = e.browser()
	replay.c.Jar.SetCookies(u, form)
	is.Equal(replay.post(e.prefix+"signin", url.Values{"key": {readKey}, "csrf": {token}}).StatusCode, http.StatusForbidden)
	is.Equal(b2.post(e.prefix+"signin", url.Values{"key": {readKey}}).StatusCode, http.StatusSeeOther) // the new form works
}

// One key holds at most 10 sessions by default: its eleventh sign-in
// ends the one used least recently; other keys' sessions stay.
func TestAKeyHoldsTenSessions(t *testing.T) {
	is := is.New(t)
	is.Equal(ui.DefaultSessionsPerKey, 10)
	is.Equal(ui.DefaultMaxSessions, 10_000)
	e := newEnv(t)
	other := e.browser()
	other.signIn(adminKey)
	var bs []*browser
	for range 10 {
		b := e.browser()
		b.signIn(readKey)
		bs = append(bs, b)
	}
	e.clock.Advance(time.Second)
	is.True(bs[0].signedIn()) // used now: the least recently used is bs[1]
	b := e.browser()
	b.signIn(readKey)
	is.True(!bs[1].signedIn()) // ended
	is.True(bs[0].signedIn())
	for _, b := range bs[2:] {
		is.True(b.signedIn())
	}
	is.True(b.signedIn())
	is.True(other.signedIn()) // another key's session stays
}

// The handler holds at most so many sessions in all (WithSessionLimits):
// past it, the least recently used of all ends. However many sign-ins
// with however few keys, the store holds no more than the limits.
func TestSessionsAreBoundedInAll(t *testing.T) {
	is := is.New(t)
	var e *env
	mem := ui.NewMemorySessions(func() time.Time { return e.clock.Now() })
	e = newEnv(t, ui.WithSessionLimits(2, 3), ui.WithSessionStore(mem))
	a, d, w := e.browser(), e.browser(), e.browser()
	a.signIn(adminKey)
	d.signIn(deployKey)
	w.signIn(writeKey)
	is.True(a.signedIn()) // used: d is the least recently used now
	r := e.browser()
	r.signIn(readKey)
	is.True(!d.signedIn()) // ended
	is.True(a.signedIn())
	is.True(w.signedIn())
	is.True(r.signedIn())

	is.True(a.signedIn()) // the most recently used
	for range 50 {
		e.browser().signIn(readKey)
		is.True(mem.Len() <= 3)
	}
	is.True(a.signedIn())  // kept: readKey's own sessions ended
	is.True(!w.signedIn()) // the least recently used of all ended
	for range 50 {
		for _, k := range []string{adminKey, deployKey, writeKey, readKey, limitedKey} {
			e.browser().signIn(k)
		}
	}
	is.True(mem.Len() <= 3)

	// Bad limits are refused.
	for _, l := range [][2]int{{0, 10}, {1, 0}, {11, 10}} {
		_, err := ui.New(e.store, e.keys, ui.WithSessionLimits(l[0], l[1]))
		is.True(err != nil)
	}
}

// A session that another handler (a replica sharing the store and the
// secret) made counts as well, once used here.
func TestSessionsOfAnotherReplicaCount(t *testing.T) {
	is := is.New(t)
	shared := make([]byte, ui.MinSecretLen)
	var one *env
	mem := ui.NewMemorySessions(func() time.Time { return one.clock.Now() })
	one = newEnv(t, ui.WithSecret(shared), ui.WithSessionStore(mem), ui.WithSessionLimits(1, 10))
	two := newEnv(t, ui.WithSecret(shared), ui.WithSessionStore(mem), ui.WithSessionLimits(1, 10))
	b := one.browser()
	b.signIn(readKey)
	// The same cookie, sent to the other replica.
	u1, _ := url.Parse(one.srv.URL + one.prefix)
	u2, _ := url.Parse(two.srv.URL + two.prefix)
	b2 := two.browser()
	b2.c.Jar.SetCookies(u2, b.c.Jar.Cookies(u1))
	is.True(b2.signedIn()) // served there, and counted
	two.browser().signIn(readKey)
	is.True(!b2.signedIn()) // the key's one session there ended it
}

// The sign-in limit counts failures per address and key prefix: someone
// guessing keys behind the same proxy does not lock out the others.
func TestSignInLimitIsPerAddressAndKeyPrefix(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, ui.WithSignInLimit(3, time.Minute))
	attacker := e.browser()
	attacker.get(e.prefix)
	for i := range 5 {
		p := attacker.post(e.prefix+"signin", url.Values{"key": {"guess-00-" + strings.Repeat("x", i+10)}})
		if i < 3 {
			is.Equal(p.StatusCode, http.StatusUnauthorized)
		} else {
			is.Equal(p.StatusCode, http.StatusTooManyRequests) // that prefix waits
		}
	}
	// Same address (every test client is 127.0.0.1), other keys: served.
	for _, k := range []string{readKey, adminKey} {
		b := e.browser()
		b.get(e.prefix)
		is.Equal(b.post(e.prefix+"signin", url.Values{"key": {k}}).StatusCode, http.StatusSeeOther)
	}
	// Even the attacker's browser, with a key of another prefix.
	is.Equal(attacker.post(e.prefix+"signin", url.Values{"key": {writeKey}}).StatusCode, http.StatusSeeOther)
}

// The review's attack, scaled down: sign-ins without end with one key
// (each with a fresh form) leave the default store holding 10 sessions.
func TestSignInsWithoutEndHoldTenSessions(t *testing.T) {
	is := is.New(t)
	var e *env
	mem := ui.NewMemorySessions(func() time.Time { return e.clock.Now() })
	e = newEnv(t, ui.WithSessionStore(mem))
	for range 300 {
		b := e.browser() // a new browser each time: no session ends as it signs in again
		b.get(e.prefix)
		is.Equal(b.post(e.prefix+"signin", url.Values{"key": {readKey}}).StatusCode, http.StatusSeeOther)
	}
	is.Equal(mem.Len(), 10)
}
