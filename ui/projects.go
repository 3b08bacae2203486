package ui

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// maxListed bounds the items a page lists: the prompts of a project are
// read in pages of prompts.MaxLimit, up to this many.
const maxListed = 10 * prompts.MaxLimit

type projectsData struct {
	Projects  []prompts.Project
	Truncated bool
}

// projects is the signed-in index: the projects the key may see.
func (c *call) projects() {
	f := prompts.ProjectFilter{IDs: visible(c.access), Page: prompts.Page{Limit: prompts.MaxLimit}}
	var d projectsData
	for {
		page, more, err := c.h.store.ListProjects(c.r.Context(), f)
		if err != nil {
			c.storeError(err)
			return
		}
		d.Projects = append(d.Projects, page...)
		if !more || len(page) == 0 {
			break
		}
		if len(d.Projects) >= maxListed {
			d.Truncated = true
			break
		}
		f.After = page[len(page)-1].ID
	}
	c.render(http.StatusOK, "projects", c.view("Projects", d))
}

// visible returns the project ids a list is limited to, as
// prompts.ProjectFilter and PromptFilter take them.
func visible(a httpapi.Access) []string {
	if a.AllProjects {
		return nil
	}
	if a.ProjectIDs == nil {
		return []string{}
	}
	return a.ProjectIDs
}

// getProject returns the project, or answers 404 when it is unknown or
// the key may not see it (the same page either way).
func (c *call) getProject(id string) (prompts.Project, bool) {
	if !c.access.Allows(id) {
		c.h.notFound(c.w, c.r, c)
		return prompts.Project{}, false
	}
	p, err := c.h.store.GetProject(c.r.Context(), id)
	if err != nil {
		c.storeError(err)
		return prompts.Project{}, false
	}
	return p, true
}

type projectData struct {
	Project   prompts.Project
	Q         string
	Folders   []folder
	Shown     int
	Total     int
	Truncated bool
}

// folder is the prompts whose keys share everything up to their last
// "/": "support/" holds support/greeting and support/farewell.
type folder struct {
	Name    string // "" for the keys without a "/"
	ID      string // for its heading
	Prompts []prompts.Prompt
}

// project is GET {prefix}projects/{project_id}?q=: the project's prompts,
// grouped by folder, those whose key holds q (ignoring case) when q is
// given.
func (c *call) project() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	q := strings.TrimSpace(c.r.URL.Query().Get("q"))
	d := projectData{Project: p, Q: q}
	f := prompts.PromptFilter{ProjectIDs: []string{p.ID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	var all []prompts.Prompt
	for {
		page, more, err := c.h.store.ListPrompts(c.r.Context(), f)
		if err != nil {
			c.storeError(err)
			return
		}
		all = append(all, page...)
		if !more || len(page) == 0 {
			break
		}
		if len(all) >= maxListed {
			d.Truncated = true
			break
		}
		f.After = page[len(page)-1].ID
	}
	d.Total = len(all)
	lq := strings.ToLower(q)
	byFolder := map[string]*folder{}
	for _, pr := range all {
		if q != "" && !strings.Contains(strings.ToLower(pr.Key), lq) {
			continue
		}
		d.Shown++
		name := ""
		if i := strings.LastIndexByte(pr.Key, '/'); i >= 0 {
			name = pr.Key[:i+1]
		}
		fo := byFolder[name]
		if fo == nil {
			fo = &folder{Name: name}
			byFolder[name] = fo
		}
		fo.Prompts = append(fo.Prompts, pr)
	}
	for _, fo := range byFolder {
		slices.SortFunc(fo.Prompts, func(a, b prompts.Prompt) int { return strings.Compare(a.Key, b.Key) })
		d.Folders = append(d.Folders, *fo)
	}
	slices.SortFunc(d.Folders, func(a, b folder) int { return strings.Compare(a.Name, b.Name) })
	for i := range d.Folders {
		d.Folders[i].ID = "folder-" + strconv.Itoa(i+1)
	}
	title := p.Name
	if q != "" {
		title = p.Name + ": prompts with “" + q + "” in their key"
	}
	c.render(http.StatusOK, "project", c.view(title, d, crumb{Name: "Projects", URL: c.h.prefix}, crumb{Name: p.Name}))
}
