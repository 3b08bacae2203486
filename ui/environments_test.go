package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A project's environments page lists them; an admin key adds, protects
// and removes them there; the prompt's pickers offer the project's
// environments; a protected one changes only by an admin key.
func TestProjectEnvironmentsPage(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	ctx := context.Background()
	envs := f.prefix + "projects/" + f.alpha.ID + "/environments"

	dep := f.browser()
	dep.signIn(deployKey)
	p := dep.get(f.prefix + "projects/" + f.alpha.ID)
	is.True(hasLink(p, "Environments")) // from the project's page
	p = dep.get(envs)
	is.Equal(p.StatusCode, http.StatusOK)
	is.True(strings.Contains(text(p), "production") && strings.Contains(text(p), "staging"))
	is.True(!hasButton(p, "Add")) // not offered below admin
	form := formOf(p)
	form.Set("name", "canary")
	is.Equal(dep.post(envs, form).StatusCode, http.StatusForbidden) // and refused when forged

	adm := f.browser()
	adm.signIn(adminKey)
	p = adm.get(envs)
	is.True(hasField(p, "Name"))
	is.True(hasField(p, "Protected"))
	is.True(hasButton(p, "Add"))
	form = formOf(p)
	form.Set("name", "Canary")
	p = adm.post(envs, form)
	is.Equal(p.StatusCode, http.StatusBadRequest) // a malformed name, said
	is.True(strings.Contains(text(p), "Name must be 1 to 32 lower-case"))
	form.Set("name", "canary")
	form.Set("protected", "1")
	p = adm.post(envs, form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	p = adm.follow(p)
	is.True(strings.Contains(text(p), "Environment canary is protected"))
	l, err := f.store.ListEnvironments(ctx, f.alpha.ID)
	is.NoErr(err)
	is.Equal(len(l), 3)
	is.True(l[2].Protected)

	// The prompt's pickers offer it; a deploy key may not promote there.
	p = dep.get(f.url("/promote"))
	is.True(strings.Contains(p.body, `<option value="canary"`))
	form = formOf(p)
	form.Set("version", "1")
	form.Set("environment", "canary")
	p = dep.post(f.url("/promote"), form)
	is.Equal(p.StatusCode, http.StatusForbidden)
	is.True(strings.Contains(text(p), "needs the role admin"))
	is.Equal(f.active("canary"), 0) // nothing changed
	p = adm.get(f.url("/promote"))
	form = formOf(p)
	form.Set("version", "1")
	form.Set("environment", "canary")
	is.Equal(adm.post(f.url("/promote"), form).StatusCode, http.StatusSeeOther)
	is.Equal(f.active("canary"), 1)
	p = adm.get(f.url(""))
	is.True(strings.Contains(text(p), "canary (protected)"))

	// Removing it is refused while a version is active there.
	remove := envs + "/canary/remove"
	p = adm.get(envs)
	is.True(hasButton(p, `Remove<span class="vh"> canary</span>`))
	form = formOf(p)
	p = adm.post(remove, form)
	is.Equal(p.StatusCode, http.StatusConflict)
	is.True(strings.Contains(text(p), "deactivate it first"))
	_, err = f.store.Deactivate(ctx, prompts.Deactivation{PromptID: f.prompt.ID, Environment: "canary", Change: prompts.Change{AllowProtected: true}})
	is.NoErr(err)
	is.Equal(dep.post(remove, form).StatusCode, http.StatusForbidden) // a deploy key may not
	p = adm.post(remove, form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	l, err = f.store.ListEnvironments(ctx, f.alpha.ID)
	is.NoErr(err)
	is.Equal(len(l), 2)                                                                 // gone
	is.Equal(adm.post(envs+"/production/remove", form).StatusCode, http.StatusConflict) // built in
}
