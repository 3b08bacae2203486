package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/oidctest"
)

func TestOIDCFlagsAreChecked(t *testing.T) {
	is := is.New(t)
	env := func(vars ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == name {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	ok := []string{"-oidc-issuer", "https://idp.example.com", "-oidc-client-id", "prompts", "-oidc-role", "groups=admins:admin"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-oidc-client-id", "prompts"}, "-oidc-client-id needs -oidc-issuer"},
		{[]string{"-oidc-role", "groups=admins:admin"}, "-oidc-role needs -oidc-issuer"},
		{[]string{"-ui-key-sign-in=false"}, "-ui-key-sign-in=false needs -oidc-issuer"},
		{[]string{"-oidc-allow-unverified-email"}, "-oidc-allow-unverified-email needs -oidc-issuer"},
		{[]string{"-oidc-issuer", "idp.example.com", "-oidc-client-id", "p", "-oidc-role", "groups=a:read"}, `-oidc-issuer "idp.example.com" must be an https URL`},
		{[]string{"-oidc-issuer", "http://idp.example.com", "-oidc-client-id", "p", "-oidc-role", "groups=a:read"}, `-oidc-issuer "http://idp.example.com" must be an https URL, such as https://accounts.google.com (http only on localhost or a loopback address)`},
		{[]string{"-oidc-issuer", "https://idp.example.com", "-oidc-role", "groups=a:read"}, "-oidc-issuer needs -oidc-client-id"},
		{[]string{"-oidc-issuer", "https://idp.example.com", "-oidc-client-id", "p"}, "-oidc-issuer needs at least one -oidc-role"},
		{append(ok, "-oidc-role", "groups=admins:boss"), `-oidc-role argument 2: the rule "groups=admins:boss": "boss" is not a role`},
		{append(ok, "-oidc-role", "groups"), "-oidc-role argument 2"},
		{append(ok, "-oidc-redirect-url", "https://prompts.example.com/elsewhere"), "-oidc-redirect-url"},
		{append(ok, "-ui=false"), "which -ui=false turns off"},
	} {
		_, err := parseConfig(c.args, env(), io.Discard)
		is.True(err != nil) // c.args
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.args, err, c.want)
		}
	}
	cfg, err := parseConfig(append(ok, "-oidc-redirect-url", "https://prompts.example.com/ui/oidc/callback"), env("PROMPTS_OIDC_CLIENT_SECRET", "from-the-env"), io.Discard)
	is.NoErr(err)
	is.Equal(cfg.oidc.clientSecret, "from-the-env")
	is.Equal(len(cfg.oidc.rules), 1)
	is.Equal(cfg.oidc.scopeList(), []string(nil))
	cfg, err = parseConfig(append(ok, "-oidc-scopes", "groups, offline_access"), env(), io.Discard)
	is.NoErr(err)
	is.Equal(cfg.oidc.scopeList(), []string{"groups", "offline_access"})
	cfg, err = parseConfig(append(ok, "-oidc-client-secret", "from-the-flag"), env("PROMPTS_OIDC_CLIENT_SECRET", "from-the-env"), io.Discard)
	is.NoErr(err)
	is.Equal(cfg.oidc.clientSecret, "from-the-flag")                                                             // a flag wins over its variable
	is.True(!cfg.oidc.allowUnverifiedEmail)                                                                      // email_verified must be true by default
	for _, issuer := range []string{"http://localhost:5556/dex", "http://127.0.0.1:8080", "http://[::1]:8080"} { // a provider run for development
		_, err = parseConfig([]string{"-oidc-issuer", issuer, "-oidc-client-id", "p", "-oidc-role", "groups=a:read"}, env(), io.Discard)
		is.NoErr(err)
	}
	cfg, err = parseConfig(ok, env("PROMPTS_OIDC_ALLOW_UNVERIFIED_EMAIL", "true"), io.Discard)
	is.NoErr(err)
	is.True(cfg.oidc.allowUnverifiedEmail)
}

// People sign in to the server's web interface with a provider the test
// starts; the rules give them roles and projects (by slug), the secret
// comes from the environment, and with -ui-key-sign-in=false a key no
// longer signs in.
func TestServerSignsPeopleInWithOIDC(t *testing.T) {
	is := is.New(t)
	p := oidctest.Start(t)
	s := start(t, []string{"PROMPTS_OIDC_CLIENT_SECRET=" + oidctest.ClientSecret},
		"-project", "Alpha", "-project", "Beta",
		"-oidc-issuer", p.Issuer, "-oidc-client-id", oidctest.ClientID, "-oidc-name", "Test IdP",
		"-oidc-role", "groups=prompt-admins:admin",
		"-oidc-role", "email_domain=example.com:write:alpha",
		"-ui-key-sign-in=false")
	// The address is printed after the ready line: wait for it, not for ready.
	s.waitLog(t, regexp.MustCompile(regexp.QuoteMeta("/ui/ (sign in with the identity provider)\n")))
	is.True(!strings.Contains(s.out.String(), oidctest.ClientSecret)) // never logged

	signIn := func(person string) *webClient {
		w := newWebClient(t, s)
		_, body := w.do("GET", "/ui/", nil)
		is.True(strings.Contains(body, `href="/ui/oidc/start">Sign in with Test IdP</a>`))
		is.True(!strings.Contains(body, "API key"))
		cb, err := oidctest.Login(w.c, w.root+"/ui/oidc/start", person)
		is.NoErr(err)
		is.Equal(cb.Host, strings.TrimPrefix(w.root, "http://")) // derived from the request
		resp, _ := w.do("GET", cb.RequestURI(), nil)
		is.Equal(resp.StatusCode, http.StatusOK)
		return w
	}

	// Dave: write, in Alpha only.
	w := signIn(oidctest.Dave)
	_, body := w.do("GET", "/ui/", nil)
	is.True(strings.Contains(body, "dave@example.com"))
	is.True(strings.Contains(body, ">Alpha</a>"))
	is.True(!strings.Contains(body, ">Beta</a>"))
	alpha := regexp.MustCompile(`<a href="/ui/projects/([0-9A-Z]{26})">Alpha</a>`).FindStringSubmatch(body)
	is.True(alpha != nil)
	resp, _ := w.do("POST", "/ui/projects/"+alpha[1]+"/prompts", url.Values{"key": {"support/greeting"}, "name": {"Greeting"}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	promptPath := resp.Header.Get("Location")

	// Alice: admin, everywhere; her promotion is recorded as hers.
	w = signIn(oidctest.Alice)
	_, body = w.do("GET", "/ui/", nil)
	is.True(strings.Contains(body, ">Alpha</a>") && strings.Contains(body, ">Beta</a>"))
	resp, _ = w.do("POST", promptPath+"/versions", url.Values{"content": {"Hello {{name}}\r\n"}, "staging": {"1"}, "change_summary": {"first"}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	id := strings.TrimPrefix(promptPath, "/ui/prompts/")
	var history []struct {
		Actor *string `json:"actor"`
	}
	s.call(t, "GET", "/prompts/"+id+"/deployments", "", &history)
	is.Equal(len(history), 1)
	is.Equal(*history[0].Actor, oidctest.Alice)

	// Bob: no rule, no session.
	w = newWebClient(t, s)
	cb, err := oidctest.Login(w.c, w.root+"/ui/oidc/start", oidctest.Bob)
	is.NoErr(err)
	resp, body = w.do("GET", cb.RequestURI(), nil)
	is.Equal(resp.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(body, "no rule of this server gives that account access"))

	// Erin: her provider gives no email_verified, so she is refused.
	w = newWebClient(t, s)
	cb, err = oidctest.Login(w.c, w.root+"/ui/oidc/start", oidctest.Erin)
	is.NoErr(err)
	resp, body = w.do("GET", cb.RequestURI(), nil)
	is.Equal(resp.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(body, "erin@example.com is verified"))

	// A key no longer signs in.
	w.do("GET", "/ui/", nil)
	resp, _ = w.do("POST", "/ui/signin", url.Values{"key": {s.key}})
	is.Equal(resp.StatusCode, http.StatusForbidden)
	is.NoErr(s.stop(t))
}

func TestServerOIDCUnknownSlugStopsTheStart(t *testing.T) {
	is := is.New(t)
	s := launch(t, nil, "-oidc-issuer", "https://idp.example.com", "-oidc-client-id", "p", "-oidc-role", "groups=a:read:no-such-project")
	err := <-s.done
	is.True(err != nil)
	is.True(strings.Contains(s.out.String(), `-oidc-role argument 1: no project has the slug \"no-such-project\"`))
}
