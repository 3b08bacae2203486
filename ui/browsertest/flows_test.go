package browsertest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// The prompt the flows work on, as seeded: version 1, active in
// production and staging.
const (
	greetingV1 = "Hello {{name}}.\nWe open at nine.\nBye."
	greetingV2 = "Hello {{name}}.\nWe open at ten.\nBye."
	greetingV3 = "Hello {{name}} from {{place}}.\nWe open at ten.\nBye."
)

// acme starts a server with the project Acme holding four prompts in
// two folders and at the top level, and returns it with the prompt
// support/greeting.
func acme(t *testing.T) (*server, prompt) {
	t.Helper()
	s := startServer(t, []string{"Acme"})
	a := s.project(t, "Acme")
	g := s.seed(t, a.ID, "support/greeting", "Greeting", greetingV1)
	s.seed(t, a.ID, "support/farewell", "Farewell", "Goodbye {{name}}.")
	s.seed(t, a.ID, "billing/invoice", "Invoice", "Invoice {{number}}.")
	s.seed(t, a.ID, "motd", "Message of the day", "Welcome.")
	s.activate(t, g.ID, "production", 1)
	s.activate(t, g.ID, "staging", 1)
	return s, g
}

// toGreeting signs in with the key of role and goes from /ui/ to the
// page of support/greeting by its links.
func toGreeting(t *testing.T, s *server, role string, scripts bool) *tab {
	t.Helper()
	b := newTab(t, s, scripts)
	if st := b.open("/ui/"); st != 200 {
		t.Fatalf("/ui/: status %d", st)
	}
	b.signIn(role)
	b.follow("Acme")
	b.follow("support/greeting")
	return b
}

// TestMainFlows walks through what a person with a deploy key does, with
// page scripts on and off: signing in, finding a prompt, writing a
// version, comparing, promoting, rolling back, deactivating, passing the
// promotion guard, rendering and signing out. Each change is checked
// through the HTTP interface.
func TestMainFlows(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s, g := acme(t)
		b := newTab(t, s, scripts)

		// Signed out, /ui/ is the sign-in page.
		is.Equal(b.open("/ui/"), int64(200))
		b.one("field", "API key")
		b.one("button", "Sign in")
		is.True(!b.has("button", "Sign out"))
		b.screenshot("sign-in")
		b.signIn("deploy")

		// The session is a cookie that scripts cannot read, sent by the
		// browser only to the interface, and only from its own pages.
		cookies, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{s.origin + "/ui/"}})
		is.NoErr(err)
		is.True(len(cookies.Cookies) > 0)
		for _, c := range cookies.Cookies {
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/ui/" {
				t.Errorf("cookie %s: HttpOnly %v, SameSite %q, Path %q; want HttpOnly, Strict, /ui/", c.Name, c.HTTPOnly, c.SameSite, c.Path)
			}
		}
		var readable string
		b.eval(`document.cookie`, &readable)
		is.Equal(readable, "") // scripts on the page see no cookie

		// The projects, then a project's prompts grouped by folder.
		is.Equal(b.follow("Acme"), int64(200))
		for folder, keys := range map[string][]string{
			"support/":  {"support/greeting", "support/farewell"},
			"billing/":  {"billing/invoice"},
			"Top level": {"motd"},
		} {
			region := b.one("region", folder)
			for _, k := range keys {
				if len(b.findIn(region, "link", k)) != 1 {
					t.Errorf("the folder %q has no link %q", folder, k)
				}
			}
		}

		// Search by key.
		b.fill("Search by key", "greet")
		is.Equal(b.press("Search"), int64(200))
		is.True(b.has("link", "support/greeting"))
		for _, k := range []string{"support/farewell", "billing/invoice", "motd"} {
			if b.has("link", k) {
				t.Errorf("searching for greet shows %s", k)
			}
		}

		// The prompt's page offers what a deploy key may do.
		is.Equal(b.follow("support/greeting"), int64(200))
		for _, name := range []string{"New version", "Promote", "Roll back", "Deactivate", "Compare"} {
			is.True(b.has("link", name) || b.has("button", name)) // offered to a deploy key
		}

		// A new version, typed with line breaks: the browser sends them as
		// \r\n, the version has \n.
		is.Equal(b.follow("New version"), int64(200))
		b.fill("Content", greetingV2)
		b.fill("Change summary", "open later")
		b.fill("Metadata (JSON)", `{"model": "m-1", "temperature": 0.25}`)
		b.tick("Activate in staging", false)
		is.Equal(b.press("Create"), int64(200))
		is.True(strings.Contains(b.posted("/versions"), "%0D%0A")) // the browser sent CRLF
		vs := s.versions(t, g.ID)
		is.Equal(len(vs), 2)
		is.Equal(vs[0].VersionNumber, 2)
		is.Equal(vs[0].Content, greetingV2) // \n line ends, no \r
		is.True(vs[0].ChangeSummary != nil && *vs[0].ChangeSummary == "open later")
		var meta map[string]any
		is.NoErr(json.Unmarshal(vs[0].Metadata, &meta))
		is.Equal(meta, map[string]any{"model": "m-1", "temperature": 0.25})
		is.Equal(s.active(t, g.ID, "staging"), 1) // not activated: unticked

		// Compare versions 1 and 2 (from the page of the version just
		// created): the changed lines are marked in text that a screen
		// reader reads, not only by colour.
		is.Equal(b.follow("Compare with version 1"), int64(200))
		b.screenshot("compare")
		checkDiffMarks(t, b.spoken(), []string{"Hello {{name}}.", "We open at nine.", "We open at ten.", "Bye."},
			map[string]string{"We open at nine.": "removed", "We open at ten.": "added", "Bye.": ""})

		// Promote version 2 to production, with a reason.
		b.follow("support/greeting")
		is.Equal(b.follow("Promote"), int64(200))
		b.choose("Version", "Version 2")
		b.choose("Environment", "production")
		b.fill("Reason", "open at ten from Monday")
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 2)
		checkRecord(t, s.deployments(t, g.ID)[0], "production", "activate", 2, 1, "dan-deploy", "open at ten from Monday")
		page := b.text() // the prompt's page: its history says who and why
		is.True(strings.Contains(page, "dan-deploy"))
		is.True(strings.Contains(page, "open at ten from Monday"))

		// Roll production back.
		is.Equal(b.follow("Roll back"), int64(200))
		b.choose("Environment", "production")
		b.fill("Reason", "customers asked")
		is.Equal(b.press("Roll back"), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 1)
		checkRecord(t, s.deployments(t, g.ID)[0], "production", "rollback", 1, 2, "dan-deploy", "customers asked")

		// Deactivate staging.
		is.Equal(b.follow("Deactivate"), int64(200))
		b.choose("Environment", "staging")
		b.fill("Reason", "staging is retired")
		is.Equal(b.press("Deactivate"), int64(200))
		is.Equal(s.active(t, g.ID, "staging"), 0)
		checkRecord(t, s.deployments(t, g.ID)[0], "staging", "deactivate", 0, 1, "dan-deploy", "staging is retired")

		// The promotion guard: version 3 adds the variable place.
		s.api(t, "write", "POST", "/prompts/"+g.ID+"/versions", map[string]any{"content": greetingV3, "change_summary": "say where"}, 200, nil)
		is.Equal(b.follow("Promote"), int64(200))
		b.choose("Version", "Version 3")
		b.choose("Environment", "production")
		b.fill("Reason", "tell them where")
		before := s.state(t, g.ID)
		is.Equal(b.press("Promote"), int64(409))
		refusal := b.text()
		is.True(strings.Contains(refusal, "place"))               // names the variable
		is.True(strings.Contains(refusal, "nothing was changed")) // says so
		is.Equal(s.state(t, g.ID), before)                        // and nothing changed
		b.screenshot("promote-refusal")
		// A deploy key may override it.
		b.tick("Allow variable change", true)
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 3)
		checkRecord(t, s.deployments(t, g.ID)[0], "production", "activate", 3, 1, "dan-deploy", "tell them where")

		// Render version 1 with a value for its variable.
		is.Equal(b.follow("Version 1"), int64(200))
		is.Equal(b.follow("Render version 1"), int64(200))
		b.fill("name", "Ada")
		is.Equal(b.press("Render"), int64(200))
		is.True(strings.Contains(b.text(), "Hello Ada.\nWe open at nine.\nBye."))

		// The prompt's page after all that.
		is.Equal(b.follow("support/greeting"), int64(200))
		if scripts {
			is.True(len(b.scriptSz) > 0) // the interface's script was loaded, and measured
		}
		b.screenshot("prompt")
		promptPath := b.path()

		// Signing out ends the session.
		b.signedIn = false
		is.Equal(b.press("Sign out"), int64(200))
		b.one("field", "API key")
		is.Equal(b.open(promptPath), int64(200)) // sent to sign in
		b.one("button", "Sign in")
		is.True(!b.has("link", "Promote"))
	})
}

// checkRecord checks a deployment record; 0 stands for no version.
func checkRecord(t *testing.T, d deployment, env, action string, number, previous int, actor, reason string) {
	t.Helper()
	num := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	str := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}
	if d.Environment != env || d.Action != action || num(d.VersionNumber) != number || num(d.PreviousVersionNumber) != previous || str(d.Actor) != actor || str(d.Reason) != reason {
		t.Errorf("deployment record: %s %s version %d (was %d) by %s: %q; want %s %s version %d (was %d) by %s: %q",
			d.Environment, d.Action, num(d.VersionNumber), num(d.PreviousVersionNumber), str(d.Actor), str(d.Reason),
			env, action, number, previous, actor, reason)
	}
}

var (
	addedMark   = regexp.MustCompile(`(?i)\+|\badded\b|\baddition\b|\binserted\b`)
	removedMark = regexp.MustCompile(`(?i)-|−|\bremoved\b|\bremoval\b|\bdeleted\b`)
)

// checkDiffMarks checks, in the text a screen reader reads, that the
// words between each line of marks (its text, in order) and the line
// before it say "added" or "removed" as marks says ("" for neither).
func checkDiffMarks(t testing.TB, spoken string, lines []string, marks map[string]string) {
	t.Helper()
	at := 0
	for _, line := range lines {
		i := strings.Index(spoken[at:], line)
		if i < 0 {
			t.Errorf("the line %q is not read out in order; read:\n%s", line, spoken)
			return
		}
		between := spoken[at : at+i]
		at += i + len(line)
		want, ok := marks[line]
		if !ok {
			continue
		}
		added, removed := addedMark.MatchString(between), removedMark.MatchString(between)
		if added != (want == "added") || removed != (want == "removed") {
			t.Errorf("the line %q is read out after %q: want it marked %q", line, between, want)
		}
	}
}

// findIn is find within the element in.
func (b *tab) findIn(in cdp.BackendNodeID, role, name string) []cdp.BackendNodeID {
	b.t.Helper()
	var found []cdp.BackendNodeID
	for _, n := range b.find(role, name) {
		var inside bool
		b.call(in, `function(e) { return this.contains(e) }`, &inside, n)
		if inside {
			found = append(found, n)
		}
	}
	return found
}

// posted returns the body of the last POST whose URL ends with suffix.
func (b *tab) posted(suffix string) string {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.requests) - 1; i >= 0; i-- {
		r := b.requests[i]
		if r.Method != "POST" || !strings.HasSuffix(r.URL, suffix) {
			continue
		}
		var body []byte
		for _, e := range r.PostDataEntries {
			body = append(body, e.Bytes...)
		}
		if len(body) == 0 {
			b.t.Fatalf("the POST to %s has no body the browser shows", r.URL)
		}
		return string(body)
	}
	b.t.Fatalf("no POST to …%s", suffix)
	return ""
}
