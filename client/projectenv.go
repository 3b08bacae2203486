package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// A project's environments, over GET, PUT and DELETE
// /projects/{project_id}/environments[/{name}]. PUT and DELETE need an
// admin key. Whether a change may touch a protected environment is the
// server's to say, by the key's role (admin):
// prompts.Change.AllowProtected and prompts.NewVersion.AllowProtected are
// not sent, and a key of a lesser role gets prompts.CodeForbidden.

// PutEnvironment implements prompts.Store: PUT
// /projects/{id}/environments/{name} with {"protected": …}. in.Actor is
// not sent.
func (c *Client) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	if err := in.Validate(); err != nil {
		return prompts.ProjectEnvironment{}, err
	}
	if err := ctx.Err(); err != nil {
		return prompts.ProjectEnvironment{}, prompts.ContextDone(err)
	}
	if !prompts.ValidID(in.ProjectID) {
		return prompts.ProjectEnvironment{}, prompts.NotFound("project")
	}
	body, err := encode(api.PutEnvironment{Protected: in.Protected})
	if err != nil {
		return prompts.ProjectEnvironment{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPut, path: projectEnvPath(in.ProjectID, in.Name), body: body})
	if err != nil {
		return prompts.ProjectEnvironment{}, err
	}
	return decode(res, api.Environment.Domain)
}

// ListEnvironments implements prompts.Store: GET
// /projects/{id}/environments.
func (c *Client) ListEnvironments(ctx context.Context, projectID string) ([]prompts.ProjectEnvironment, error) {
	if err := ctx.Err(); err != nil {
		return nil, prompts.ContextDone(err)
	}
	if !prompts.ValidID(projectID) {
		return nil, prompts.NotFound("project")
	}
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/projects/" + url.PathEscape(projectID) + "/environments"})
	if err != nil {
		return nil, err
	}
	return decode(res, func(l []api.Environment) []prompts.ProjectEnvironment {
		out := make([]prompts.ProjectEnvironment, len(l))
		for i, e := range l {
			out[i] = e.Domain()
		}
		return out
	})
}

// DeleteEnvironment implements prompts.Store: DELETE
// /projects/{id}/environments/{name}.
func (c *Client) DeleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	if err := name.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	if !prompts.ValidID(projectID) {
		return prompts.NotFound("project")
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: projectEnvPath(projectID, name)})
	return err
}

func projectEnvPath(projectID string, name prompts.Environment) string {
	return "/projects/" + url.PathEscape(projectID) + "/environments/" + url.PathEscape(string(name))
}
