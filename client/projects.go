package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// CreateProject implements prompts.Store: POST /projects, which needs an
// admin key. It takes no Idempotency-Key, so it is retried only when no
// connection could be made (see RetryPolicy).
func (c *Client) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	if err := in.Validate(); err != nil {
		return prompts.Project{}, err
	}
	req := api.NewProject{Name: in.Name, Description: api.Some(in.Description), IsPrivate: in.IsPrivate}
	if in.Slug != "" {
		req.Slug = api.Some(in.Slug)
	}
	body, err := encode(req)
	if err != nil {
		return prompts.Project{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/projects", body: body, mode: retryUnsent})
	if err != nil {
		return prompts.Project{}, err
	}
	return decode(res, api.Project.Domain)
}

// GetProject implements prompts.Store: GET /projects/{id}.
func (c *Client) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	if err := ctx.Err(); err != nil {
		return prompts.Project{}, prompts.ContextDone(err)
	}
	if !prompts.ValidID(id) {
		return prompts.Project{}, prompts.NotFound("project")
	}
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/projects/" + url.PathEscape(id)})
	if err != nil {
		return prompts.Project{}, err
	}
	return decode(res, api.Project.Domain)
}

// ListProjects implements prompts.Store: GET /projects, the projects the
// API key may see. f.IDs, which the interface does not take, is applied
// by the client over the whole list.
func (c *Client) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, prompts.ContextDone(err)
	}
	fetch := func(p prompts.Page) ([]prompts.Project, bool, error) {
		var q query
		q.page(p)
		return list(ctx, c, "/projects", q, nil, api.Project.Domain)
	}
	if f.IDs == nil {
		return fetch(f.Page)
	}
	keep := inSet(f.IDs)
	return filtered(f.Size(), f.After,
		func(after string) ([]prompts.Project, bool, error) {
			return fetch(prompts.Page{Limit: prompts.MaxLimit, After: after})
		},
		func(p prompts.Project) bool { return keep(p.ID) },
		func(p prompts.Project) string { return p.ID })
}
