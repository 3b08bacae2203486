package ui_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/ui"
)

// The keys every test env has, by role; "limited" is a deploy key for
// the project "Alpha" only.
const (
	adminKey   = "admin-key-0123456789"
	deployKey  = "deploy-key-0123456789"
	writeKey   = "write-key-0123456789"
	readKey    = "read-key-0123456789"
	limitedKey = "limited-key-0123456789"
)

// clock is a clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a handler over a fresh memstore with two projects, Alpha and
// Beta, served by a real HTTP server.
type env struct {
	t      *testing.T
	store  *memstore.Store
	keys   *httpapi.Keys
	h      *ui.Handler
	srv    *httptest.Server
	clock  *clock
	prefix string
	alpha  prompts.Project
	beta   prompts.Project
}

func newEnv(t *testing.T, opts ...ui.Option) *env {
	return newEnvWith(t, httptest.NewServer, opts...)
}

func newEnvWith(t *testing.T, serve func(http.Handler) *httptest.Server, opts ...ui.Option) *env {
	t.Helper()
	return newEnvAuth(t, serve, nil, opts...)
}

// newEnvAuth is newEnvWith signing in with auth, or with e.keys when auth
// is nil.
func newEnvAuth(t *testing.T, serve func(http.Handler) *httptest.Server, auth httpapi.Authenticator, opts ...ui.Option) *env {
	t.Helper()
	is := is.New(t)
	e := &env{t: t, store: memstore.New(), keys: httpapi.NewKeys(), clock: &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}}
	ctx := context.Background()
	var err error
	e.alpha, err = e.store.CreateProject(ctx, prompts.NewProject{Name: "Alpha"})
	is.NoErr(err)
	e.beta, err = e.store.CreateProject(ctx, prompts.NewProject{Name: "Beta"})
	is.NoErr(err)
	for _, k := range []httpapi.Key{
		{Name: "root", Role: httpapi.RoleAdmin, Secret: adminKey},
		{Name: "deployer", Role: httpapi.RoleDeploy, Secret: deployKey},
		{Name: "writer", Role: httpapi.RoleWrite, Secret: writeKey},
		{Name: "reader", Role: httpapi.RoleRead, Secret: readKey},
		{Name: "alpha-only", Role: httpapi.RoleDeploy, Secret: limitedKey, ProjectIDs: []string{e.alpha.ID}},
	} {
		is.NoErr(e.keys.Add(k))
	}
	opts = append([]ui.Option{ui.WithClock(e.clock.Now)}, opts...)
	if auth == nil {
		auth = e.keys
	}
	e.h, err = ui.New(e.store, auth, opts...)
	is.NoErr(err)
	e.prefix = e.h.Prefix()
	mux := http.NewServeMux()
	mux.Handle(e.prefix, e.h)
	e.srv = serve(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// browser is one browser: a cookie jar, redirects not followed.
type browser struct {
	e    *env
	c    *http.Client
	csrf string // the token of the last page that had one
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	c := new(http.Client)
	*c = *e.srv.Client() // a copy: each browser has its own jar
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{e: e, c: c}
}

// page is an answer, its body read.
type page struct {
	*http.Response
	body string
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.e.t.Fatal(err)
	}
	p := page{Response: res, body: string(body)}
	if m := csrfRe.FindStringSubmatch(p.body); m != nil {
		b.csrf = m[1]
	}
	return p
}

// get fetches path (under the server's root).
func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, err := http.NewRequest("GET", b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.do(req)
}

// post sends form to path, with the CSRF token of the last page unless
// form has one.
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	}
	req, err := http.NewRequest("POST", b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// follow fetches where p redirects to.
func (b *browser) follow(p page) page {
	b.e.t.Helper()
	loc := p.Header.Get("Location")
	if p.StatusCode != http.StatusSeeOther || loc == "" {
		b.e.t.Fatalf("want a 303 with a Location, got %d %q\n%s", p.StatusCode, loc, p.body)
	}
	u, err := url.Parse(loc)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.get(u.RequestURI())
}

// signIn signs in with key and returns the projects page.
func (b *browser) signIn(key string) page {
	b.e.t.Helper()
	b.get(b.e.prefix)
	p := b.post(b.e.prefix+"signin", url.Values{"key": {key}})
	if p.StatusCode != http.StatusSeeOther {
		b.e.t.Fatalf("sign-in: %d\n%s", p.StatusCode, p.body)
	}
	return b.follow(p)
}

// sessionCookie returns the session cookie the browser holds.
func (b *browser) sessionCookie() *http.Cookie {
	u, _ := url.Parse(b.e.srv.URL + b.e.prefix)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "prompts_session" {
			return c
		}
	}
	return nil
}

// setCookie answers the Set-Cookie of p for name.
func setCookie(p page, name string) *http.Cookie {
	for _, c := range p.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// text returns the page's text: tags dropped, entities decoded, white
// space collapsed: roughly what a person reads.
func text(p page) string {
	s := tagRe.ReplaceAllString(p.body, " ")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

var tagRe = regexp.MustCompile(`(?s)<[^>]*>`)

// hasLink reports whether the page has a link whose text is name.
func hasLink(p page, name string) bool {
	re := regexp.MustCompile(`<a [^>]*href="[^"]*"[^>]*>\s*` + regexp.QuoteMeta(html.EscapeString(name)) + `\s*</a>`)
	return re.MatchString(p.body)
}

// linkTo returns the href of the link whose text is name, or "".
func linkTo(p page, name string) string {
	re := regexp.MustCompile(`<a [^>]*href="([^"]*)"[^>]*>\s*` + regexp.QuoteMeta(html.EscapeString(name)) + `\s*</a>`)
	m := re.FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// hasButton reports whether the page has a button whose text is name.
func hasButton(p page, name string) bool {
	re := regexp.MustCompile(`<button [^>]*>\s*` + regexp.QuoteMeta(name) + `\s*</button>`)
	return re.MatchString(p.body)
}

// hasField reports whether the page has a label with text name bound (by
// for=) to a field with that id.
func hasField(p page, name string) bool {
	re := regexp.MustCompile(`<label for="([^"]+)">\s*` + regexp.QuoteMeta(html.EscapeString(name)) + `\s*</label>`)
	m := re.FindStringSubmatch(p.body)
	if m == nil {
		return false
	}
	return regexp.MustCompile(`<(input|textarea|select) [^>]*id="` + regexp.QuoteMeta(m[1]) + `"`).MatchString(p.body)
}
