package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/ui"
)

// liveKeys is an Authenticator whose answers a test changes while
// sessions are open, as an application's own key store changes: keys
// removed, roles lowered, projects taken away, the store down.
type liveKeys struct {
	mu    sync.Mutex
	keys  map[string]httpapi.Access
	down  bool
	calls int
}

func newLiveKeys() *liveKeys { return &liveKeys{keys: map[string]httpapi.Access{}} }

func (k *liveKeys) Authenticate(_ context.Context, key string) (httpapi.Access, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	if k.down {
		return httpapi.Access{}, prompts.Unavailable(errors.New("the key store does not answer"))
	}
	a, ok := k.keys[key]
	if !ok {
		return httpapi.Access{}, httpapi.ErrUnknownKey
	}
	a.ProjectIDs = slices.Clone(a.ProjectIDs)
	return a, nil
}

func (k *liveKeys) set(key string, a httpapi.Access) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys[key] = a
}

func (k *liveKeys) remove(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.keys, key)
}

func (k *liveKeys) setDown(down bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.down = down
}

func (k *liveKeys) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls
}

// recordingSessions is a SessionStore that keeps every session saved, as
// a shared store holds it, for a test to read.
type recordingSessions struct {
	*ui.MemorySessions
	mu    sync.Mutex
	saved []savedSession
}

type savedSession struct {
	id string
	s  ui.Session
}

func (r *recordingSessions) Save(ctx context.Context, id string, s ui.Session, expires time.Time) error {
	r.mu.Lock()
	r.saved = append(r.saved, savedSession{id, s})
	r.mu.Unlock()
	return r.MemorySessions.Save(ctx, id, s, expires)
}

// all returns every session saved so far, in order.
func (r *recordingSessions) all() []savedSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.saved)
}

const liveKey = "live-key-0123456789-abcdef"

// liveFixture is a fixture whose keys answer from a liveKeys, with
// liveKey a deploy key for every project, and its sessions in a
// recordingSessions.
func liveFixture(t *testing.T) (*fixture, *liveKeys, *recordingSessions) {
	t.Helper()
	lk := newLiveKeys()
	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleDeploy, AllProjects: true})
	var e *env
	rec := &recordingSessions{MemorySessions: ui.NewMemorySessions(func() time.Time { return e.clock.Now() })}
	e = newEnvAuth(t, httptest.NewServer, lk, ui.WithSessionStore(rec))
	return newFixtureOn(t, e), lk, rec
}

// promoteForm returns the promote form for version 2 to production, as
// the page shows it to b, filled in.
func promoteForm(t *testing.T, f *fixture, b *browser) url.Values {
	t.Helper()
	p := b.get(f.url("/promote?version=2&environment=production"))
	if p.StatusCode != 200 {
		t.Fatalf("promote form: %d", p.StatusCode)
	}
	form := formOf(p)
	form.Set("version", "2")
	form.Set("environment", "production")
	form.Set("allow_variable_change", "1")
	form.Set("reason", "ship it")
	return form
}

// A key removed from the Authenticator ends its open sessions at their
// next request: a forged POST is 401 and changes nothing, a page sends
// the browser to sign in, and the session is gone from the store, so
// adding the key back does not revive it.
func TestRemovedKeyEndsItsOpenSession(t *testing.T) {
	is := is.New(t)
	f, lk, rec := liveFixture(t)
	rev, before := f.revision(), len(f.history())

	poster, reader := f.browser(), f.browser()
	poster.signIn(liveKey)
	reader.signIn(liveKey)
	form := promoteForm(t, f, poster)
	is.Equal(rec.Len(), 2)

	lk.remove(liveKey)
	p := poster.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusUnauthorized) // signed out, with the session's own token
	is.True(strings.Contains(text(p), "The session has ended"))
	is.True(!hasButton(p, "Sign out"))
	is.Equal(f.revision(), rev) // nothing changed
	is.Equal(len(f.history()), before)
	is.Equal(f.active(prompts.Production), 1)

	p = reader.get(f.url(""))
	is.Equal(p.StatusCode, http.StatusSeeOther) // to sign in, and back after
	is.Equal(p.Header.Get("Location"), f.prefix+"?next="+url.QueryEscape(f.url("")))
	is.True(hasField(reader.follow(p), "API key"))
	is.Equal(rec.Len(), 0) // both sessions were deleted

	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleDeploy, AllProjects: true})
	is.True(hasField(poster.get(f.prefix), "API key")) // an ended session stays ended
	is.Equal(poster.post(f.url("/promote"), form).StatusCode, http.StatusUnauthorized)
	is.Equal(f.active(prompts.Production), 1)
}

// A key whose role is lowered from deploy to read is offered no Promote
// at its next page, and its POST is 403; raised again, it is offered
// Promote again: each request asks the Authenticator.
func TestLoweredRoleBoundsTheNextRequest(t *testing.T) {
	is := is.New(t)
	f, lk, _ := liveFixture(t)
	rev := f.revision()
	b := f.browser()
	b.signIn(liveKey)
	is.True(hasLink(b.get(f.url("")), "Promote"))
	form := promoteForm(t, f, b)

	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleRead, AllProjects: true})
	p := b.get(f.url(""))
	is.Equal(p.StatusCode, 200)
	is.True(!hasLink(p, "Promote"))
	is.True(!hasLink(p, "New version"))
	is.True(hasButton(p, "Sign out")) // still signed in, as a reader
	is.Equal(b.get(f.url("/promote")).StatusCode, http.StatusForbidden)
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "the key signed in has the read role"))
	is.Equal(f.revision(), rev) // nothing changed
	is.Equal(f.active(prompts.Production), 1)

	// The key's name is the Authenticator's current answer too.
	lk.set(liveKey, httpapi.Access{Name: "renamed", Role: httpapi.RoleDeploy, AllProjects: true})
	p = b.get(f.url(""))
	is.True(hasLink(p, "Promote"))
	is.True(strings.Contains(text(p), "Signed in as renamed"))
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 2)
	is.Equal(*f.history()[0].Actor, "renamed")

	// A key left with no role may do nothing: its session ends, as at
	// sign-in such a key is refused.
	lk.set(liveKey, httpapi.Access{Name: "temp", AllProjects: true})
	is.True(hasField(b.get(f.prefix), "API key"))
	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleDeploy, AllProjects: true})
	is.True(hasField(b.get(f.prefix), "API key")) // ended, not paused
}

// A key whose projects shrink gets 404 for the project taken away, its
// pages and its actions, at the next request, and no longer sees it
// listed.
func TestShrunkProjectsAreNotFound(t *testing.T) {
	is := is.New(t)
	f, lk, _ := liveFixture(t)
	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleDeploy, ProjectIDs: []string{f.alpha.ID, f.beta.ID}})
	b := f.browser()
	p := b.signIn(liveKey)
	is.True(hasLink(p, "Alpha"))
	is.True(hasLink(p, "Beta"))
	is.Equal(b.get(f.url("")).StatusCode, 200)
	form := promoteForm(t, f, b)

	lk.set(liveKey, httpapi.Access{Name: "temp", Role: httpapi.RoleDeploy, ProjectIDs: []string{f.beta.ID}})
	p = b.get(f.prefix)
	is.True(!hasLink(p, "Alpha")) // not listed
	is.True(hasLink(p, "Beta"))
	is.Equal(b.get(f.prefix+"projects/"+f.alpha.ID).StatusCode, http.StatusNotFound)
	is.Equal(b.get(f.url("")).StatusCode, http.StatusNotFound) // its prompt
	is.Equal(b.get(f.url("/promote")).StatusCode, http.StatusNotFound)
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusNotFound)
	is.Equal(f.active(prompts.Production), 1) // nothing changed
	is.Equal(b.get(f.prefix+"projects/"+f.beta.ID).StatusCode, 200)
}

// While the Authenticator does not answer, pages are 503 and POSTs
// change nothing, but the session lives on, and one can sign out.
func TestUnavailableAuthenticator(t *testing.T) {
	is := is.New(t)
	f, lk, rec := liveFixture(t)
	b := f.browser()
	b.signIn(liveKey)
	form := promoteForm(t, f, b)

	lk.setDown(true)
	p := b.get(f.url(""))
	is.Equal(p.StatusCode, http.StatusServiceUnavailable)
	is.True(p.Header.Get("Retry-After") != "")
	is.True(strings.Contains(text(p), "The API key could not be checked just now"))
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusServiceUnavailable)
	is.Equal(f.active(prompts.Production), 1) // nothing changed
	is.Equal(rec.Len(), 1)                    // the session is not ended

	lk.setDown(false)
	p = b.get(f.url(""))
	is.Equal(p.StatusCode, 200)
	is.True(hasButton(p, "Sign out"))

	lk.setDown(true)
	p = b.post(f.prefix+"signout", nil)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(rec.Len(), 0)
}

// Each request of a session asks the Authenticator once, as each API
// request does: no more.
func TestOneAuthenticationPerRequest(t *testing.T) {
	is := is.New(t)
	f, lk, _ := liveFixture(t)
	b := f.browser()
	b.signIn(liveKey)
	form := promoteForm(t, f, b)
	n := lk.count()
	b.get(f.url(""))
	is.Equal(lk.count(), n+1)
	b.post(f.url("/promote"), form)
	is.Equal(lk.count(), n+2)
	b.get(f.prefix + "nowhere") // a 404 page, its header signed in
	is.Equal(lk.count(), n+3)
}

// What a SessionStore holds does not hold the key: neither its bytes
// nor the cookie that would open it.
func TestSessionStoreHoldsNoKey(t *testing.T) {
	is := is.New(t)
	f, _, rec := liveFixture(t)
	b := f.browser()
	b.signIn(liveKey)
	cookie := b.sessionCookie().Value
	b.post(f.url("/promote"), promoteForm(t, f, b)) // a flash message is saved too
	f.clock.Advance(2 * time.Minute)
	b.get(f.prefix) // and LastSeen

	saved := rec.all()
	is.True(len(saved) >= 3)
	for _, e := range saved {
		stored, err := json.Marshal(e.s) // as a shared store might keep it
		is.NoErr(err)
		stored = append(stored, e.id+" "+e.s.CSRF+" "+e.s.Flash+" "...)
		stored = append(stored, e.s.SealedKey...)         // the raw bytes, as a store of bytes keeps them
		is.True(!bytes.Contains(stored, []byte(liveKey))) // not the key
		is.True(!bytes.Contains(stored, []byte(liveKey[:12])))
		is.True(!bytes.Contains(stored, []byte(cookie))) // nor the cookie
		is.True(e.id != cookie)
		is.True(len(e.s.SealedKey) >= len(liveKey)+28) // sealed: nonce, key, tag
	}
}

// A session's entry copied under another cookie's id (another secret)
// does not open: that browser is signed out, its entry deleted, and a
// POST from it changes nothing. An altered entry does not open either.
func TestCopiedSessionEntryDoesNotOpen(t *testing.T) {
	is := is.New(t)
	f, lk, rec := liveFixture(t)
	lk.set("reader-key-0123456789", httpapi.Access{Name: "reader", Role: httpapi.RoleRead, AllProjects: true})
	ctx := context.Background()

	deployer := f.browser()
	deployer.signIn(liveKey)
	form := promoteForm(t, f, deployer)
	dep := rec.all()[len(rec.all())-1]
	reader := f.browser()
	reader.signIn("reader-key-0123456789")
	rd := rec.all()[len(rec.all())-1]
	is.True(dep.id != rd.id)

	// The deployer's entry, CSRF token and all, under the reader's id.
	is.NoErr(rec.Save(ctx, rd.id, dep.s, f.clock.Now().Add(time.Hour)))
	p := reader.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusUnauthorized)
	is.Equal(f.active(prompts.Production), 1) // nothing changed
	_, ok, err := rec.Load(ctx, rd.id)
	is.NoErr(err)
	is.True(!ok) // the entry that did not open is gone
	is.True(hasField(reader.get(f.prefix), "API key"))

	// An altered sealed key does not open under its own cookie either.
	altered := dep.s
	altered.SealedKey = slices.Clone(dep.s.SealedKey)
	altered.SealedKey[len(altered.SealedKey)-1] ^= 1
	is.NoErr(rec.Save(ctx, dep.id, altered, f.clock.Now().Add(time.Hour)))
	is.True(hasField(deployer.get(f.prefix), "API key"))

	// The entry as it was opens with its own cookie, and only with it.
	is.NoErr(rec.Save(ctx, dep.id, dep.s, f.clock.Now().Add(time.Hour)))
	is.True(hasButton(deployer.get(f.prefix), "Sign out"))
}
