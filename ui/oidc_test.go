package ui_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/oidctest"
	"github.com/promptkit/prompts/ui"
)

// oidcRules are the tests' rules: the first that matches decides.
var oidcRules = []ui.RoleRule{
	{Claim: "groups", Value: "prompt-admins", Role: httpapi.RoleAdmin},
	{Claim: "email_domain", Value: "example.com", Role: httpapi.RoleWrite},
}

// newOIDCEnv is an env whose handler signs people in with a provider
// started for the test, with client (oidctest.ClientID unless given).
func newOIDCEnv(t *testing.T, cfg ui.OIDCConfig, opts ...ui.Option) (*env, *oidctest.Provider) {
	t.Helper()
	p := oidctest.Start(t)
	cfg.Issuer = p.Issuer
	if cfg.ClientID == "" {
		cfg.ClientID = oidctest.ClientID
	}
	cfg.ClientSecret = oidctest.ClientSecret
	if cfg.Rules == nil {
		cfg.Rules = oidcRules
	}
	if cfg.Name == "" {
		cfg.Name = "Test IdP"
	}
	return newEnv(t, append([]ui.Option{ui.WithOIDC(cfg)}, opts...)...), p
}

// login signs in at the provider as person, from the sign-in page's
// link, and returns the address the provider sends the browser back to.
func (b *browser) login(person string) *url.URL {
	b.e.t.Helper()
	p := b.get(b.e.prefix)
	start := linkTo(p, "Sign in with Test IdP")
	if start == "" {
		b.e.t.Fatalf("no link to sign in with the provider:\n%s", p.body)
	}
	cb, err := oidctest.Login(b.c, b.e.srv.URL+start, person)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return cb
}

// callback fetches the provider's redirect back.
func (b *browser) callback(cb *url.URL) page {
	b.e.t.Helper()
	return b.get(cb.RequestURI())
}

// isRefused checks that p, a page b got, refuses the sign-in (403)
// saying want, and that b has no session.
func isRefused(t *testing.T, b *browser, p page, want string) {
	t.Helper()
	if p.StatusCode != http.StatusForbidden || !strings.Contains(text(p), want) || b.sessionCookie() != nil {
		t.Fatalf("%d, session %v, want 403 saying %q and no session:\n%s", p.StatusCode, b.sessionCookie(), want, text(p))
	}
}

// authorizeURL starts a sign-in in b and returns the page that starts it
// and where that sends the browser: the provider's authorization URL.
func (b *browser) authorizeURL(t *testing.T) (page, *url.URL) {
	t.Helper()
	p := b.get(b.e.prefix + "oidc/start")
	to, err := url.Parse(p.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return p, to
}

func TestOIDCSignInMakesTheEmailTheActor(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	f := newFixtureOn(t, e)
	b := e.browser()

	p := b.callback(b.login(oidctest.Alice))
	is.Equal(p.StatusCode, http.StatusOK)
	// The session cookie is SameSite=Strict: the page moves on from this
	// site rather than redirecting from the provider's navigation.
	is.True(strings.Contains(p.body, `<meta http-equiv="refresh" content="0; url=/ui/">`))
	ck := setCookie(p, "prompts_session")
	is.True(ck != nil)
	is.Equal(ck.SameSite, http.SameSiteStrictMode)
	is.True(ck.HttpOnly)
	gone := setCookie(p, "prompts_oidc")
	is.True(gone != nil && gone.MaxAge < 0) // the flow is over

	p = b.get(e.prefix)
	is.True(strings.Contains(text(p), "Signed in as alice@example.com (admin)"))
	is.True(hasLink(p, "Alpha") && hasLink(p, "Beta")) // every project

	p = b.get(f.url("/promote"))
	form := formOf(p)
	form.Set("version", "2")
	form.Set("environment", "staging")
	form.Set("reason", "from the identity provider")
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(*f.history()[0].Actor, oidctest.Alice)

	// Signing out ends it, as for a key.
	p = b.post(e.prefix+"signout", nil)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.True(strings.Contains(text(b.get(e.prefix)), "Sign in with Test IdP"))
}

func TestOIDCFirstMatchingRuleDecides(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	// Dave is of prompt-writers and example.com: the email_domain rule
	// (the second of oidcRules) gives write.
	b.callback(b.login(oidctest.Dave))
	p := b.get(e.prefix)
	is.True(strings.Contains(text(p), "Signed in as dave@example.com (write)"))
	is.True(hasLink(p, "Alpha") && hasLink(p, "Beta"))

	// Rules in another order: the first that matches decides, here read
	// in one project (not one of this env's).
	e2, _ := newOIDCEnv(t, ui.OIDCConfig{Rules: []ui.RoleRule{
		{Claim: "email_domain", Value: "example.com", Role: httpapi.RoleRead, ProjectIDs: []string{"01J00000000000000000000000"}},
		{Claim: "groups", Value: "prompt-writers", Role: httpapi.RoleAdmin},
	}})
	b = e2.browser()
	b.callback(b.login(oidctest.Dave))
	p = b.get(e2.prefix)
	is.True(strings.Contains(text(p), "Signed in as dave@example.com (read)"))
	is.True(!hasLink(p, "Alpha") && !hasLink(p, "Beta"))
}

func TestOIDCClaimsFromTheUserinfoEndpoint(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{ClientID: oidctest.UserinfoClientID})
	b := e.browser()
	p := b.callback(b.login(oidctest.Alice))
	is.Equal(p.StatusCode, http.StatusOK)
	is.True(strings.Contains(text(b.get(e.prefix)), "Signed in as alice@example.com (admin)"))
}

func TestOIDCNoMatchingRuleIsRefused(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	p := b.callback(b.login(oidctest.Bob))
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "No access"))
	is.True(strings.Contains(text(p), "as bob@elsewhere.test, but no rule of this server gives that account access"))
	is.True(setCookie(p, "prompts_session") == nil)
	is.True(b.sessionCookie() == nil)
	is.True(strings.Contains(text(b.get(e.prefix)), "Sign in with Test IdP"))
}

func TestOIDCUnverifiedEmailIsRefused(t *testing.T) {
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	isRefused(t, b, b.callback(b.login(oidctest.Carol)), "carol@example.com is not verified") // of prompt-admins, but not verified
}

func TestOIDCEmailWithoutVerifiedClaimIsRefused(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	p := b.callback(b.login(oidctest.Erin)) // of prompt-admins; no email_verified claim
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "does not say that the email address erin@example.com is verified"))
	is.True(b.sessionCookie() == nil)
}

func TestOIDCTrustUnverifiedEmail(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{TrustUnverifiedEmail: true})
	b := e.browser()
	// Opted in, an email without email_verified is taken...
	p := b.callback(b.login(oidctest.Erin))
	is.Equal(p.StatusCode, http.StatusOK)
	is.True(strings.Contains(text(b.get(e.prefix)), "Signed in as erin@example.com (admin)"))

	// ...but email_verified: false is still refused.
	b = e.browser()
	p = b.callback(b.login(oidctest.Carol))
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "carol@example.com is not verified"))
	is.True(b.sessionCookie() == nil)
}

func TestOIDCBadStateIsRefused(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	cb := b.login(oidctest.Alice)
	q := cb.Query()
	q.Set("state", q.Get("state")+"x")
	cb.RawQuery = q.Encode()
	isRefused(t, b, b.callback(cb), "its state differs")

	// Nor from a browser that did not start it (a login forged by
	// another site): no flow cookie.
	b = e.browser()
	cb = e.browser().login(oidctest.Alice)
	p := b.callback(cb)
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(b.sessionCookie() == nil)
}

func TestOIDCReplayedCodeIsRefused(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	cb := b.login(oidctest.Alice)
	u, _ := url.Parse(e.srv.URL + e.prefix)
	var flow *http.Cookie
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "prompts_oidc" {
			flow = c
		}
	}
	is.True(flow != nil)
	is.Equal(b.callback(cb).StatusCode, http.StatusOK)

	// Someone who caught both the redirect back and the flow cookie.
	thief := e.browser()
	thief.c.Jar.SetCookies(u, []*http.Cookie{{Name: flow.Name, Value: flow.Value, Path: e.prefix}})
	isRefused(t, thief, thief.callback(cb), "This sign-in was used already")
}

func TestOIDCWrongNonceIsRefused(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	p, to := b.authorizeURL(t)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	q := to.Query()
	is.True(q.Get("nonce") != "")
	is.Equal(q.Get("code_challenge_method"), "S256")
	q.Set("nonce", "a-nonce-of-someone-else") // an ID token minted for another flow
	to.RawQuery = q.Encode()
	cb, err := oidctest.Login(b.c, to.String(), oidctest.Alice)
	is.NoErr(err)
	isRefused(t, b, b.callback(cb), "its nonce differs")
}

func TestOIDCCodeNeedsTheVerifier(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	_, to := b.authorizeURL(t)
	q := to.Query()
	// A code asked for with another challenge (one a thief knows the
	// verifier of) is not given for this flow's verifier.
	q.Set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
	to.RawQuery = q.Encode()
	cb, err := oidctest.Login(b.c, to.String(), oidctest.Alice)
	is.NoErr(err)
	isRefused(t, b, b.callback(cb), "refused to confirm this sign-in")
}

func TestOIDCExpiredFlowIsRefused(t *testing.T) {
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	cb := b.login(oidctest.Alice)
	e.clock.Advance(10 * time.Minute)
	isRefused(t, b, b.callback(cb), "took longer than 10 minutes")
}

func TestOIDCFlowCookie(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{}, ui.WithSecureCookies())
	p := e.browser().get(e.prefix + "oidc/start?next=" + url.QueryEscape(e.prefix+"projects/"+e.alpha.ID))
	is.Equal(p.StatusCode, http.StatusSeeOther)
	ck := setCookie(p, "prompts_oidc")
	is.True(ck != nil)
	is.Equal(ck.SameSite, http.SameSiteLaxMode) // sent on the provider's redirect back
	is.True(ck.HttpOnly)
	is.True(ck.Secure)
	is.Equal(ck.Path, e.prefix)
	is.Equal(ck.MaxAge, 600)
	is.True(!strings.Contains(ck.Value, "projects")) // sealed, not only signed
	to, _ := url.Parse(p.Header.Get("Location"))
	is.Equal(to.Query().Get("redirect_uri"), "https://"+strings.TrimPrefix(e.srv.URL, "http://")+e.prefix+"oidc/callback")
	is.Equal(to.Query().Get("scope"), "openid email profile")
}

func TestOIDCNextPageAfterSignIn(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{})
	b := e.browser()
	want := e.prefix + "projects/" + e.alpha.ID
	p := b.get(want)
	p = b.follow(p) // to the sign-in page, with next
	start := linkTo(p, "Sign in with Test IdP")
	is.Equal(start, e.prefix+"oidc/start?next="+url.QueryEscape(want))
	cb, err := oidctest.Login(b.c, e.srv.URL+start, oidctest.Alice)
	is.NoErr(err)
	p = b.callback(cb)
	is.True(hasLink(p, "Continue"))
	is.Equal(linkTo(p, "Continue"), want)
}

// failingTransport fails while down is set.
type failingTransport struct{ down atomic.Bool }

func (f *failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.down.Load() {
		return nil, errors.New("the provider is down")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestOIDCProviderDownIsAskedAgain(t *testing.T) {
	is := is.New(t)
	tr := &failingTransport{}
	tr.down.Store(true)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{HTTPClient: &http.Client{Transport: tr}})
	b := e.browser()
	p := b.get(e.prefix + "oidc/start")
	is.Equal(p.StatusCode, http.StatusServiceUnavailable)
	is.True(strings.Contains(text(p), "The identity provider Test IdP could not be reached just now"))
	tr.down.Store(false)
	p = b.callback(b.login(oidctest.Alice))
	is.Equal(p.StatusCode, http.StatusOK)
}

func TestKeySignInTurnedOff(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{}, ui.WithKeySignIn(false))
	b := e.browser()
	p := b.get(e.prefix)
	is.True(!hasField(p, "API key"))
	is.True(hasLink(p, "Sign in with Test IdP"))
	isRefused(t, b, b.post(e.prefix+"signin", url.Values{"key": {adminKey}}), "Signing in with an API key is turned off here. Sign in with Test IdP.")

	// On, by default, beside the provider.
	e2, _ := newOIDCEnv(t, ui.OIDCConfig{})
	p = e2.browser().get(e2.prefix)
	is.True(hasField(p, "API key"))
	is.True(hasLink(p, "Sign in with Test IdP"))
}

func TestWithOIDCRefusesBadConfigs(t *testing.T) {
	is := is.New(t)
	ok := ui.OIDCConfig{Issuer: "https://idp.example.com", ClientID: "c", Rules: oidcRules}
	for _, c := range []struct {
		name string
		edit func(*ui.OIDCConfig)
		want string
	}{
		{"no issuer", func(c *ui.OIDCConfig) { c.Issuer = "" }, "issuer"},
		{"issuer not a URL", func(c *ui.OIDCConfig) { c.Issuer = "idp.example.com" }, "issuer"},
		{"no client", func(c *ui.OIDCConfig) { c.ClientID = "" }, "client id"},
		{"no rules", func(c *ui.OIDCConfig) { c.Rules = nil }, "at least one rule"},
		{"bad role", func(c *ui.OIDCConfig) { c.Rules = []ui.RoleRule{{Claim: "groups", Value: "x"}} }, "role"},
		{"empty value", func(c *ui.OIDCConfig) {
			c.Rules = []ui.RoleRule{{Claim: "groups", Role: httpapi.RoleRead}}
		}, "value"},
		{"bad redirect", func(c *ui.OIDCConfig) { c.RedirectURL = "/ui/oidc/callback" }, "redirect URL"},
	} {
		cfg := ok
		c.edit(&cfg)
		_, err := ui.New(newEnv(t).store, httpapi.NewKeys(), ui.WithOIDC(cfg))
		is.True(err != nil)                            // c.name
		is.True(strings.Contains(err.Error(), c.want)) // c.name
	}
	_, err := ui.New(newEnv(t).store, httpapi.NewKeys(), ui.WithKeySignIn(false))
	is.True(err != nil && strings.Contains(err.Error(), "WithOIDC"))
	_, err = ui.New(newEnv(t).store, httpapi.NewKeys(), ui.WithOIDC(ok)) // no I/O at New
	is.NoErr(err)
}

func TestParseRoleRule(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		in   string
		want ui.RoleRule
	}{
		{"groups=prompt-admins:admin", ui.RoleRule{Claim: "groups", Value: "prompt-admins", Role: httpapi.RoleAdmin}},
		{"email_domain=example.com:write:p1,p2", ui.RoleRule{Claim: "email_domain", Value: "example.com", Role: httpapi.RoleWrite, ProjectIDs: []string{"p1", "p2"}}},
		{"roles=urn:x:deploy:deploy", ui.RoleRule{Claim: "roles", Value: "urn:x:deploy", Role: httpapi.RoleDeploy}},
		{"roles=urn:x:read:p1", ui.RoleRule{Claim: "roles", Value: "urn:x", Role: httpapi.RoleRead, ProjectIDs: []string{"p1"}}},
	} {
		r, err := ui.ParseRoleRule(c.in)
		is.NoErr(err)
		is.Equal(r, c.want)
		is.Equal(r.String(), c.in)
	}
	for _, bad := range []string{"", "groups", "groups=admins", "=admins:admin", "groups=:admin", "groups=admins:boss", "groups=admins:read:a,,b"} {
		_, err := ui.ParseRoleRule(bad)
		is.True(err != nil) // bad
	}
}

func TestOIDCSessionEndsAfterIdleTimeout(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{}, ui.WithIdleTimeout(time.Hour))
	b := e.browser()
	b.callback(b.login(oidctest.Alice))
	is.True(strings.Contains(text(b.get(e.prefix)), "Signed in as alice@example.com"))
	e.clock.Advance(59 * time.Minute)
	is.True(strings.Contains(text(b.get(e.prefix)), "Signed in as alice@example.com"))
	e.clock.Advance(time.Hour)
	p := b.get(e.prefix)
	is.True(!strings.Contains(text(p), "Signed in as"))
	is.True(hasLink(p, "Sign in with Test IdP"))
}

func TestOIDCSessionStoreHoldsThePersonSealed(t *testing.T) {
	is := is.New(t)
	store := &recordingSessions{MemorySessions: ui.NewMemorySessions(nil)}
	e, _ := newOIDCEnv(t, ui.OIDCConfig{}, ui.WithSessionStore(store))
	alice, bob := e.browser(), e.browser()
	alice.callback(alice.login(oidctest.Alice))
	bob.signIn(readKey)
	var aliceID, bobID string
	var entry ui.Session
	for _, saved := range store.all() {
		if len(saved.s.SealedPerson) > 0 {
			aliceID, entry = saved.id, saved.s
			is.True(!strings.Contains(string(saved.s.SealedPerson), "alice")) // sealed, not only encoded
			is.Equal(len(saved.s.SealedKey), 0)
		} else {
			bobID = saved.id
		}
	}
	is.True(aliceID != "" && bobID != "")
	// Alice's entry put under Bob's id does not open with Bob's cookie:
	// his session ends, and he is not Alice.
	is.NoErr(store.Save(context.Background(), bobID, entry, time.Now().Add(time.Hour)))
	p := bob.get(e.prefix)
	is.True(!strings.Contains(text(p), "alice@example.com"))
	is.True(hasField(p, "API key"))
}

func TestOIDCRedirectURLFromForwardedHost(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{TrustForwardedHost: true}, ui.WithSecureCookiesIf(func(r *http.Request) bool {
		return r.Header.Get("X-Forwarded-Proto") == "https"
	}))
	req, err := http.NewRequest("GET", e.srv.URL+e.prefix+"oidc/start", nil)
	is.NoErr(err)
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Add("X-Forwarded-Host", "evil.example")
	req.Header.Add("X-Forwarded-Host", "prompts.example.com") // the proxy's, last
	p := e.browser().do(req)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	to, _ := url.Parse(p.Header.Get("Location"))
	is.Equal(to.Query().Get("redirect_uri"), "https://prompts.example.com/ui/oidc/callback")

	// Not trusted: the request's own Host.
	e2, _ := newOIDCEnv(t, ui.OIDCConfig{})
	req, _ = http.NewRequest("GET", e2.srv.URL+e2.prefix+"oidc/start", nil)
	req.Header.Set("X-Forwarded-Host", "prompts.example.com")
	p = e2.browser().do(req)
	to, _ = url.Parse(p.Header.Get("Location"))
	is.Equal(to.Query().Get("redirect_uri"), e2.srv.URL+"/ui/oidc/callback")

	// Given: as given.
	e3, _ := newOIDCEnv(t, ui.OIDCConfig{RedirectURL: "https://fixed.example.com/ui/oidc/callback"})
	p = e3.browser().get(e3.prefix + "oidc/start")
	to, _ = url.Parse(p.Header.Get("Location"))
	is.Equal(to.Query().Get("redirect_uri"), "https://fixed.example.com/ui/oidc/callback")
}

func TestOIDCSessionsPerPersonAreLimited(t *testing.T) {
	is := is.New(t)
	e, _ := newOIDCEnv(t, ui.OIDCConfig{}, ui.WithSessionLimits(2, 100))
	var bs []*browser
	for range 3 {
		b := e.browser()
		b.callback(b.login(oidctest.Alice))
		bs = append(bs, b)
	}
	dave := e.browser()
	dave.callback(dave.login(oidctest.Dave))
	// Alice's third session ended her first; Dave's are his own.
	is.True(!strings.Contains(text(bs[0].get(e.prefix)), "Signed in as"))
	is.True(strings.Contains(text(bs[1].get(e.prefix)), "Signed in as alice@example.com"))
	is.True(strings.Contains(text(bs[2].get(e.prefix)), "Signed in as alice@example.com"))
	is.True(strings.Contains(text(dave.get(e.prefix)), "Signed in as dave@example.com"))
}
