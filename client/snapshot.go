package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// ParseSnapshot reads a project's snapshot, as GET
// /v1/integration/projects/{project_id}/snapshot answers it and `prompts
// snapshot` writes it, for cache.WithFallback: an application embeds the
// file (go:embed) and starts and serves even when the server cannot be
// reached. It is cache.ParseSnapshot.
func ParseSnapshot(data []byte) (*cache.Snapshot, error) { return cache.ParseSnapshot(data) }

// Snapshot takes a snapshot of a project on the server: GET
// /projects/{id}/snapshot, read with ParseSnapshot. Its MarshalJSON is
// the file an application embeds. An unknown project, or one the key may
// not see, is prompts.ErrNotFound.
func (c *Client) Snapshot(ctx context.Context, projectID string) (*cache.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, prompts.ContextDone(err)
	}
	if !prompts.ValidID(projectID) {
		return nil, prompts.NotFound("project")
	}
	res, err := c.do(ctx, request{method: http.MethodGet, path: "/projects/" + url.PathEscape(projectID) + "/snapshot"})
	if err != nil {
		return nil, err
	}
	s, err := cache.ParseSnapshot(res.body)
	if err != nil {
		return nil, prompts.Internal(err)
	}
	return s, nil
}
