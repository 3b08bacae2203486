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

// split makes env of the fixture's prompt hold split (version number:
// weight, in order), as alice.
func (f *fixture) split(env prompts.Environment, entries ...int) {
	f.t.Helper()
	var s prompts.Split
	for i := 0; i+1 < len(entries); i += 2 {
		s = append(s, prompts.Share{VersionNumber: entries[i], Weight: entries[i+1]})
	}
	_, err := f.store.Activate(context.Background(), prompts.Activation{PromptID: f.prompt.ID, Environment: env, Split: s,
		Change: prompts.Change{Actor: "alice", Reason: "canary", AllowVariableChange: true}})
	if err != nil {
		f.t.Fatal(err)
	}
}

// activeSplit returns the split env holds, nil for none.
func (f *fixture) activeSplit(env prompts.Environment) prompts.Split {
	f.t.Helper()
	a, err := f.store.GetActive(context.Background(), f.prompt.ID, env)
	if err != nil {
		f.t.Fatal(err)
	}
	return a.Split
}

// The prompt's page shows each environment's split with its shares, the
// versions' shares where they are active, and split records and
// rollbacks to splits in the history; the rollback page says what a
// rollback would restore.
func TestPagesShowSplits(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	f.split(prompts.Production, 1, 90, 2, 10)
	b, p := f.open(t, readKey, "")
	txt := text(p)
	is.True(strings.Contains(txt, "production A split is active: each version serves its share of subjects. Version 1: 90% Version 2: 10%"))
	is.True(strings.Contains(txt, "staging Nothing is active."))
	is.True(strings.Contains(txt, "production (90%)")) // the versions, where active
	is.True(strings.Contains(txt, "production (10%)"))
	is.True(strings.Contains(txt, "Split: versions 1 (90%) and 2 (10%) (was version 1)"))
	is.True(strings.Contains(text(b.get(f.url("/versions/2"))), "Active in production (10%)"))

	_, err := f.store.Rollback(context.Background(), prompts.Rollback{PromptID: f.prompt.ID, Environment: prompts.Production, Change: prompts.Change{AllowVariableChange: true}})
	is.NoErr(err)
	txt = text(b.get(f.url("")))
	is.True(strings.Contains(txt, "production Version 1 is active."))
	is.True(strings.Contains(txt, "Rolled back: version 1 (was versions 1 (90%) and 2 (10%))"))

	d, _ := f.open(t, deployKey, "/rollback")
	txt = text(d.get(f.url("/rollback")))
	is.True(strings.Contains(txt, "production back to versions 1 (90%) and 2 (10%) (from version 1)")) // a rollback restores the split
	_, err = f.store.Rollback(context.Background(), prompts.Rollback{PromptID: f.prompt.ID, Environment: prompts.Production, Change: prompts.Change{AllowVariableChange: true}})
	is.NoErr(err)
	txt = text(b.get(f.url("")))
	is.True(strings.Contains(txt, "Rolled back: versions 1 (90%) and 2 (10%) (was version 1)"))
	is.True(strings.Contains(text(d.get(f.url("/promote"))), "production versions 1 (90%) and 2 (10%)")) // what is there now
}

// weightOf returns the weight the page's split form holds in row n.
func weightOf(p page, n int) string {
	m := regexp.MustCompile(`name="split\.` + strconv.Itoa(n) + `\.weight"[^>]*value="([^"]*)"`).FindStringSubmatch(p.body)
	if m == nil {
		return "<no field>"
	}
	return m[1]
}

// The promote page sets a split: rows of a version and a weight, without
// scripts; a row more on asking; refusals name the row and change
// nothing; the guard and protected environments hold as for one version.
func TestPromoteSplit(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	b, p := f.open(t, deployKey, "/promote")
	is.True(hasLink(p, "split between versions"))
	p = b.get(f.url("/promote?split=1&environment=production&version=2"))
	is.Equal(p.StatusCode, 200)
	for _, name := range []string{"Entry 1 version", "Entry 1 weight", "Entry 2 version", "Entry 3 weight", "Environment", "Reason"} {
		is.True(hasField(p, name)) // labelled fields
	}
	is.True(!hasField(p, "Entry 4 version"))
	is.True(!hasField(p, "Version"))
	is.True(hasButton(p, "Promote"))
	is.True(hasLink(p, "promote one version"))
	// A canary to start from: what production serves at 90, the version
	// offered at 10.
	form := sent(p)
	is.Equal(form.Get("serve"), "split")
	is.Equal([]string{form.Get("split.1.version"), weightOf(p, 1), form.Get("split.2.version"), weightOf(p, 2), form.Get("split.3.version")}, []string{"1", "90", "2", "10", ""})

	rev, n := f.revision(), len(f.history())
	set := func(form url.Values, rows ...string) url.Values {
		for i := 1; i <= 3; i++ {
			form.Del("split." + strconv.Itoa(i) + ".version")
			form.Del("split." + strconv.Itoa(i) + ".weight")
		}
		for i := 0; i+1 < len(rows); i += 2 {
			form.Set("split."+strconv.Itoa(i/2+1)+".version", rows[i])
			form.Set("split."+strconv.Itoa(i/2+1)+".weight", rows[i+1])
		}
		form.Set("environment", "production")
		form.Set("reason", "canary of 2")
		return form
	}

	// A row more, and nothing changes.
	more := set(formOf(p), "1", "50", "2", "30", "", "") // the third row shown, empty
	more.Set("serve", "split")
	more.Set("add_entry", "1")
	p = b.post(f.url("/promote"), more)
	is.Equal(p.StatusCode, 200)
	is.True(hasField(p, "Entry 4 version"))
	is.True(!hasField(p, "Entry 5 version"))
	is.Equal([]string{weightOf(p, 1), weightOf(p, 2), weightOf(p, 3)}, []string{"50", "30", ""})
	is.True(strings.Contains(text(p), "62.5% of subjects")) // each row's share
	is.True(strings.Contains(text(p), "37.5% of subjects"))
	is.Equal(f.revision(), rev)

	// Refusals name the row at fault, and change nothing.
	for _, c := range []struct {
		rows   []string
		status int
		want   string
	}{
		{[]string{"1", "90", "2", ""}, 400, "Split entry 2 needs a weight"},
		{[]string{"1", "90", "", "10"}, 400, "Split entry 2 has a weight but no version"},
		{[]string{"1", "90", "2", "10001"}, 400, "Split entry 2: the weight must be a whole number from 1 to 10000"},
		{[]string{"1", "90", "2", "ten"}, 400, "Split entry 2: the weight must be a whole number"},
		{[]string{"1", "90"}, 400, "Split must have 2 to 10 entries"},
		{[]string{"1", "90", "", "", "1", "10"}, 400, "Split entry 3: the version names a version named before"},
		{[]string{"1", "90", "9", "10"}, 404, "Split names a version this prompt does not have"},
	} {
		p = b.get(f.url("/promote?split=1"))
		fm := set(formOf(p), c.rows...)
		fm.Set("serve", "split")
		p = b.post(f.url("/promote"), fm)
		is.Equal(p.StatusCode, c.status)
		is.True(strings.Contains(text(p), c.want))                                      // names the row
		is.True(strings.Contains(text(p), "The form has errors; nothing was changed.")) // says so
		is.True(hasField(p, "Entry 1 version"))                                         // the form again
	}
	is.Equal(f.revision(), rev)
	is.Equal(len(f.history()), n)

	// The guard: version 2 adds {{place}}.
	p = b.get(f.url("/promote?split=1"))
	fm := set(formOf(p), "1", "90", "2", "10")
	fm.Set("serve", "split")
	p = b.post(f.url("/promote"), fm)
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "Refused: the variables of a version of the split differ from those active in production"))
	is.True(strings.Contains(text(p), "Added: place"))
	is.True(hasField(p, "Allow variable change"))
	is.Equal(f.revision(), rev)
	fm = set(formOf(p), "1", "90", "2", "10")
	fm.Set("serve", "split")
	fm.Set("allow_variable_change", "1")
	p = b.post(f.url("/promote"), fm)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	s := f.activeSplit(prompts.Production)
	is.Equal(len(s), 2)
	is.Equal([]int{s[0].VersionNumber, s[0].Weight, s[1].VersionNumber, s[1].Weight}, []int{1, 90, 2, 10})
	d := f.history()[0]
	is.Equal(d.Action, prompts.ActionSplit)
	is.Equal(*d.Actor, "deployer")
	is.Equal(*d.Reason, "canary of 2")
	p = b.follow(p)
	is.True(strings.Contains(text(p), "A split is active in production now: versions 1 (90%) and 2 (10%), each to its share of subjects."))

	// The form for an environment that holds a split offers that split.
	p = b.get(f.url("/promote?split=1&environment=production"))
	is.Equal([]string{weightOf(p, 1), weightOf(p, 2), weightOf(p, 3)}, []string{"90", "10", ""})
	fm = set(formOf(p), "1", "90", "2", "10")
	fm.Set("serve", "split")
	p = b.post(f.url("/promote"), fm)
	is.Equal(p.StatusCode, http.StatusSeeOther) // the same split: nothing changes
	is.True(strings.Contains(text(b.follow(p)), "This split was active in production already; nothing changed."))
	is.Equal(len(f.history()), n+1)

	// Rolled back twice: to version 1, then to the split again.
	for _, want := range []string{"Rolled back: version 1 is active in production now.", "Rolled back: versions 1 (90%) and 2 (10%) are active in production now."} {
		fm = formOf(b.get(f.url("/rollback")))
		fm.Set("environment", "production")
		fm.Set("allow_variable_change", "1")
		p = b.post(f.url("/rollback"), fm)
		is.Equal(p.StatusCode, http.StatusSeeOther)
		is.True(strings.Contains(text(b.follow(p)), want))
	}
	is.Equal(len(f.activeSplit(prompts.Production)), 2)
}

// A split is a change like any: a key that may not deploy is refused, a
// deploy key on a protected environment too (admin may), and a stale page
// changes nothing.
func TestPromoteSplitRefusals(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: f.prompt.ID, Content: "Hi {{name}}.\n"})
	is.NoErr(err)
	split := func(fm url.Values) url.Values {
		fm.Set("serve", "split")
		fm.Set("environment", "production")
		fm.Set("split.1.version", "1")
		fm.Set("split.1.weight", "80")
		fm.Set("split.2.version", "3")
		fm.Set("split.2.weight", "20")
		return fm
	}
	rev := f.revision()
	for _, key := range []string{readKey, writeKey} {
		b := f.browser()
		b.signIn(key)
		p := b.post(f.url("/promote"), split(url.Values{"revision": {strconv.FormatInt(rev, 10)}}))
		is.Equal(p.StatusCode, http.StatusForbidden) // needs deploy
	}
	is.Equal(f.revision(), rev)

	_, err = f.store.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: f.alpha.ID, Name: prompts.Production, Protected: true})
	is.NoErr(err)
	b, p := f.open(t, deployKey, "/promote?split=1")
	p = b.post(f.url("/promote"), split(formOf(p)))
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "protected"))
	is.Equal(f.activeSplit(prompts.Production), prompts.Split(nil))

	a, p := f.open(t, adminKey, "/promote?split=1")
	stale := split(formOf(p))
	_, err = f.store.Activate(ctx, prompts.Activation{PromptID: f.prompt.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1), Change: prompts.Change{AllowProtected: true}})
	is.NoErr(err)
	p = a.post(f.url("/promote"), stale)
	is.Equal(p.StatusCode, http.StatusPreconditionFailed) // the page was stale
	is.True(strings.Contains(text(p), "staging: version 1 activated"))
	is.Equal(f.activeSplit(prompts.Production), prompts.Split(nil))
	p = a.post(f.url("/promote"), split(formOf(p)))
	is.Equal(p.StatusCode, http.StatusSeeOther) // admin may
	is.Equal(len(f.activeSplit(prompts.Production)), 2)
}

// The render page takes a subject: it says which version each split
// serves it, and a dotprompt version's partials are read for it.
func TestRenderForASubject(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	tone, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "tone", Name: "Tone"})
	is.NoErr(err)
	for _, c := range []string{"Be kind.", "Be brief."} {
		_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: tone.ID, TemplateFormat: prompts.FormatDotprompt, Content: c})
		is.NoErr(err)
	}
	a, err := e.store.Activate(ctx, prompts.Activation{PromptID: tone.ID, Environment: prompts.Production, Split: prompts.Split{{VersionNumber: 1, Weight: 1}, {VersionNumber: 2, Weight: 1}}})
	is.NoErr(err)
	subjects := map[int]string{}
	for i := 0; len(subjects) < 2; i++ {
		s := "user-" + strconv.Itoa(i)
		if n := a.Split.Entry(tone.ID, prompts.Production, s); subjects[n] == "" {
			subjects[n] = s
		}
	}
	chat, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "chat", Name: "Chat"})
	is.NoErr(err)
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: chat.ID, TemplateFormat: prompts.FormatDotprompt, Content: "{{> tone}} Hi."})
	is.NoErr(err)

	// The partial at the version production's split serves the subject.
	f := &fixture{env: e, prompt: chat}
	b, p := f.open(t, readKey, "/versions/1/render")
	is.True(hasField(p, "Subject"))
	for n, want := range []string{"Be kind. Hi.", "Be brief. Hi."} {
		form := sent(p)
		form.Set("subject", subjects[n])
		r := b.post(f.url("/versions/1/render"), form)
		is.Equal(r.StatusCode, 200)
		is.True(strings.Contains(text(r), want))
		is.True(strings.Contains(r.body, `value="`+subjects[n]+`"`)) // the subject typed is kept
		is.True(strings.Contains(text(r), "No environment holds a split of this prompt"))
	}

	// On the partial's own page, which version each split serves.
	t2 := &fixture{env: e, prompt: tone}
	p = b.get(t2.url("/versions/1/render?subject=" + subjects[1]))
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "production serves “"+subjects[1]+"” version 2"))
	is.Equal(linkTo(p, "version 2"), t2.url("/versions/2/render?subject="+subjects[1]))
	p = b.get(t2.url("/versions/1/render?subject=" + subjects[0]))
	is.True(strings.Contains(text(p), "production serves “"+subjects[0]+"” this version, by its split."))
	form := sent(p)
	form.Set("subject", subjects[1])
	p = b.post(t2.url("/versions/1/render"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Be kind."))                           // the version of the page, whoever the subject
	is.True(strings.Contains(text(p), "serves “"+subjects[1]+"” version 2")) // and what the subject gets
}
