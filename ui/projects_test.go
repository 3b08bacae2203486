package ui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/ui"
)

func TestProjectsOutsideTheKeysAccess(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	p := b.signIn(limitedKey)
	is.True(hasLink(p, "Alpha"))
	is.True(!hasLink(p, "Beta")) // not listed
	is.True(!strings.Contains(p.body, e.beta.ID))

	p = b.get(e.prefix + "projects/" + e.beta.ID)
	is.Equal(p.StatusCode, http.StatusNotFound)
	unknown := b.get(e.prefix + "projects/01JZZZZZZZZZZZZZZZZZZZZZZZ")
	is.Equal(unknown.StatusCode, http.StatusNotFound)
	is.Equal(text(p), text(unknown)) // the same page: a hidden project is not told apart

	p = b.get(e.prefix + "projects/" + e.alpha.ID)
	is.Equal(p.StatusCode, 200)
}

func TestProjectPromptsGroupedAndSearched(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	for _, k := range []string{"support/greeting", "support/farewell", "billing/refund/apology", "welcome"} {
		_, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: k, Name: "Name of " + k})
		is.NoErr(err)
	}
	b := e.browser()
	b.signIn(readKey)
	p := b.get(e.prefix + "projects/" + e.alpha.ID)
	is.Equal(p.StatusCode, 200)
	is.True(hasField(p, "Search by key"))
	for _, k := range []string{"support/greeting", "support/farewell", "billing/refund/apology", "welcome"} {
		is.True(hasLink(p, k)) // a link per prompt, named by its key
	}
	// Grouped by folder: a heading per folder, in order.
	heads := regexp.MustCompile(`<h2 id="folder-\d+">([^<]*)</h2>`).FindAllStringSubmatch(p.body, -1)
	var names []string
	for _, h := range heads {
		names = append(names, h[1])
	}
	is.Equal(names, []string{"Top level", "billing/refund/", "support/"})

	p = b.get(e.prefix + "projects/" + e.alpha.ID + "?q=SUPPORT")
	is.True(hasLink(p, "support/greeting"))
	is.True(hasLink(p, "support/farewell"))
	is.True(!hasLink(p, "welcome"))
	is.True(strings.Contains(text(p), "2 of 4 prompts"))
	is.True(strings.Contains(p.body, `value="SUPPORT"`)) // the search stays in its field
}

// The count above a project's prompts agrees with its number: "1 prompt",
// "1 of 2 prompts has", never "1 prompts" or "1 of 1 prompts have".
func TestProjectCountsAgree(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()
	b.signIn(readKey)
	status := func(query string) string {
		t.Helper()
		p := b.get(e.prefix + "projects/" + e.alpha.ID + query)
		is.Equal(p.StatusCode, 200)
		m := regexp.MustCompile(`(?s)<p class="muted" role="status">(.*?)</p>`).FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no count on the page:\n%s", p.body)
		}
		return html.UnescapeString(m[1])
	}
	is.Equal(status(""), "0 prompts.")
	_, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "welcome", Name: "Welcome"})
	is.NoErr(err)
	is.Equal(status(""), "1 prompt.")
	is.Equal(status("?q=wel"), "1 of 1 prompt has “wel” in its key.")
	is.Equal(status("?q=zzz"), "No prompt has “zzz” in its key.")
	_, err = e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "welcome/back", Name: "Welcome back"})
	is.NoErr(err)
	is.Equal(status(""), "2 prompts.")
	is.Equal(status("?q=back"), "1 of 2 prompts has “back” in its key.")
	is.Equal(status("?q=wel"), "2 of 2 prompts have “wel” in their key.")
}

func TestStoredMarkupIsEscaped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	proj, err := e.store.CreateProject(ctx, prompts.NewProject{Name: "Evil " + evil, Slug: "evil", Description: evil})
	is.NoErr(err)
	_, err = e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: evil})
	is.NoErr(err)
	b := e.browser()
	for _, path := range []string{e.prefix, e.prefix + "projects/" + proj.ID, e.prefix + "projects/" + proj.ID + "?q=" + "%3Cscript%3E"} {
		if path == e.prefix {
			b.signIn(adminKey)
		}
		p := b.get(path)
		is.Equal(p.StatusCode, 200)
		is.True(!strings.Contains(p.body, "<script>alert"))                                  // escaped
		is.True(!strings.Contains(p.body, "<img src=x"))                                     //
		is.True(strings.Contains(p.body, "&lt;script&gt;") || strings.Contains(path, "?q=")) // shown as text
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	check := func(p page, page bool) {
		t.Helper()
		is.Equal(p.Header.Get("Content-Security-Policy"), "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		is.Equal(p.Header.Get("X-Content-Type-Options"), "nosniff")
		is.Equal(p.Header.Get("Referrer-Policy"), "same-origin")
		is.Equal(p.Header.Get("X-Frame-Options"), "DENY")
		if page {
			is.Equal(p.Header.Get("Cache-Control"), "no-store")
			is.Equal(p.Header.Get("Content-Type"), "text/html; charset=utf-8")
		}
	}
	p := b.get(e.prefix)
	check(p, true)
	css := regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`).FindStringSubmatch(p.body)[1]
	js := regexp.MustCompile(`<script src="([^"]+)" defer></script>`).FindStringSubmatch(p.body)[1]
	check(b.get(e.prefix+"no/such/page"), true)
	is.Equal(b.get(e.prefix+"no/such/page").StatusCode, 404)
	check(b.post(e.prefix+"signin", nil), true)  // 403
	check(b.get(e.prefix+"static/ui.css"), true) // 404: only hashed names
	check(b.get(css), false)
	check(b.get(js), false)
	b.signIn(readKey)
	check(b.get(e.prefix+"projects/"+e.beta.ID), true)
	check(b.get(e.prefix+"projects/nope"), true)
	is.True(!strings.Contains(p.body, "style=")) // nothing inline that the policy would block
	is.True(!regexp.MustCompile(`<script>`).MatchString(p.body))
}

func TestStaticAssets(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	p := b.get(e.prefix)
	css := regexp.MustCompile(`href="(` + regexp.QuoteMeta(e.prefix) + `static/ui\.[0-9a-f]{12}\.css)"`).FindStringSubmatch(p.body)
	is.True(css != nil) // a content-hashed name under the prefix
	p = b.get(css[1])
	is.Equal(p.StatusCode, 200)
	is.Equal(p.Header.Get("Content-Type"), "text/css; charset=utf-8")
	is.Equal(p.Header.Get("Cache-Control"), "public, max-age=31536000, immutable")
	etag := p.Header.Get("ETag")
	is.True(etag != "")
	req, _ := http.NewRequest("GET", e.srv.URL+css[1], nil)
	req.Header.Set("If-None-Match", etag)
	p = b.do(req)
	is.Equal(p.StatusCode, http.StatusNotModified)
	is.Equal(b.get(e.prefix+"static/ui.000000000000.css").StatusCode, 404)

	// If-None-Match as RFC 9110 reads it: "*" matches any asset that
	// exists, a list matches when one of its tags does (weakly), and a
	// tag that merely holds the ETag does not.
	for inm, status := range map[string]int{
		"*":                           http.StatusNotModified,
		`"x", ` + etag:                http.StatusNotModified,
		"W/" + etag:                   http.StatusNotModified,
		`"x"`:                         http.StatusOK,
		`"x"` + etag:                  http.StatusOK, // holds the ETag, is not it
		strings.TrimSuffix(etag, `"`): http.StatusOK,
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+css[1], nil)
		req.Header.Set("If-None-Match", inm)
		if p := b.do(req); p.StatusCode != status {
			t.Errorf("If-None-Match: %s: %d, want %d", inm, p.StatusCode, status)
		}
	}
	req, _ = http.NewRequest("GET", e.srv.URL+e.prefix+"static/ui.000000000000.css", nil)
	req.Header.Set("If-None-Match", "*")
	is.Equal(b.do(req).StatusCode, 404) // "*" matches only what exists
}

func TestTwoMountPoints(t *testing.T) {
	for _, prefix := range []string{"/ui/", "/admin/prompts/"} {
		t.Run(prefix, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t, ui.WithPrefix(prefix))
			b := e.browser()
			p := b.get(prefix)
			is.True(regexp.MustCompile(`action="` + regexp.QuoteMeta(prefix) + `signin"`).MatchString(p.body))
			p = b.post(prefix+"signin", nil)              // the token read from the page
			is.Equal(p.StatusCode, http.StatusBadRequest) // no key given: the form again
			p = b.post(prefix+"signin", url.Values{"key": {adminKey}})
			is.Equal(setCookie(p, "prompts_session").Path, prefix) // the cookie is scoped to the mount point
			is.Equal(p.Header.Get("Location"), prefix)
			p = b.follow(p)
			link := linkTo(p, "Alpha")
			is.Equal(link, prefix+"projects/"+e.alpha.ID) // links stay under the prefix
			p = b.get(link)
			is.Equal(p.StatusCode, 200)
			for _, href := range regexp.MustCompile(`(?:href|action|src)="([^"]*)"`).FindAllStringSubmatch(p.body, -1) {
				is.True(strings.HasPrefix(href[1], prefix) || href[1] == "#main") // every link and form under the prefix
			}
		})
	}
}

func TestActionURLsFetchedLeadWhereTheyAct(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.browser()
	b.signIn(readKey)
	for from, to := range map[string]string{
		"signin":                              "",
		"signout":                             "",
		"projects/" + e.alpha.ID + "/prompts": "projects/" + e.alpha.ID,
		"prompts/01JZZZZZZZZZZZZZZZZZZZZZZZ/versions": "prompts/01JZZZZZZZZZZZZZZZZZZZZZZZ",
	} {
		p := b.get(e.prefix + from)
		is.Equal(p.StatusCode, http.StatusSeeOther) // a reload or a bookmark of an action's URL
		is.Equal(p.Header.Get("Location"), e.prefix+to)
	}
	is.True(hasButton(b.get(e.prefix), "Sign out")) // a GET of signout signs nobody out
}

// A page or action asked with a method it does not take is 405 with the
// Allow header, as over the HTTP interface, with the security headers and
// a page that says which methods it takes; a path that is no page is 404
// whatever the method.
func TestWrongMethodIsNotAllowed(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn(adminKey)
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"DELETE", f.prefix, "GET, HEAD"},
		{"POST", f.prefix, "GET, HEAD"},
		{"OPTIONS", f.prefix, "GET, HEAD"},
		{"PUT", f.prefix + "signin", "GET, HEAD, POST"},
		{"PATCH", f.url("/promote"), "GET, HEAD, POST"},
		{"DELETE", f.url(""), "GET, HEAD"},
		{"OPTIONS", f.url("/versions/1/render"), "GET, HEAD, POST"},
		{"PUT", f.url("/versions"), "GET, HEAD, POST"},
		{"POST", f.prefix + "projects/" + f.alpha.ID, "GET, HEAD"},
		{"POST", f.prefix + "static/ui.css", "GET, HEAD"},
		{"DELETE", f.prefix + "no/such/page", ""},
		{"POST", f.prefix + "no/such/page", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			before := f.revision()
			req, err := http.NewRequest(tc.method, f.srv.URL+tc.path, strings.NewReader("csrf="+b.csrf))
			is.NoErr(err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			p := b.do(req)
			is.Equal(p.Header.Get("Content-Security-Policy") != "", true) // the security headers stay
			is.Equal(p.Header.Get("X-Content-Type-Options"), "nosniff")
			is.Equal(f.revision(), before) // nothing changed
			if tc.allow == "" {
				is.Equal(p.StatusCode, http.StatusNotFound)
				is.Equal(p.Header.Get("Allow"), "")
				return
			}
			is.Equal(p.StatusCode, http.StatusMethodNotAllowed)
			is.Equal(p.Header.Get("Allow"), tc.allow)
			is.True(strings.Contains(text(p), "This address answers "+tc.allow+" only, not "+tc.method)) // says which
		})
	}
}
