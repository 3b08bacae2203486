package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/promptkit/prompts"
)

// ----- a project's environments -----

type environmentsData struct {
	Project   prompts.Project
	Envs      []prompts.ProjectEnvironment
	Name      string // the add form's
	Protected bool
	Errors    map[string]string
	Refused   string // a refused removal or change, said as is
}

// environments is GET {prefix}projects/{project_id}/environments: the
// project's environments; an admin key may add, protect and remove them.
func (c *call) environments() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	c.environmentsPage(http.StatusOK, environmentsData{Project: p})
}

// environmentsPage renders the page with the project's list as it is now.
func (c *call) environmentsPage(status int, d environmentsData) {
	l, err := c.h.store.ListEnvironments(c.r.Context(), d.Project.ID)
	if err != nil {
		c.storeError(err)
		return
	}
	d.Envs = l
	c.render(status, "environments", c.view("Environments of "+d.Project.Name, d,
		crumb{Name: "Projects", URL: c.h.prefix}, crumb{Name: d.Project.Name, URL: c.h.prefix + "projects/" + d.Project.ID}, crumb{Name: "Environments"}))
}

// putEnvironment is POST {prefix}projects/{project_id}/environments: add
// the environment named, or set its protection (the checkbox Protected).
func (c *call) putEnvironment() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	d := environmentsData{Project: p, Name: strings.TrimSpace(c.form("name")), Protected: c.r.PostForm.Get("protected") != ""}
	e, err := c.h.store.PutEnvironment(c.r.Context(), prompts.NewEnvironment{ProjectID: p.ID, Name: prompts.Environment(d.Name), Protected: d.Protected, Actor: c.access.Name})
	if fe, ok := fieldErrors(err); ok {
		d.Errors = fe
		c.environmentsPage(http.StatusBadRequest, d)
		return
	}
	if err != nil {
		c.storeError(err)
		return
	}
	if e.Protected {
		c.flash("Environment " + string(e.Name) + " is protected: only an admin key may change what it points at.")
	} else {
		c.flash("Environment " + string(e.Name) + " is unprotected.")
	}
	c.redirect("projects/" + url.PathEscape(p.ID) + "/environments")
}

// removeEnvironment is POST
// {prefix}projects/{project_id}/environments/{name}/remove.
func (c *call) removeEnvironment() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	name := prompts.Environment(c.r.PathValue("name"))
	err := c.h.store.DeleteEnvironment(c.r.Context(), p.ID, name)
	if code := prompts.ErrorCode(err); code == prompts.CodeConflict {
		var pe *prompts.Error
		errors.As(err, &pe)
		c.environmentsPage(http.StatusConflict, environmentsData{Project: p, Refused: pe.Message})
		return
	}
	if err != nil {
		c.storeError(err)
		return
	}
	c.flash("Environment " + string(name) + " removed.")
	c.redirect("projects/" + url.PathEscape(p.ID) + "/environments")
}
