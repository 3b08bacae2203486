package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// fixture is a prompt of Alpha with versions 1 ({{name}}) and 2
// ({{name}}, {{place}}), version 1 active in production.
type fixture struct {
	*env
	prompt prompts.Prompt
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, newEnv(t))
}

// newFixtureOn is newFixture over e.
func newFixtureOn(t *testing.T, e *env) *fixture {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "support/greeting", Name: "Greeting"})
	is.NoErr(err)
	summary := "first"
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}.\nHow are you?\n", ChangeSummary: &summary})
	is.NoErr(err)
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}} from {{place}}.\nHow are you?\n"})
	is.NoErr(err)
	_, err = e.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1), Change: prompts.Change{Actor: "setup", Reason: "first release"}})
	is.NoErr(err)
	return &fixture{env: e, prompt: p}
}

func (f *fixture) url(rest string) string { return f.prefix + "prompts/" + f.prompt.ID + rest }

// active returns the number of the version active in env, 0 for none.
func (f *fixture) active(env prompts.Environment) int {
	ap, err := f.store.GetActive(context.Background(), f.prompt.ID, env)
	if err != nil {
		f.t.Fatal(err)
	}
	if ap.ActiveVersion == nil {
		return 0
	}
	return ap.ActiveVersion.VersionNumber
}

// history returns the prompt's deployment records, newest first.
func (f *fixture) history() []prompts.Deployment {
	ds, _, err := f.store.ListDeployments(context.Background(), prompts.DeploymentFilter{PromptID: f.prompt.ID})
	if err != nil {
		f.t.Fatal(err)
	}
	return ds
}

func (f *fixture) revision() int64 {
	p, err := f.store.GetPrompt(context.Background(), f.prompt.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Revision
}

// hidden returns the value of the page's hidden field name.
func hidden(p page, name string) string {
	m := regexp.MustCompile(`<input type="hidden" name="` + regexp.QuoteMeta(name) + `" value="([^"]*)">`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return m[1]
}

// formOf returns the hidden fields of the page's change form.
func formOf(p page) url.Values {
	v := url.Values{}
	for _, n := range []string{"csrf", "revision", "seen_latest", "seen_deployment"} {
		v.Set(n, hidden(p, n))
	}
	return v
}

func TestPromptPageOffersWhatTheRoleAllows(t *testing.T) {
	f := newFixture(t)
	actions := []string{"New version", "Promote", "Roll back", "Deactivate", "Compare"}
	for key, want := range map[string][]bool{
		readKey:   {false, false, false, false, true},
		writeKey:  {true, false, false, false, true},
		deployKey: {true, true, true, true, true},
		adminKey:  {true, true, true, true, true},
	} {
		is := is.New(t)
		b := f.browser()
		b.signIn(key)
		p := b.get(f.url(""))
		is.Equal(p.StatusCode, 200)
		for i, name := range actions {
			is.Equal(hasLink(p, name), want[i]) // offered only when the role allows it
		}
		is.True(strings.Contains(text(p), "production Version 1 is active."))
		is.True(strings.Contains(text(p), "staging Nothing is active."))
		is.True(hasLink(p, "Version 2")) // the versions
		// The history: who, when, why.
		is.True(strings.Contains(text(p), "Activated: version 1 (was nothing)"))
		is.True(strings.Contains(text(p), "setup"))
		is.True(strings.Contains(text(p), "first release"))
		is.True(strings.Contains(text(p), "Revision "+strconv.FormatInt(f.revision(), 10)))
		// And the forms a role may not use are 403.
		for _, path := range []string{"/promote", "/rollback", "/deactivate"} {
			is.Equal(b.get(f.url(path)).StatusCode == http.StatusForbidden, !want[1])
		}
		is.Equal(b.get(f.url("/versions/new")).StatusCode == http.StatusForbidden, !want[0])
	}
}

func TestForgedChangesByLesserRolesAreRefused(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	rev := f.revision()
	before := len(f.history())

	b := f.browser()
	b.signIn(readKey)
	form := url.Values{"version": {"2"}, "environment": {"production"}, "revision": {strconv.FormatInt(rev, 10)}}
	for _, path := range []string{"/promote", "/rollback", "/deactivate"} {
		p := b.post(f.url(path), form)
		is.Equal(p.StatusCode, http.StatusForbidden) // a read key's valid session and token are not enough
		is.True(strings.Contains(text(p), "deploy role"))
	}
	p := b.post(f.url("/versions"), url.Values{"content": {"new"}})
	is.Equal(p.StatusCode, http.StatusForbidden)

	w := f.browser()
	w.signIn(writeKey)
	p = w.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusForbidden)
	// A write key may create a version, but not one active in staging.
	p = w.post(f.url("/versions"), url.Values{"content": {"new"}, "staging": {"1"}})
	is.Equal(p.StatusCode, http.StatusForbidden)

	is.Equal(f.revision(), rev) // nothing changed
	is.Equal(len(f.history()), before)
	is.Equal(f.active(prompts.Production), 1)
}

func TestPostWithoutTheTokenChangesNothing(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	rev := f.revision()
	b := f.browser()
	b.signIn(deployKey)
	p := b.get(f.url("/promote?version=2&environment=production"))
	form := formOf(p)
	form.Set("version", "2")
	form.Set("environment", "production")
	form.Set("allow_variable_change", "1")
	for _, token := range []string{"", "forged", b.csrf + "x"} {
		form.Set("csrf", token)
		p = b.post(f.url("/promote"), form)
		is.Equal(p.StatusCode, http.StatusForbidden)
	}
	p = b.post(f.url("/versions"), url.Values{"content": {"x"}, "csrf": {"forged"}})
	is.Equal(p.StatusCode, http.StatusForbidden)
	// Another browser's token is not this session's.
	other := f.browser()
	other.signIn(deployKey)
	form.Set("csrf", other.csrf)
	is.Equal(b.post(f.url("/promote"), form).StatusCode, http.StatusForbidden)

	is.Equal(f.revision(), rev)
	is.Equal(f.active(prompts.Production), 1)

	// With the token it goes through.
	form.Set("csrf", b.csrf)
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 2)
}

func TestPromoteRecordsWhoAndWhy(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(deployKey)
	p := b.get(f.url("/promote"))
	is.True(hasField(p, "Version"))
	is.True(hasField(p, "Environment"))
	is.True(hasField(p, "Reason"))
	is.True(hasButton(p, "Promote"))
	is.True(!hasField(p, "Allow variable change")) // only once the guard refused
	form := formOf(p)
	form.Set("version", "1")
	form.Set("environment", "staging")
	form.Set("reason", "try it\r\non staging <b>first</b>")
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(p.Header.Get("Location"), f.url(""))
	is.Equal(f.active(prompts.Staging), 1)
	d := f.history()[0]
	is.Equal(*d.Actor, "deployer")                         // the key's name
	is.Equal(*d.Reason, "try it\non staging <b>first</b>") // \n line ends
	p = b.follow(p)
	is.True(strings.Contains(text(p), "Version 1 is active in staging now.")) // said once
	is.True(strings.Contains(p.body, "on staging &lt;b&gt;first&lt;/b&gt;"))  // escaped
	is.True(strings.Contains(text(p), "deployer"))
	p = b.get(f.url(""))
	is.True(!strings.Contains(text(p), "is active in staging now.")) // and not again
}

func TestStalePageChangesNothingAndSaysWhatChanged(t *testing.T) {
	for _, action := range []string{"promote", "rollback", "deactivate"} {
		t.Run(action, func(t *testing.T) {
			is := is.New(t)
			f := newFixture(t)
			ctx := context.Background()
			b := f.browser()
			b.signIn(deployKey)
			p := b.get(f.url("/" + action))
			is.Equal(p.StatusCode, 200)
			form := formOf(p)
			form.Set("version", "2")
			form.Set("environment", "production")
			form.Set("reason", "mine")

			// Meanwhile, someone else promotes, and writes a version.
			_, err := f.store.Activate(ctx, prompts.Activation{PromptID: f.prompt.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: prompts.Change{Actor: "alice", Reason: "hotfix", AllowVariableChange: true}})
			is.NoErr(err)
			_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: f.prompt.ID, Content: "v3"})
			is.NoErr(err)
			rev, n := f.revision(), len(f.history())

			p = b.post(f.url("/"+action), form)
			is.Equal(p.StatusCode, http.StatusPreconditionFailed)
			txt := text(p)
			is.True(strings.Contains(txt, "This page was out of date, so nothing was changed."))
			is.True(strings.Contains(txt, "production: version 2 activated (was version 1)"))
			is.True(strings.Contains(txt, "by alice: “hotfix”"))
			is.True(strings.Contains(txt, "Version 3 was created."))
			is.Equal(f.revision(), rev) // nothing changed
			is.Equal(len(f.history()), n)
			is.Equal(f.active(prompts.Production), 2)
			is.True(strings.Contains(p.body, `value="mine"`)) // the reason typed is kept

			// The form offered again expects the prompt as it is now.
			is.Equal(hidden(p, "revision"), strconv.FormatInt(rev, 10))
			again := formOf(p)
			again.Set("version", "1")
			again.Set("environment", "production")
			again.Set("allow_variable_change", "1")
			p = b.post(f.url("/"+action), again)
			is.Equal(p.StatusCode, http.StatusSeeOther)
			is.True(f.revision() != rev)
		})
	}
}

func TestPromotionGuard(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(deployKey)
	p := b.get(f.url("/promote?version=2&environment=production"))
	form := formOf(p)
	form.Set("version", "2")
	form.Set("environment", "production")
	rev := f.revision()
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "variables differ"))
	is.True(strings.Contains(text(p), "Added: place")) // names the variables
	is.True(strings.Contains(text(p), "Code that renders this prompt must give the added variables. To go ahead"))
	is.True(hasField(p, "Allow variable change")) // and offers the override
	is.Equal(f.revision(), rev)                   // nothing changed
	is.Equal(f.active(prompts.Production), 1)
	is.Equal(hidden(p, "revision"), strconv.FormatInt(rev, 10)) // the page's own revision still

	form = formOf(p)
	form.Set("version", "2")
	form.Set("environment", "production")
	form.Set("allow_variable_change", "1")
	p = b.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 2)

	// A rollback meets the guard too (back to {{name}} alone).
	p = b.get(f.url("/rollback"))
	form = formOf(p)
	form.Set("environment", "production")
	p = b.post(f.url("/rollback"), form)
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "Removed: place"))
	// Said by what changed: only a variable removed, none added.
	is.True(strings.Contains(text(p), "Code that renders this prompt must stop giving the removed variables"))
	is.True(!strings.Contains(text(p), "added variables"))
	form = formOf(p)
	form.Set("environment", "production")
	form.Set("allow_variable_change", "1")
	p = b.post(f.url("/rollback"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 1)
	is.Equal(f.history()[0].Action, prompts.ActionRollback)
}

func TestRollbackAndDeactivate(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(adminKey)

	// Staging has no record: nothing to roll back to, 409.
	p := b.get(f.url("/rollback?environment=staging"))
	is.True(hasField(p, "Environment"))
	is.True(hasField(p, "Reason"))
	is.True(hasButton(p, "Roll back"))
	is.True(strings.Contains(text(p), "staging nothing to roll back to"))
	form := formOf(p)
	form.Set("environment", "staging")
	p = b.post(f.url("/rollback"), form)
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "nothing to roll back to"))

	p = b.get(f.url("/deactivate"))
	is.True(hasButton(p, "Deactivate"))
	form = formOf(p)
	form.Set("environment", "production")
	form.Set("reason", "incident")
	p = b.post(f.url("/deactivate"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 0)
	d := f.history()[0]
	is.Equal(d.Action, prompts.ActionDeactivate)
	is.Equal(*d.Actor, "root")
	is.Equal(*d.Reason, "incident")

	// Rolling back the deactivation brings version 1 back.
	p = b.get(f.url("/rollback"))
	is.True(strings.Contains(text(p), "production back to version 1 (from nothing active)"))
	form = formOf(p)
	form.Set("environment", "production")
	p = b.post(f.url("/rollback"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Production), 1)
	p = b.follow(p)
	is.True(strings.Contains(text(p), "Rolled back: version 1 is active in production now."))
	is.True(strings.Contains(text(p), "Rolled back: version 1 (was nothing)"))

	// A form without its revision is refused: a change always expects one.
	form = formOf(b.get(f.url("/deactivate")))
	form.Del("revision")
	form.Set("environment", "production")
	is.Equal(b.post(f.url("/deactivate"), form).StatusCode, http.StatusBadRequest)
	is.Equal(f.active(prompts.Production), 1)
}

func TestNewVersion(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(deployKey)
	p := b.get(f.url("/versions/new"))
	is.Equal(p.StatusCode, 200)
	for _, name := range []string{"Content", "Change summary", "Metadata (JSON)", "Activate in staging"} {
		is.True(hasField(p, name)) // every field, labelled
	}
	is.True(hasButton(p, "Create"))
	is.True(strings.Contains(p.body, "Hello {{name}} from {{place}}.")) // starts from the latest
	is.True(strings.Contains(text(p), "Variables name place"))          // its variables shown

	// "Show variables" shows those of the content typed, and creates nothing.
	p = b.post(f.url("/versions"), url.Values{"content": {"Hi {{ who }} and {{_x}}"}, "preview": {"1"}})
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Variables _x who"))
	is.Equal(latest(f), 2)

	// Bad metadata: 400, the form again with what was typed, nothing created.
	p = b.post(f.url("/versions"), url.Values{"content": {"x"}, "metadata": {"[1,2]"}})
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Metadata must be a JSON object or null"))
	is.True(strings.Contains(p.body, `aria-invalid="true"`))
	is.True(strings.Contains(p.body, "[1,2]"))
	is.Equal(latest(f), 2)

	// Metadata that gives a name twice, however deep, is refused as the
	// HTTP interface refuses it: the JSON served would not be read back.
	p = b.post(f.url("/versions"), url.Values{"content": {"x"}, "metadata": {`{"model":"a","n":{"x":1,"x":2}}`}})
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Metadata member n.x is given more than once"))
	is.True(strings.Contains(p.body, `id="metadata" name="metadata" rows="5" spellcheck="false" aria-describedby="metadata-help metadata-error" aria-invalid="true"`))
	is.Equal(latest(f), 2)

	// CRLF from the browser is stored as \n.
	p = b.post(f.url("/versions"), url.Values{
		"content":        {"Line one {{name}}\r\nLine two\r\n"},
		"change_summary": {"crlf"},
		"metadata":       {"{\r\n  \"model\": \"m\",\r\n  \"n\": 1.50\r\n}"},
	})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	v, err := f.store.GetVersion(context.Background(), f.prompt.ID, 3)
	is.NoErr(err)
	is.Equal(v.Content, "Line one {{name}}\nLine two\n")
	is.Equal(*v.ChangeSummary, "crlf")
	is.Equal(string(v.Metadata), `{"model":"m","n":1.50}`) // every digit kept
	is.Equal(f.active(prompts.Staging), 0)                 // not asked to
	p = b.follow(p)
	is.Equal(p.Header.Get("Content-Type"), "text/html; charset=utf-8")
	is.True(strings.Contains(text(p), "Version 3 created."))

	// Activate in staging: a deploy key may.
	p = b.post(f.url("/versions"), url.Values{"content": {"Staged {{name}}"}, "staging": {"1"}, "change_summary": {"staged"}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Staging), 4)
	is.Equal(*f.history()[0].Actor, "deployer")

	// The guard refuses a staging activation with other variables...
	p = b.post(f.url("/versions"), url.Values{"content": {"{{other}}"}, "staging": {"1"}})
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "Added: other"))
	is.True(strings.Contains(text(p), "Removed: name"))
	is.True(hasField(p, "Allow variable change"))
	is.Equal(latest(f), 4)
	// ...unless allowed.
	p = b.post(f.url("/versions"), url.Values{"content": {"{{other}}"}, "staging": {"1"}, "allow_variable_change": {"1"}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(f.active(prompts.Staging), 5)

	// A write key creates versions, and is not offered staging.
	w := f.browser()
	w.signIn(writeKey)
	p = w.get(f.url("/versions/new"))
	is.True(!hasField(p, "Activate in staging"))
	p = w.post(f.url("/versions"), url.Values{"content": {"by writer"}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	is.Equal(latest(f), 6)
}

func latest(f *fixture) int {
	vs, _, err := f.store.ListVersions(context.Background(), f.prompt.ID, prompts.Page{Limit: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	if len(vs) == 0 {
		return 0
	}
	return vs[0].VersionNumber
}

func TestCompareMarksAdditionsAndRemovals(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(readKey)
	p := b.get(f.url(""))
	link := linkTo(p, "Compare")
	is.Equal(link, f.url("/compare?from=1&to=2"))
	p = b.get(link)
	is.Equal(p.StatusCode, 200)
	is.True(hasField(p, "From"))
	is.True(hasField(p, "To"))
	is.True(hasButton(p, "Compare"))
	rows := regexp.MustCompile(`<tr class="(add|del)">.*?</tr>`).FindAllString(p.body, -1)
	is.Equal(len(rows), 2)
	is.True(strings.Contains(rows[0], `<span aria-hidden="true">−</span><span class="vh">removed</span>`)) // a sign and words, not colour alone
	is.True(strings.Contains(rows[0], "Hello {{name}}."))
	is.True(strings.Contains(rows[1], `<span aria-hidden="true">+</span><span class="vh">added</span>`))
	is.True(strings.Contains(rows[1], "Hello {{name}} from {{place}}."))
	is.True(strings.Contains(text(p), "1 line added, 1 line removed."))
	is.True(strings.Contains(text(p), "+ added a line only version 2 has")) // the legend
	is.True(strings.Contains(text(p), "Added: place"))                      // the variables

	// Any two, either way round; the same one twice is the same.
	p = b.get(f.url("/compare?from=2&to=1"))
	is.True(strings.Contains(text(p), "Removed: place"))
	is.True(!strings.Contains(text(p), "Added: "))
	p = b.get(f.url("/compare?from=2&to=2"))
	is.True(strings.Contains(text(p), "The two versions have the same content."))
	is.Equal(b.get(f.url("/compare?from=1&to=9")).StatusCode, http.StatusNotFound)
	is.Equal(b.get(f.url("/compare?from=x&to=1")).StatusCode, http.StatusNotFound)
}

func TestRenderAVersion(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(readKey)
	p := b.get(f.url("/versions/2"))
	link := linkTo(p, "Render version 2")
	is.Equal(link, f.url("/versions/2/render"))
	p = b.get(link)
	is.True(hasField(p, "name")) // a field per variable, labelled by its name
	is.True(hasField(p, "place"))
	is.True(hasButton(p, "Render"))
	p = b.post(link, url.Values{"var.name": {"<Ada>"}, "var.place": {"Paris\r\nFrance"}})
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(p.body, "Hello &lt;Ada&gt; from Paris\nFrance.\nHow are you?"))
	p = b.post(link, url.Values{"var.name": {"Ada"}})
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "place"))

	// An empty field is a value, the empty string, and the page says so.
	p = b.get(link)
	is.True(strings.Contains(text(p), "An empty field is a value too: its variable renders as nothing."))
	is.True(strings.Contains(p.body, `name="var.place" rows="2" aria-describedby="values-help"`)) // told to screen readers at each field
	p = b.post(link, url.Values{"var.name": {"Ada"}, "var.place": {""}})
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(p.body, "Hello Ada from .\nHow are you?"))
	is.Equal(len(f.history()), 1) // rendering changes nothing
}

func TestStoredStringsAreEscapedEverywhere(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	ctx := context.Background()
	const evil = `<script>alert(1)</script>`
	desc := evil
	_, err := f.store.UpdatePrompt(ctx, f.prompt.ID, prompts.PromptUpdate{Name: prompts.Some("Name " + evil), Description: prompts.Some(desc)})
	is.NoErr(err)
	summary := "summary " + evil
	_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: f.prompt.ID, Content: "content " + evil + " {{name}}", ChangeSummary: &summary, Metadata: prompts.Metadata(`{"k":"` + strings.ReplaceAll(evil, "/", `\/`) + `"}`)})
	is.NoErr(err)
	_, err = f.store.Activate(ctx, prompts.Activation{PromptID: f.prompt.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(3), Change: prompts.Change{Actor: "actor" + evil, Reason: "reason " + evil}})
	is.NoErr(err)
	b := f.browser()
	b.signIn(adminKey)
	for _, path := range []string{"", "/versions/3", "/compare?from=1&to=3", "/promote", "/rollback", "/deactivate", "/versions/new", "/versions/3/render"} {
		p := b.get(f.url(path))
		is.Equal(p.StatusCode, 200)
		is.True(!strings.Contains(p.body, evil)) // never as markup
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("%s: the stored markup is not shown as text", path)
		}
	}
}

func TestNewPrompt(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(writeKey)
	p := b.get(f.prefix + "projects/" + f.alpha.ID)
	link := linkTo(p, "New prompt")
	is.Equal(link, f.prefix+"projects/"+f.alpha.ID+"/prompts/new")
	p = b.get(link)
	is.True(hasField(p, "Key"))
	is.True(hasField(p, "Name"))
	is.True(hasField(p, "Description"))
	is.True(hasButton(p, "Create"))
	p = b.post(f.prefix+"projects/"+f.alpha.ID+"/prompts", url.Values{"key": {"support/greeting"}, "name": {"Again"}})
	is.Equal(p.StatusCode, http.StatusConflict) // the key is taken
	is.True(strings.Contains(text(p), "Key is taken"))
	p = b.post(f.prefix+"projects/"+f.alpha.ID+"/prompts", url.Values{"key": {"bad key!"}, "name": {" "}})
	is.Equal(p.StatusCode, http.StatusBadRequest)
	p = b.post(f.prefix+"projects/"+f.alpha.ID+"/prompts", url.Values{"key": {"support/farewell"}, "name": {"Farewell"}, "description": {"Said\r\nat the end"}})
	is.Equal(p.StatusCode, http.StatusSeeOther)
	p = b.follow(p)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Prompt support/farewell created."))
	ps, _, err := f.store.ListPrompts(context.Background(), prompts.PromptFilter{ProjectIDs: []string{f.alpha.ID}, Key: "support/farewell"})
	is.NoErr(err)
	is.Equal(*ps[0].Description, "Said\nat the end")

	// A read key may not; a project the key may not see is 404.
	r := f.browser()
	r.signIn(readKey)
	is.Equal(r.get(link).StatusCode, http.StatusForbidden)
	l := f.browser()
	l.signIn(limitedKey)
	is.Equal(l.get(f.prefix+"projects/"+f.beta.ID+"/prompts/new").StatusCode, http.StatusNotFound)
}

func TestPromptsOfHiddenProjectsAreNotFound(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	ctx := context.Background()
	hidden, err := f.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: f.beta.ID, Key: "secret", Name: "Secret"})
	is.NoErr(err)
	_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: hidden.ID, Content: "x"})
	is.NoErr(err)
	b := f.browser()
	b.signIn(limitedKey)
	unknown := b.get(f.prefix + "prompts/01JZZZZZZZZZZZZZZZZZZZZZZZ")
	is.Equal(unknown.StatusCode, http.StatusNotFound)
	for _, path := range []string{"", "/versions/1", "/compare", "/promote", "/versions/1/render"} {
		p := b.get(f.prefix + "prompts/" + hidden.ID + path)
		is.Equal(p.StatusCode, http.StatusNotFound)
		is.Equal(text(p), text(unknown))
	}
	p := b.get(f.url("/promote"))
	form := formOf(p)
	form.Set("version", "1")
	form.Set("environment", "production")
	form.Set("revision", "1")
	p = b.post(f.prefix+"prompts/"+hidden.ID+"/promote", form)
	is.Equal(p.StatusCode, http.StatusNotFound)
	is.Equal(b.get(f.url("/versions/9")).StatusCode, http.StatusNotFound)
	is.Equal(b.get(f.url("/versions/new")).StatusCode, 200) // "new" is not a number
}

func TestCrossSiteRequestsAreRefused(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(deployKey)
	form := formOf(b.get(f.url("/deactivate")))
	form.Set("environment", "production")
	req, err := http.NewRequest("POST", f.srv.URL+f.url("/deactivate"), strings.NewReader(form.Encode()))
	is.NoErr(err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site") // what a browser sends for a form another site posts
	p := b.do(req)
	is.Equal(p.StatusCode, http.StatusForbidden) // even with the session's token
	is.Equal(p.Header.Get("X-Content-Type-Options"), "nosniff")
	is.Equal(f.active(prompts.Production), 1) // nothing changed
}

func TestConcurrentChangesFromOnePageOneWins(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	a, b := f.browser(), f.browser()
	a.signIn(deployKey)
	b.signIn(adminKey)
	pa, pb := a.get(f.url("/promote")), b.get(f.url("/promote"))
	is.Equal(hidden(pa, "revision"), hidden(pb, "revision")) // both see the same state
	fa, fb := formOf(pa), formOf(pb)
	for _, fm := range []url.Values{fa, fb} {
		fm.Set("version", "1")
		fm.Set("environment", "staging")
	}
	codes := make(chan int, 2)
	go func() { codes <- a.post(f.url("/promote"), fa).StatusCode }()
	go func() { codes <- b.post(f.url("/promote"), fb).StatusCode }()
	got := []int{<-codes, <-codes}
	is.True((got[0] == http.StatusSeeOther) != (got[1] == http.StatusSeeOther)) // exactly one wins
	is.True(got[0] == http.StatusPreconditionFailed || got[1] == http.StatusPreconditionFailed)
	is.Equal(len(f.history()), 2) // one change recorded
}

func TestBadInputIsAClearRefusal(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(adminKey)
	rev := f.revision()
	form := formOf(b.get(f.url("/promote")))
	for name, tc := range map[string]struct {
		field, value string
		status       int
		says         string
	}{
		"no version":      {"version", "x", http.StatusBadRequest, "Version must be a number"},
		"version 0":       {"version", "0", http.StatusBadRequest, "Version must be 1 or more"},
		"unknown version": {"version", "99", http.StatusNotFound, "Not found"},
		"environment":     {"environment", "prod", http.StatusBadRequest, "Environment is not an environment of this project: production, staging"},
		"NUL in reason":   {"reason", "a\x00b", http.StatusBadRequest, "Reason must not contain the NUL character"},
		"long reason":     {"reason", strings.Repeat("r", 1025), http.StatusBadRequest, "Reason must be at most 1024 characters"},
		"revision":        {"revision", "99999999999999999999999", http.StatusBadRequest, "does not say which revision"},
	} {
		fm := url.Values{}
		for k, v := range form {
			fm[k] = v
		}
		fm.Set("version", "1")
		fm.Set("environment", "staging")
		fm.Set(tc.field, tc.value)
		p := b.post(f.url("/promote"), fm)
		if p.StatusCode != tc.status || !strings.Contains(text(p), tc.says) {
			t.Fatalf("%s: got %d, want %d saying %q:\n%s", name, p.StatusCode, tc.status, tc.says, text(p))
		}
	}
	p := b.get(f.url("/promote?version=abc"))
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Version must be a number"))
	is.True(hasButton(p, "Promote")) // the form again
	for _, path := range []string{"?versions_after=nope", "?history_after=%00"} {
		is.Equal(b.get(f.url(path)).StatusCode, http.StatusBadRequest) // a bad position, not a 500
	}
	is.Equal(f.revision(), rev) // nothing changed
}

// The promote page of a prompt without versions says there is nothing to
// promote and offers New version, not an empty list and a Promote button.
func TestPromoteWithoutVersions(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	pr, err := f.store.CreatePrompt(context.Background(), prompts.NewPrompt{ProjectID: f.alpha.ID, Key: "empty", Name: "Empty"})
	is.NoErr(err)
	b := f.browser()
	b.signIn(deployKey)
	p := b.get(f.prefix + "prompts/" + pr.ID + "/promote")
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "This prompt has no version yet, so there is nothing to promote."))
	is.Equal(linkTo(p, "New version"), f.prefix+"prompts/"+pr.ID+"/versions/new")
	is.True(!hasButton(p, "Promote"))
	is.True(!hasField(p, "Version"))
}

// Only a number's canonical decimal form names a version: /versions/1 is
// version 1, and /versions/01, /versions/+1 (and their render pages, and
// compare?from=01) are 404, so that each version has one address.
func TestVersionNumbersAreCanonical(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b := f.browser()
	b.signIn(readKey)
	is.Equal(b.get(f.url("/versions/1")).StatusCode, 200)
	is.Equal(b.get(f.url("/versions/1/render")).StatusCode, 200)
	for _, path := range []string{"/versions/01", "/versions/+1", "/versions/%2B1", "/versions/1.0", "/versions/0", "/versions/-1",
		"/versions/01/render", "/versions/+1/render", "/compare?from=01&to=2", "/compare?from=1&to=+2"} {
		p := b.get(f.url(path))
		if p.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, p.StatusCode)
		}
	}
}
