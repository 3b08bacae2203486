package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// CreateVersion implements prompts.Store: POST /prompts/{id}/versions,
// with an Idempotency-Key (in.Idempotency's, or one of the client's own),
// so that it is done once however often it is retried. The answer's body
// holds no change summary, template format, variables or partials: the
// version has the ones asked for, and those of its content and metadata_
// (prompts.VersionSignature, prompts.TemplatePartials),
// as the server computed them; the template format, which a version
// naming none takes from the prompt's latest version, from the answer's
// Template-Format header. in.Actor is not sent: the server records the API key's
// name as the actor of the deployments.
func (c *Client) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	if err := beginPrompt(ctx, in.Validate(), in.PromptID); err != nil {
		return prompts.PromptVersion{}, err
	}
	body, err := encode(api.FromNewVersion(in))
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: promptPath(in.PromptID) + "/versions", body: body,
		header: writeHeader(idempotencyKey(in.Idempotency), "")})
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	v, err := decode(res, api.Version.Domain)
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	if in.ChangeSummary != nil {
		s := *in.ChangeSummary
		v.ChangeSummary = &s
	}
	// The server names the format in a header (the body's fields are
	// fixed); a server that does not knows plain only.
	v.TemplateFormat = prompts.TemplateFormat(res.header.Get("Template-Format")).Or(in.TemplateFormat).Or(prompts.FormatPlain)
	sig, err := prompts.VersionSignature(v.TemplateFormat, v.Content, v.Metadata)
	if err != nil {
		return prompts.PromptVersion{}, err // the server stored it: cannot happen
	}
	v.Variables = sig.Variables
	if v.Partials, err = prompts.TemplatePartials(v.TemplateFormat, v.Content); err != nil {
		return prompts.PromptVersion{}, err // as above
	}
	v.Replayed = replayed(res.header)
	c.memo.version(v)
	c.wrote(v.PromptID, "")
	return v, nil
}

// GetVersion implements prompts.Store: GET
// /prompts/{id}/versions/{number}.
func (c *Client) GetVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	if err := beginPrompt(ctx, nil, promptID); err != nil {
		return prompts.PromptVersion{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodGet, path: promptPath(promptID) + "/versions/" + strconv.Itoa(number)})
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	v, err := decode(res, api.VersionDetail.Domain)
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	c.memo.version(v)
	return v, nil
}

// ListVersions implements prompts.Store: GET /prompts/{id}/versions.
func (c *Client) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	if err := beginPrompt(ctx, p.Validate(), promptID); err != nil {
		return nil, false, err
	}
	var q query
	q.page(p)
	page, more, err := list(ctx, c, promptPath(promptID)+"/versions", q, nil, api.VersionDetail.Domain)
	for _, v := range page {
		c.memo.version(v)
	}
	return page, more, err
}
