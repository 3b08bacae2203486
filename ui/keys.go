package ui

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// The API keys page, for admin keys: the keys the signed-in key may see
// (those of the server's configuration, read-only, and those its store
// keeps), a form that creates a key and shows its secret once, in the
// answer to the form, and a button that revokes a kept key. The rules
// are the HTTP interface's: a key of some projects sees, creates and
// revokes keys of its projects only, and creates none above its own role
// (the Store checks that, prompts.Grant).

// CanAdmin tells templates whether to offer what needs an admin key:
// the keys page, and adding, protecting and removing environments.
func (v view) CanAdmin() bool { return v.User != nil && allows(v.User.Role, httpapi.RoleAdmin) }

type keyRow struct {
	ID, Name, Role, Projects, Source string
	Expires, LastUsed                time.Time // zero: never
}

type keysData struct {
	Keys     []keyRow
	Roles    []prompts.KeyRole
	Projects []prompts.Project // those the key may give a new key
	Created  *keyRow           // the key just created, with Secret
	Secret   string
	Name     string // the form's values, after a refusal
	Role     string
	Error    string
}

// keyStore returns the store's keys, or answers 404 when it keeps none.
func (c *call) keyStore() (prompts.KeyStore, bool) {
	ks, ok := prompts.KeyStoreOf(c.h.store)
	if !ok {
		c.h.notFound(c.w, c.r, c)
	}
	return ks, ok
}

// grant is what the signed-in key may do, as the Store checks it.
func (c *call) grant() prompts.Grant {
	g := prompts.Grant{Role: prompts.KeyRole(c.access.Role.String())}
	if !c.access.AllProjects {
		g.ProjectIDs = append([]string{}, c.access.ProjectIDs...)
	}
	return g
}

// keys is GET {prefix}keys.
func (c *call) keys() {
	c.keysPage(http.StatusOK, keysData{Role: string(prompts.KeyRead)})
}

// keysPage renders the page with the keys as they are now.
func (c *call) keysPage(status int, d keysData) {
	ks, ok := c.keyStore()
	if !ok {
		return
	}
	g := c.grant()
	if l, ok := c.h.auth.(interface{ ConfiguredKeys() []httpapi.Access }); ok {
		for _, a := range l.ConfiguredKeys() {
			var projects []string
			if !a.AllProjects {
				projects = a.ProjectIDs
			}
			if g.Covers(projects) {
				d.Keys = append(d.Keys, keyRow{Name: a.Name, Role: a.Role.String(), Projects: c.projectNames(projects), Source: "configuration"})
			}
		}
	}
	f := prompts.KeyFilter{Page: prompts.Page{Limit: prompts.MaxLimit}, Within: g.ProjectIDs}
	for len(d.Keys) < maxListed {
		page, more, err := ks.ListKeys(c.r.Context(), f)
		if err != nil {
			c.storeError(err)
			return
		}
		for _, k := range page {
			d.Keys = append(d.Keys, rowOf(k, c.projectNames(k.ProjectIDs)))
		}
		if !more || len(page) == 0 {
			break
		}
		f.After = page[len(page)-1].ID
	}
	for _, r := range prompts.KeyRoles {
		if g.Role.Rank() >= r.Rank() {
			d.Roles = append(d.Roles, r)
		}
	}
	pf := prompts.ProjectFilter{IDs: visible(c.access), Page: prompts.Page{Limit: prompts.MaxLimit}}
	if page, _, err := c.h.store.ListProjects(c.r.Context(), pf); err == nil {
		d.Projects = page
	}
	c.render(status, "keys", c.view("API keys", d, crumb{Name: "Projects", URL: c.h.prefix}, crumb{Name: "API keys"}))
}

func rowOf(k prompts.APIKey, projects string) keyRow {
	r := keyRow{ID: k.ID, Name: k.Name, Role: string(k.Role), Projects: projects, Source: "store"}
	if k.ExpiresAt != nil {
		r.Expires = *k.ExpiresAt
	}
	if k.LastUsedAt != nil {
		r.LastUsed = *k.LastUsedAt
	}
	return r
}

// projectNames names the projects of ids ("every project" for nil).
func (c *call) projectNames(ids []string) string {
	if ids == nil {
		return "every project"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id
		if p, err := c.h.store.GetProject(c.r.Context(), id); err == nil {
			names[i] = p.Slug
		}
	}
	return strings.Join(names, ", ")
}

// createKey is POST {prefix}keys: the answer shows the new key's secret,
// once (the page is not kept: Cache-Control no-store).
func (c *call) createKey() {
	ks, ok := c.keyStore()
	if !ok {
		return
	}
	form := c.r.PostForm
	d := keysData{Name: form.Get("name"), Role: form.Get("role")}
	in := prompts.NewAPIKey{Name: d.Name, Role: prompts.KeyRole(d.Role), Creator: c.grant()}
	// One checkbox per project, named project.ID: a form field is given
	// once (fieldsOK).
	var ps []string
	for name := range form {
		if id, ok := strings.CutPrefix(name, "project."); ok {
			ps = append(ps, id)
		}
	}
	slices.Sort(ps)
	if len(ps) > 0 {
		for _, p := range ps {
			if !c.access.Allows(p) {
				c.h.notFound(c.w, c.r, c)
				return
			}
		}
		in.ProjectIDs = ps
	} else {
		in.ProjectIDs = in.Creator.ProjectIDs
	}
	if days := form.Get("expires_days"); days != "" {
		n, ok := parseDays(days)
		if !ok {
			d.Error = "Expires: a number of days from 1 to 3650, or empty for never."
			c.keysPage(http.StatusBadRequest, d)
			return
		}
		at := time.Now().Add(time.Duration(n) * 24 * time.Hour)
		in.ExpiresAt = &at
	}
	if l, ok := c.h.auth.(interface{ ConfiguredKeys() []httpapi.Access }); ok {
		for _, a := range l.ConfiguredKeys() {
			if a.Name == in.Name {
				d.Error = "A key of the server's configuration is named " + in.Name + ": choose another name."
				c.keysPage(http.StatusConflict, d)
				return
			}
		}
	}
	k, secret, err := ks.CreateKey(c.r.Context(), in)
	if err != nil {
		var status int
		switch prompts.ErrorCode(err) {
		case prompts.CodeInvalid:
			status = http.StatusBadRequest
		case prompts.CodeConflict:
			status = http.StatusConflict
		case prompts.CodeForbidden:
			status = http.StatusForbidden
		default:
			c.storeError(err)
			return
		}
		d.Error = describeKeyError(err)
		c.keysPage(status, d)
		return
	}
	row := rowOf(k, c.projectNames(k.ProjectIDs))
	c.keysPage(http.StatusOK, keysData{Created: &row, Secret: secret, Role: string(prompts.KeyRead)})
}

// describeKeyError says what was wrong with a new key.
func describeKeyError(err error) string {
	pe, _ := err.(*prompts.Error)
	if pe == nil {
		return "The key was refused."
	}
	if len(pe.Fields) == 0 {
		return pe.Message + "."
	}
	var parts []string
	for _, f := range pe.Fields {
		parts = append(parts, f.Field+": "+f.Detail)
	}
	return "Nothing was created: " + strings.Join(parts, "; ") + "."
}

func parseDays(s string) (int, bool) {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 3650 {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, n >= 1 && n <= 3650
}

// revokeKey is POST {prefix}keys/{key_id}/revoke.
func (c *call) revokeKey() {
	ks, ok := c.keyStore()
	if !ok {
		return
	}
	id := c.r.PathValue("key_id")
	k, err := ks.RevokeKey(c.r.Context(), prompts.KeyRevocation{ID: id, Revoker: c.grant()})
	if err != nil {
		if prompts.ErrorCode(err) == prompts.CodeForbidden {
			c.fail(http.StatusForbidden, errorData{Title: "Refused", Message: "This key may revoke only keys it could create: of its projects, and of a role not above its own. Nothing was changed."})
			return
		}
		c.storeError(err)
		return
	}
	if f, ok := c.h.auth.(interface{ Forget(string) }); ok {
		f.Forget(id)
	}
	c.flash("Key " + k.Name + " revoked: it is refused from now on.")
	c.redirect("keys")
}
