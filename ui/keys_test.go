package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
)

var shownSecret = regexp.MustCompile(`<code class="secret">(pk_[A-Za-z0-9_-]{43})</code>`)

// The keys page: an admin lists the keys, creates one whose secret the
// answer shows once, and revokes it, which ends the sessions signed in
// with it; other roles may not see the page.
func TestKeysPage(t *testing.T) {
	is := is.New(t)
	lazy := &lazyKeys{}
	e := newEnvAuth(t, httptest.NewServer, lazy)
	lazy.sk = httpapi.NewStoreKeys(e.keys, e.store)

	admin := e.browser()
	admin.signIn(adminKey)
	p := admin.get(e.prefix + "keys")
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(p.body, "alpha-only")) // the configured keys, read-only
	is.True(strings.Contains(p.body, "read-only"))

	p = admin.post(e.prefix+"keys", url.Values{"name": {"bot"}, "role": {"read"}, "project." + e.alpha.ID: {"on"}, "expires_days": {"30"}})
	is.Equal(p.StatusCode, 200)
	m := shownSecret.FindStringSubmatch(p.body)
	is.True(m != nil) // the secret, shown once
	secret := m[1]
	is.Equal(p.Header.Get("Cache-Control"), "no-store")
	p = admin.get(e.prefix + "keys")
	is.True(!strings.Contains(p.body, secret)) // never again
	is.True(strings.Contains(p.body, "bot"))

	bot := e.browser()
	bot.signIn(secret)
	is.Equal(bot.get(e.prefix+"projects/"+e.alpha.ID).StatusCode, 200)
	is.Equal(bot.get(e.prefix+"projects/"+e.beta.ID).StatusCode, 404) // its project only

	// Refusals keep the form and say why.
	p = admin.post(e.prefix+"keys", url.Values{"name": {"bot"}, "role": {"read"}})
	is.Equal(p.StatusCode, 409)
	p = admin.post(e.prefix+"keys", url.Values{"name": {"root"}, "role": {"read"}})
	is.Equal(p.StatusCode, 409) // a configured name
	p = admin.post(e.prefix+"keys", url.Values{"name": {"bad name"}, "role": {"read"}})
	is.Equal(p.StatusCode, 400)

	id := regexp.MustCompile(`action="` + regexp.QuoteMeta(e.prefix) + `keys/([0-9A-Z]{26})/revoke"`).FindStringSubmatch(admin.get(e.prefix + "keys").body)
	is.True(id != nil)
	p = admin.post(e.prefix+"keys/"+id[1]+"/revoke", nil)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.True(strings.Contains(admin.follow(p).body, "Key bot revoked"))
	is.Equal(bot.get(e.prefix+"projects/"+e.alpha.ID).StatusCode, http.StatusSeeOther) // signed out: to the sign-in page

	for _, key := range []string{deployKey, limitedKey} {
		b := e.browser()
		b.signIn(key)
		is.Equal(b.get(e.prefix+"keys").StatusCode, 403)
	}
}

// lazyKeys is a StoreKeys made after the env, over its keys and store.
type lazyKeys struct{ sk *httpapi.StoreKeys }

func (l *lazyKeys) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	return l.sk.Authenticate(ctx, key)
}
func (l *lazyKeys) ConfiguredKeys() []httpapi.Access { return l.sk.ConfiguredKeys() }
func (l *lazyKeys) Forget(id string)                 { l.sk.Forget(id) }
