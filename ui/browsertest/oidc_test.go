package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/oidctest"
	"github.com/promptkit/prompts/internal/poll"
)

// TestSignInWithIdentityProvider signs in through an OpenID Connect
// provider that the test starts (its own login page, in Chromium), with
// page scripts on and off, and lands on the projects page as the
// person's email, with the role of the rule that matched; a change made
// there records the email as its actor.
func TestSignInWithIdentityProvider(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		p := oidctest.Start(t)
		s := startServer(t, []string{"Acme"},
			"-oidc-issuer", p.Issuer, "-oidc-client-id", oidctest.ClientID, "-oidc-client-secret", oidctest.ClientSecret,
			"-oidc-name", "Test IdP", "-oidc-role", "groups=prompt-admins:deploy")
		a := s.project(t, "Acme")
		g := s.seed(t, a.ID, "support/greeting", "Greeting", greetingV1, greetingV2)

		b := newTab(t, s, scripts)
		is.Equal(b.open("/ui/"), int64(200))
		b.one("field", "API key") // still on, beside the provider
		link := b.one("link", "Sign in with Test IdP")
		b.screenshot("sign-in-oidc")

		// The provider's pages are not the interface's: they are driven,
		// not checked.
		ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
		defer cancel()
		resp, err := chromedp.RunResponse(ctx, b.click(link))
		is.NoErr(err)
		is.True(strings.HasPrefix(resp.URL, p.Issuer+"login/username")) // the provider's login page
		b.fill("Username:", oidctest.Alice)
		b.fill("Password:", oidctest.Password)
		resp, err = chromedp.RunResponse(ctx, b.click(b.one("button", "Login")))
		is.NoErr(err)
		// Back at the interface, which moves on from its "Signed in" page
		// by itself (the session cookie is SameSite=Strict, not sent
		// within the navigation that came from the provider).
		is.Equal(resp.URL, s.origin+"/ui/oidc/callback"+resp.URL[len(s.origin+"/ui/oidc/callback"):])
		is.Equal(resp.Status, int64(200))
		var at struct {
			Path    string
			SignOut bool
		}
		landed := poll.Until(30*time.Second, func() bool {
			// The "Signed in" page moves on by itself: an evaluation
			// may meet it navigating, and is tried again.
			err := b.tryEval(`({Path: location.pathname, SignOut: !!document.querySelector('form[action="/ui/signout"]')})`, &at)
			return err == nil && at.Path == "/ui/" && at.SignOut
		})
		if !landed {
			t.Fatalf("not signed in on the projects page: at %s:\n%s", at.Path, b.text())
		}
		b.mu.Lock()
		b.checked = len(b.requests) // the provider's requests
		b.mu.Unlock()

		b.signedIn = true
		is.Equal(b.open("/ui/"), int64(200))
		is.True(strings.Contains(b.text(), "Acme"))
		var who string
		b.eval(`document.querySelector(".who").innerText`, &who)
		is.True(strings.Contains(who, "Signed in as alice@example.com (deploy)"))

		// The session cookie is as a key's: HttpOnly, SameSite=Strict,
		// under /ui/; the flow's cookie is gone.
		cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.origin + "/ui/"}})
		is.NoErr(err)
		var session *network.Cookie
		for _, c := range cookies.Cookies {
			is.True(c.Name != "prompts_oidc") // the flow is over
			if c.Name == "prompts_session" {
				session = c
			}
		}
		is.True(session != nil)
		is.True(session.HTTPOnly && session.SameSite == network.CookieSameSiteStrict && session.Path == "/ui/")

		// A promotion: the email is its actor.
		b.follow("Acme")
		b.follow("support/greeting")
		b.follow("Promote")
		b.choose("Version", "2")
		b.choose("Environment", "staging")
		b.fill("Reason", "signed in with the provider")
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.active(t, g.ID, "staging"), 2)
		d := s.deployments(t, g.ID)[0]
		is.Equal(*d.Actor, oidctest.Alice)
	})
}
