package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// GetActive implements prompts.Store: GET /prompts/{id}?environment=,
// whose ETag gives the revision. Its body holds neither the prompt's
// created_at nor the active version's change summary and variables: the
// client reads them (from the prompt list by key, and GET
// /prompts/{id}/versions/{number}) the first time it sees the prompt and
// the version, and remembers them, since they never change. Of an
// environment that holds a split, the body holds the split and its first
// entry's version: the client reads the other entries' versions by
// number the first time it sees them, and keeps them (see the package
// doc, "Splits").
func (c *Client) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, _, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: promptID, Environment: env})
	return a, err
}

var _ prompts.ActiveReader = (*Client)(nil)

// ReadActive implements prompts.ActiveReader: GetActive, or
// GetActiveByKey when q.PromptID is empty. With q.Fresh the server is
// asked for an answer from its store, not from its cache
// (Cache-Control: no-cache); with q.FailFast the read's request is tried
// once, without the retries of the RetryPolicy. Shared changes nothing:
// every answer is the caller's own. An answer is never stale. With
// q.Subject, the client picks the version of a split itself, from the
// split and its versions (prompts.ActivePrompt.Pick): the request names
// no subject.
func (c *Client) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	o := readOptions{fresh: q.Fresh, once: q.FailFast}
	if q.PromptID == "" {
		a, err := c.getActiveByKey(ctx, q.ProjectID, q.Key, q.Environment, o)
		return a.Pick(q.Subject), false, err
	}
	if err := beginPrompt(ctx, q.Environment.Validate(), q.PromptID); err != nil {
		return prompts.ActivePrompt{}, false, err
	}
	a, err := c.getActive(ctx, q.PromptID, q.Environment, true, o)
	return a.Pick(q.Subject), false, err
}

// readOptions are a read's options (prompts.ActiveQuery): fresh asks
// the server for an answer from its store; once tries the read's request
// once.
type readOptions struct{ fresh, once bool }

// getActive reads the prompt in env, completed (see complete).
func (c *Client) getActive(ctx context.Context, promptID string, env prompts.Environment, withVersion bool, o readOptions) (prompts.ActivePrompt, error) {
	var q query
	q.add("environment", string(env))
	return c.read(ctx, request{method: http.MethodGet, path: promptPath(promptID), query: q.String(),
		header: header(o.fresh || c.fresh.prompt(promptID)), once: o.once}, env, withVersion)
}

// GetActiveByKey implements prompts.Store: GET
// /projects/{project_id}/prompts/{key}?environment=, as GetActive.
func (c *Client) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, _, err := c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: key, Environment: env})
	return a, err
}

// getActiveByKey is GetActiveByKey, with a read's options.
func (c *Client) getActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment, o readOptions) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := ctx.Err(); err != nil {
		return prompts.ActivePrompt{}, prompts.ContextDone(err)
	}
	if !prompts.ValidID(projectID) {
		return prompts.ActivePrompt{}, prompts.NotFound("project")
	}
	if key == "" {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	path, ok := keyPath(key)
	if !ok {
		return c.getActiveByListedKey(ctx, projectID, key, env, o)
	}
	var q query
	q.add("environment", string(env))
	return c.read(ctx, request{method: http.MethodGet, path: "/projects/" + url.PathEscape(projectID) + "/prompts/" + path,
		query: q.String(), header: header(o.fresh || c.fresh.byKey(projectID)), once: o.once}, env, true)
}

// getActiveByListedKey is GetActiveByKey for a key that no path can hold
// (see keyPath): the prompt is found in the prompt list by key, then read
// by id.
func (c *Client) getActiveByListedKey(ctx context.Context, projectID, key string, env prompts.Environment, o readOptions) (prompts.ActivePrompt, error) {
	for range 3 { // a rename between the two reads makes the second miss
		var q query
		q.add("project_id", projectID)
		q.add("key", key)
		found, _, err := list(ctx, c, "/prompts", q, nil, api.Prompt.Domain)
		switch {
		case errors.Is(err, prompts.ErrNotFound):
			return prompts.ActivePrompt{}, prompts.NotFound("project")
		case err != nil:
			return prompts.ActivePrompt{}, err
		case len(found) == 0:
			return prompts.ActivePrompt{}, prompts.NotFound("prompt")
		}
		c.memo.prompt(found[0])
		a, err := c.getActive(ctx, found[0].ID, env, true, o)
		if err != nil || a.Key == key {
			return a, err
		}
	}
	return prompts.ActivePrompt{}, prompts.Internal(errors.New("client: the prompt's key kept changing while it was read"))
}

// read makes r, a read of a prompt in env, and completes its answer. A
// prompt renamed between its read and the read of its created_at is read
// again.
func (c *Client) read(ctx context.Context, r request, env prompts.Environment, withVersion bool) (prompts.ActivePrompt, error) {
	for range 3 {
		res, err := c.do(ctx, r)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		a, ok, err := c.active(ctx, res, env, withVersion)
		if err != nil || ok {
			return a, err
		}
	}
	return prompts.ActivePrompt{}, prompts.Internal(errors.New("client: the prompt's key kept changing while it was read"))
}

// active decodes an answer shaped as a read of a prompt in env, with the
// revision from its ETag, and completes it (see complete); ok is false
// when the prompt was renamed before its created_at could be read.
func (c *Client) active(ctx context.Context, res *response, env prompts.Environment, withVersion bool) (a prompts.ActivePrompt, ok bool, err error) {
	if a, err = decodeActive(res, env); err != nil {
		return prompts.ActivePrompt{}, false, err
	}
	a.Revision = revision(res.header)
	a.Replayed = replayed(res.header)
	ok, err = c.complete(ctx, &a, withVersion)
	return a, ok, err
}

// complete fills what a read of a prompt in an environment does not send:
// the prompt's created_at, and the active version's change summary and
// variables when withVersion, from the memo or else from the server; and
// with it, of a split, the versions of its entries (splitVersions). ok
// is false when the prompt has another key now than in a.
func (c *Client) complete(ctx context.Context, a *prompts.ActivePrompt, withVersion bool) (ok bool, err error) {
	if !c.memo.fillPrompt(&a.Prompt) {
		var q query
		q.add("project_id", a.ProjectID)
		q.add("key", a.Key)
		found, _, err := list(ctx, c, "/prompts", q, nil, api.Prompt.Domain)
		if err != nil {
			return false, err
		}
		if len(found) != 1 || found[0].ID != a.ID {
			return false, nil
		}
		a.CreatedAt = found[0].CreatedAt
		c.memo.prompt(found[0])
	}
	if withVersion && a.ActiveVersion != nil && !c.memo.fillVersion(a.ActiveVersion) {
		v, err := c.GetVersion(ctx, a.ID, a.ActiveVersion.VersionNumber)
		if err != nil {
			return false, err
		}
		a.ActiveVersion.ChangeSummary, a.ActiveVersion.Variables = v.ChangeSummary, v.Variables
		a.ActiveVersion.TemplateFormat, a.ActiveVersion.Partials = v.TemplateFormat, v.Partials
	}
	if withVersion && a.Split != nil {
		return true, c.splitVersions(ctx, a)
	}
	return true, nil
}

// splitVersions fills a.SplitVersions, the versions of a's split, and
// points a.ActiveVersion at the one the answer served: the answer's own
// version (completed), the versions kept whole, and the others read by
// number (GET /prompts/{id}/versions/{number}) and kept, since versions
// never change.
func (c *Client) splitVersions(ctx context.Context, a *prompts.ActivePrompt) error {
	vs := make([]prompts.PromptVersion, len(a.Split))
	served := -1
	for i, e := range a.Split {
		switch v, ok := c.memo.wholeOf(e.VersionID); {
		case a.ActiveVersion != nil && e.VersionID == a.ActiveVersion.ID:
			vs[i], served = *a.ActiveVersion, i
			c.memo.wholeVersion(vs[i])
		case ok:
			vs[i] = v
		default:
			v, err := c.GetVersion(ctx, a.ID, e.VersionNumber)
			if err != nil {
				return err
			}
			if v.ID != e.VersionID {
				return prompts.Internal(errors.New("client: version " + strconv.Itoa(e.VersionNumber) + " of the split is " + v.ID + ", not " + e.VersionID))
			}
			c.memo.wholeVersion(v)
			vs[i] = v
		}
	}
	a.SplitVersions = vs
	if served >= 0 {
		a.ActiveVersion = &vs[served]
	}
	return nil
}

// changed completes the answer to a change of env (PUT, rollback): as a
// read answers it; if the prompt was renamed meanwhile, by a read of it
// now.
func (c *Client) changed(ctx context.Context, res *response, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, err := decodeActive(res, env)
	if err != nil {
		c.wrote(promptID, "")
		return a, err
	}
	c.wrote(promptID, a.ProjectID)
	a, ok, err := c.active(ctx, res, env, true)
	if err != nil || ok {
		return a, err
	}
	return c.getActive(ctx, promptID, env, true, readOptions{})
}

// Activate implements prompts.Store: PUT
// /prompts/{id}/environments/{env} with the version, or the split
// (in.Split), and If-Match when in.IfRevision is set. in.Actor is not
// sent: the server records the API key's name as the actor.
func (c *Client) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := beginPrompt(ctx, in.Validate(), in.PromptID); err != nil {
		return prompts.ActivePrompt{}, err
	}
	req := api.Activation{AllowVariableChange: in.AllowVariableChange, AllowMissingPartials: in.AllowMissingPartials}
	switch {
	case in.Split != nil:
		req.Split = api.FromSplitRequest(in.Split)
	case in.VersionID.HasValue():
		req.VersionID = api.Some(in.VersionID.Value)
	default:
		req.VersionNumber = api.VersionNumber(api.Some(in.VersionNumber.Value))
	}
	if in.Reason != "" {
		req.Reason = api.Some(in.Reason)
	}
	body, err := encode(req)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPut, path: envPath(in.PromptID, in.Environment), body: body,
		header: writeHeader("", ifMatch(in.PromptID, in.Environment, in.IfRevision))})
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	return c.changed(ctx, res, in.PromptID, in.Environment)
}

// Deactivate implements prompts.Store: DELETE
// /prompts/{id}/environments/{env}, with If-Match when in.IfRevision is
// set. Its answer has no body: the client then reads the prompt in the
// environment (from the server's store), so the answer may show a change
// made after this one. in.Actor is not sent.
func (c *Client) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	if err := beginPrompt(ctx, in.Validate(), in.PromptID); err != nil {
		return prompts.ActivePrompt{}, err
	}
	var q query
	q.add("reason", in.Reason)
	if in.Force {
		q.add("force", "true")
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: envPath(in.PromptID, in.Environment), query: q.String(),
		header: writeHeader("", ifMatch(in.PromptID, in.Environment, in.IfRevision))})
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	c.wrote(in.PromptID, "")
	return c.getActive(ctx, in.PromptID, in.Environment, true, readOptions{})
}

// Rollback implements prompts.Store: POST
// /prompts/{id}/environments/{env}/rollback, with an Idempotency-Key
// (in.Idempotency's, or one of the client's own: a rollback done twice
// would undo itself) and If-Match when in.IfRevision is set. in.Actor is
// not sent.
func (c *Client) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	if err := beginPrompt(ctx, in.Validate(), in.PromptID); err != nil {
		return prompts.ActivePrompt{}, err
	}
	req := api.Rollback{AllowVariableChange: in.AllowVariableChange, AllowMissingPartials: in.AllowMissingPartials}
	if in.Reason != "" {
		req.Reason = api.Some(in.Reason)
	}
	body, err := encode(req)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: envPath(in.PromptID, in.Environment) + "/rollback", body: body,
		header: writeHeader(idempotencyKey(in.Idempotency), ifMatch(in.PromptID, in.Environment, in.IfRevision))})
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	return c.changed(ctx, res, in.PromptID, in.Environment)
}

// ListDeployments implements prompts.Store: GET
// /prompts/{id}/deployments. Over HTTP a record's actor is the name of the
// API key that made the change.
func (c *Client) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	if err := beginPrompt(ctx, f.Validate(), f.PromptID); err != nil {
		return nil, false, err
	}
	var q query
	q.add("environment", string(f.Environment))
	q.page(f.Page)
	return list(ctx, c, promptPath(f.PromptID)+"/deployments", q, nil, api.Deployment.Domain)
}

// decodeActive decodes an answer shaped as a read of a prompt in env.
func decodeActive(res *response, env prompts.Environment) (prompts.ActivePrompt, error) {
	return decode(res, func(a api.ActivePrompt) prompts.ActivePrompt { return a.Domain(env) })
}
