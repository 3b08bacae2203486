package browsertest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestSignInWithThePrintedKey starts the server as a newcomer does, with
// no key at all, and signs in with the key it prints; a wrong key is
// refused first, saying so.
func TestSignInWithThePrintedKey(t *testing.T) {
	need(t)
	is := is.New(t)
	s, printed := startBare(t)
	m := printedUI.FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("the server printed no address of the web interface:\n%s", s.out.String())
	}
	is.Equal(m[1], s.origin+"/ui/") // the printed address is where it is

	b := newTab(t, s, true)
	is.Equal(b.open("/ui/"), int64(200))
	b.fill("API key", "not-the-key-0123456789abcdef")
	is.Equal(b.press("Sign in"), int64(401))
	is.True(strings.Contains(b.text(), "not known")) // says why
	is.True(!b.has("button", "Sign out"))

	b.fill("API key", printed)
	b.signedIn = true
	is.Equal(b.press("Sign in"), int64(200))
	is.True(b.has("link", "Demo")) // the project the server made
}

// TestRolesBoundWhatIsOffered signs in with read and write keys: the
// interface offers only what the role allows, and a form built by hand
// for more is refused with 403, changing nothing. The same forged form
// sent with a deploy key succeeds: it was refused for the role alone.
func TestRolesBoundWhatIsOffered(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s, g := acme(t)
		s.api(t, "admin", "POST", "/prompts/"+g.ID+"/versions", map[string]any{"content": greetingV2}, 200, nil)

		// What a deploy key's promote form sends.
		dep := toGreeting(t, s, "deploy", scripts)
		dep.follow("Promote")
		dep.choose("Version", "Version 2")
		dep.choose("Environment", "production")
		dep.fill("Reason", "forged")
		promote := dep.form("Promote")

		// A read key sees no change offered, and a forged promotion is 403.
		read := toGreeting(t, s, "read", scripts)
		promptPath := read.path()
		for _, name := range []string{"New version", "Promote", "Roll back", "Deactivate"} {
			if read.has("link", name) || read.has("button", name) {
				t.Errorf("a read key is offered %s", name)
			}
		}
		is.True(read.has("link", "Compare"))
		before := s.state(t, g.ID)
		is.Equal(read.forge(promote), int64(403))
		is.True(strings.Contains(read.text(), "deploy")) // names the role it needs
		is.Equal(s.state(t, g.ID), before)

		// A write key may write versions, not activate them.
		write := toGreeting(t, s, "write", scripts)
		is.True(write.has("link", "New version"))
		for _, name := range []string{"Promote", "Roll back", "Deactivate"} {
			if write.has("link", name) || write.has("button", name) {
				t.Errorf("a write key is offered %s", name)
			}
		}
		is.Equal(write.forge(promote), int64(403))
		is.Equal(s.state(t, g.ID), before)
		write.open(promptPath)
		write.follow("New version")
		is.True(!write.has("checkbox", "Activate in staging"))
		write.fill("Content", "Staged by hand {{name}}.")
		newVersion := write.form("Create")
		newVersion.Fields = append(newVersion.Fields, [2]string{"staging", "1"})
		is.Equal(write.forge(newVersion), int64(403)) // activating needs deploy
		is.Equal(s.state(t, g.ID), before)

		// The same forms, sent with a deploy key's session, do what they say.
		is.Equal(dep.forge(promote), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 2)
		checkRecord(t, s.deployments(t, g.ID)[0], "production", "activate", 2, 1, "dan-deploy", "forged")
		is.Equal(dep.forge(newVersion), int64(200))
		is.Equal(s.active(t, g.ID, "staging"), 3)
	})
}

// TestCSRF sends the promote and new-version forms without their CSRF
// token and with a wrong one: 403, saying why, and nothing changes; the
// same forms with the token do their work.
func TestCSRF(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s, g := acme(t)
		s.api(t, "admin", "POST", "/prompts/"+g.ID+"/versions", map[string]any{"content": greetingV2}, 200, nil)
		b := toGreeting(t, s, "deploy", scripts)
		promptPath := b.path()
		before := s.state(t, g.ID)

		for _, token := range []string{"", "wrong"} {
			b.open(promptPath)
			b.follow("Promote")
			b.choose("Version", "Version 2")
			b.choose("Environment", "production")
			b.fill("Reason", "no token")
			b.setToken("Promote", token)
			is.Equal(b.press("Promote"), int64(403))
			is.True(strings.Contains(b.text(), "token")) // says why
			is.Equal(s.state(t, g.ID), before)

			b.open(promptPath)
			b.follow("New version")
			b.fill("Content", "Sent without a token.")
			b.setToken("Create", token)
			is.Equal(b.press("Create"), int64(403))
			is.Equal(s.state(t, g.ID), before)
		}

		// With the token, the same forms work.
		b.open(promptPath)
		b.follow("Promote")
		b.choose("Version", "Version 2")
		b.choose("Environment", "production")
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 2)
	})
}

// TestStalePage opens the promote form, changes the environment through
// the HTTP interface, then submits: refused with 412, the page says it
// was out of date, nothing changes; submitted again from the page as it
// now stands, it works.
func TestStalePage(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s, g := acme(t)
		s.api(t, "admin", "POST", "/prompts/"+g.ID+"/versions", map[string]any{"content": greetingV2}, 200, nil)
		b := toGreeting(t, s, "deploy", scripts)
		b.follow("Promote")
		b.choose("Version", "Version 2")
		b.choose("Environment", "production")
		b.fill("Reason", "from an old page")

		// Meanwhile, someone deactivates production.
		s.api(t, "admin", "DELETE", "/prompts/"+g.ID+"/environments/production?reason=meanwhile", nil, 204, nil)
		before := s.state(t, g.ID)
		is.Equal(b.press("Promote"), int64(412))
		page := b.text()
		is.True(strings.Contains(page, "out of date"))         // says so
		is.True(strings.Contains(page, "nothing was changed")) // and that nothing changed
		is.Equal(s.state(t, g.ID), before)

		// The refusal shows the form as things now stand.
		b.choose("Version", "Version 2")
		b.choose("Environment", "production")
		is.Equal(b.press("Promote"), int64(200))
		is.Equal(s.active(t, g.ID, "production"), 2)
		checkRecord(t, s.deployments(t, g.ID)[0], "production", "activate", 2, 0, "dan-deploy", "from an old page")
	})
}

// A form as the browser would send it: where to, and its fields.
type sentForm struct {
	Action string
	Fields [][2]string
}

// form returns what the form holding the button named button would send,
// but for its CSRF token.
func (b *tab) form(button string) sentForm {
	b.t.Helper()
	var f sentForm
	b.call(b.one("button", button), `function() {
		const f = this.form;
		return {Action: f.action, Fields: [...new FormData(f)].filter(([k]) => k !== "csrf")};
	}`, &f)
	if f.Action == "" {
		b.t.Fatalf("the button %q is in no form", button)
	}
	return f
}

// forge builds, in the page shown, a form that sends f with the
// session's own CSRF token (taken from the page, as a script on it
// could), submits it with a button and returns the status of the answer.
func (b *tab) forge(f sentForm) int64 {
	b.t.Helper()
	b.eval(`(() => {
		const f = `+mustJSON(b.t, f)+`;
		const form = document.createElement("form");
		form.method = "post";
		form.action = f.Action;
		const add = (k, v) => { const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; form.append(i); };
		add("csrf", document.querySelector("input[name=csrf]").value);
		f.Fields.forEach(([k, v]) => add(k, v));
		const button = document.createElement("button");
		button.type = "submit";
		button.textContent = "Forged submit";
		form.append(button);
		document.body.prepend(form);
		return true;
	})()`, nil)
	return b.press("Forged submit")
}

// setToken sets the CSRF token of the form holding the button named
// button to token, or removes it when token is "".
func (b *tab) setToken(button, token string) {
	b.t.Helper()
	var had bool
	b.call(b.one("button", button), `function(token) {
		const t = this.form.querySelector("input[name=csrf]");
		if (!t) return false;
		if (token === "") t.remove(); else t.value = token;
		return true;
	}`, &had, token)
	if !had {
		b.t.Fatalf("the form of %q carries no CSRF token", button)
	}
}

// TestMarkupShowsAsText plants markup in every string a person can
// store (a project's name, a prompt's name and description, a version's
// content, change summary and metadata, a deployment's reason) and
// visits every page that shows them: the markup shows as text, creates
// no element, and runs nothing.
func TestMarkupShowsAsText(t *testing.T) {
	need(t)
	is := is.New(t)
	const projectName = `Acme <img src=x onerror=alert(1)>`
	s := startServer(t, []string{projectName})
	a := s.project(t, projectName)
	var p prompt
	s.api(t, "admin", "POST", "/prompts", map[string]any{"project_id": a.ID, "key": "xss/probe",
		"name": `<script>alert(2)</script>`, "description": `<iframe src="javascript:alert(3)"></iframe>`}, 200, &p)
	s.api(t, "admin", "POST", "/prompts/"+p.ID+"/versions", map[string]any{
		"content":        "<img src=x onerror=alert(4)> {{name}}\n</pre><svg onload=alert(5)>",
		"change_summary": `"><svg onload=alert(6)>`,
		"metadata_":      map[string]any{"note": `</script><img src=x onerror=alert(7)>`},
	}, 200, nil)
	s.api(t, "admin", "POST", "/prompts/"+p.ID+"/versions", map[string]any{"content": "<b onmouseover=alert(8)>bold</b> {{name}}"}, 200, nil)
	s.api(t, "admin", "PUT", "/prompts/"+p.ID+"/environments/production", map[string]any{"version_number": 1, "reason": `<img src=x onerror=alert(9)>`}, 200, nil)

	b := newTab(t, s, true)
	b.open("/ui/")
	b.signIn("deploy")
	b.noMarkup(projectName)
	b.follow(projectName)
	b.noMarkup(projectName)
	b.follow("xss/probe")
	b.noMarkup(`<script>alert(2)</script>`, `<iframe src="javascript:alert(3)"></iframe>`, `"><svg onload=alert(6)>`, `<img src=x onerror=alert(9)>`)
	b.follow("Version 1")
	b.noMarkup("<img src=x onerror=alert(4)> {{name}}\n</pre><svg onload=alert(5)>", `</script><img src=x onerror=alert(7)>`)
	b.follow("Render version 1")
	b.noMarkup("<img src=x onerror=alert(4)>")
	b.fill("name", "<img src=x onerror=alert(10)>")
	is.Equal(b.press("Render"), int64(200))
	b.noMarkup("<img src=x onerror=alert(4)> <img src=x onerror=alert(10)>")
	b.follow("xss/probe")
	b.follow("Compare")
	b.noMarkup("<img src=x onerror=alert(4)>", "<b onmouseover=alert(8)>bold</b>")
	b.follow("xss/probe")
	b.follow("Promote")
	b.noMarkup(`"><svg onload=alert(6)>`, `<img src=x onerror=alert(9)>`)
}

// noMarkup checks that the page shows each of texts as text, and that it
// has no element that planted markup would make: no img, svg, iframe or
// b, no inline script, no attribute on….
func (b *tab) noMarkup(texts ...string) {
	b.t.Helper()
	var found struct {
		Elements []string
		Handlers []string
	}
	b.eval(`({
		Elements: [...document.querySelectorAll("img, svg, iframe, b, object, embed, script:not([src])")].map(e => e.outerHTML.slice(0, 100)),
		Handlers: [...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).map(e => e.outerHTML.slice(0, 100)),
	})`, &found)
	if len(found.Elements)+len(found.Handlers) > 0 {
		b.t.Errorf("%s: planted markup made elements: %q %q", b.path(), found.Elements, found.Handlers)
	}
	page := b.pageText()
	for _, want := range texts {
		if !strings.Contains(page, want) {
			b.t.Errorf("%s: the text %q is not shown as it is; the page shows:\n%s", b.path(), want, page)
		}
	}
}

// pageText is the text of the whole page, as the DOM holds it (the
// content of <pre> with its line breaks, the text of options).
func (b *tab) pageText() string {
	b.t.Helper()
	var s string
	b.eval(`document.body.textContent`, &s)
	return collapse.ReplaceAllString(s, " ")
}

var collapse = regexp.MustCompile(`[ \t]+`)

// TestOtherProjectsAreNotFound signs in with a deploy key for the
// project Beta only: Acme is not listed, its prompt's page is 404, and a
// promotion of it forged from a form of an all-projects key is 404 too,
// changing nothing, as over the HTTP interface.
func TestOtherProjectsAreNotFound(t *testing.T) {
	need(t)
	is := is.New(t)
	beta := key{name: "bo-deploy", role: "deploy", secret: secret()}
	s := startServer(t, []string{"Acme", "Beta"}, "-key", beta.name+":deploy:"+beta.secret+":beta")
	s.keys["beta"] = beta
	a := s.project(t, "Acme")
	g := s.seed(t, a.ID, "support/greeting", "Greeting", greetingV1, greetingV2)

	dep := newTab(t, s, true)
	dep.open("/ui/")
	dep.signIn("deploy")
	dep.follow("Acme")
	dep.follow("support/greeting")
	promptPath := dep.path()
	dep.follow("Promote")
	dep.choose("Version", "Version 2")
	dep.choose("Environment", "production")
	promote := dep.form("Promote")

	b := newTab(t, s, true)
	b.open("/ui/")
	b.signIn("beta")
	is.True(b.has("link", "Beta"))
	is.True(!b.has("link", "Acme")) // not listed
	before := s.state(t, g.ID)
	is.Equal(b.open(promptPath), int64(404)) // as if it did not exist
	is.True(strings.Contains(strings.ToLower(b.text()), "not found"))
	is.Equal(b.forge(promote), int64(404))
	is.Equal(s.state(t, g.ID), before)
}
