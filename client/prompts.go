package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// CreatePrompt implements prompts.Store: POST /prompts, with an
// Idempotency-Key (in.Idempotency's, or one of the client's own), so that
// it is done once however often it is retried. The answer's ETag gives
// the prompt's revision.
func (c *Client) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.Prompt{}, err
	}
	req := api.NewPrompt{ProjectID: in.ProjectID, Key: in.Key, Name: in.Name}
	if in.Description != nil {
		req.Description = api.Some(*in.Description)
	}
	body, err := encode(req)
	if err != nil {
		return prompts.Prompt{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/prompts", body: body,
		header: writeHeader(idempotencyKey(in.Idempotency), "")})
	if err != nil {
		return prompts.Prompt{}, err
	}
	p, err := decode(res, api.Prompt.Domain)
	if err != nil {
		return prompts.Prompt{}, err
	}
	p.Revision, p.Replayed = revision(res.header), replayed(res.header)
	c.memo.prompt(p)
	c.wrote(p.ID, p.ProjectID)
	return p, nil
}

// GetPrompt implements prompts.Store. The interface has no read of a
// prompt alone: the client reads it in production (as GetActive, whose
// ETag gives the revision, and which needs the prompt list by key for its
// created_at the first time).
func (c *Client) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	if err := beginPrompt(ctx, nil, id); err != nil {
		return prompts.Prompt{}, err
	}
	a, err := c.getActive(ctx, id, prompts.Production, false, readOptions{})
	return a.Prompt, err
}

// UpdatePrompt implements prompts.Store: PATCH /prompts/{id}, with the
// fields given. PATCH sets values, so a repeat after a lost answer
// changes nothing more: it is retried as reads are. The answer's ETag
// gives the prompt's revision, as for CreatePrompt.
func (c *Client) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	if err := beginPrompt(ctx, in.Validate(), id); err != nil {
		return prompts.Prompt{}, err
	}
	body, err := encode(api.FromPromptUpdate(in))
	if err != nil {
		return prompts.Prompt{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPatch, path: promptPath(id), body: body})
	if err != nil {
		return prompts.Prompt{}, err
	}
	p, err := decode(res, api.Prompt.Domain)
	if err != nil {
		return prompts.Prompt{}, err
	}
	p.Revision = revision(res.header)
	c.memo.prompt(p)
	c.wrote(p.ID, p.ProjectID)
	return p, nil
}

// ListPrompts implements prompts.Store: GET /prompts, with project_id for
// one project (f.ProjectIDs of several are applied by the client over the
// whole list) and key. The list's items carry no revision: the client
// reads each prompt (as GetActive in production) for it, up to 8 at a
// time, and answers each as that read saw it, with the list's created_at:
// a page costs one request per prompt more.
func (c *Client) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, prompts.ContextDone(err)
	}
	fetch := func(project string, p prompts.Page) ([]prompts.Prompt, bool, error) {
		var q query
		q.add("project_id", project)
		q.add("key", f.Key)
		q.page(p)
		page, more, err := list(ctx, c, "/prompts", q, nil, api.Prompt.Domain)
		if project != "" && errors.Is(err, prompts.ErrNotFound) {
			return []prompts.Prompt{}, false, nil // an unknown project has none
		}
		return page, more, err
	}
	var (
		page []prompts.Prompt
		more bool
		err  error
	)
	switch len(f.ProjectIDs) {
	case 0:
		if f.ProjectIDs != nil {
			return []prompts.Prompt{}, false, nil
		}
		page, more, err = fetch("", f.Page)
	case 1:
		page, more, err = fetch(f.ProjectIDs[0], f.Page)
	default:
		keep := inSet(f.ProjectIDs)
		page, more, err = filtered(f.Size(), f.After,
			func(after string) ([]prompts.Prompt, bool, error) {
				return fetch("", prompts.Page{Limit: prompts.MaxLimit, After: after})
			},
			func(p prompts.Prompt) bool { return keep(p.ProjectID) },
			func(p prompts.Prompt) string { return p.ID })
	}
	if err != nil {
		return nil, false, err
	}
	for _, p := range page {
		c.memo.prompt(p)
	}
	err = each(len(page), 8, func(i int) error {
		a, err := c.getActive(ctx, page[i].ID, prompts.Production, false, readOptions{})
		if err != nil {
			return err
		}
		page[i] = a.Prompt
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return page, more, nil
}
