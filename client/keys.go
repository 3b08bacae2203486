package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// The API keys of the server's store, over /keys (an admin key): a
// Client is a prompts.KeyManager, not a prompts.KeyStore, since only the
// server finds the key of a secret. The server checks the grant of the
// key the client sends, and records it as the actor; the client checks
// in.Creator and in.Revoker too, refusing before sending what they may
// not do.

var _ prompts.KeyManager = (*Client)(nil)

// CreateKey implements prompts.KeyManager: POST /keys. The secret is in
// the answer only. It is retried only when no connection could be made:
// a create repeated would make a second key, or conflict.
func (c *Client) CreateKey(ctx context.Context, in prompts.NewAPIKey) (prompts.APIKey, string, error) {
	if err := in.Validate(); err != nil {
		return prompts.APIKey{}, "", err
	}
	if err := in.CheckGrant(); err != nil {
		return prompts.APIKey{}, "", err
	}
	body, err := encode(api.NewKey{Name: in.Name, Role: string(in.Role), ProjectIDs: in.ProjectIDs, ExpiresAt: in.ExpiresAt})
	if err != nil {
		return prompts.APIKey{}, "", err
	}
	res, err := c.do(ctx, request{method: http.MethodPost, path: "/keys", body: body, mode: retryUnsent})
	if err != nil {
		return prompts.APIKey{}, "", err
	}
	var secret string
	k, err := decode(res, func(k api.Key) prompts.APIKey { secret = k.Secret; return k.Domain() })
	return k, secret, err
}

// ListKeys implements prompts.KeyManager: the keys kept in the server's
// store (GET /keys without those of its configuration; ListAPIKeys has
// them). f.Within is applied by the client.
func (c *Client) ListKeys(ctx context.Context, f prompts.KeyFilter) ([]prompts.APIKey, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, false, prompts.ContextDone(err)
	}
	return filtered(f.Size(), f.After,
		func(after string) ([]prompts.APIKey, bool, error) {
			page, more, err := c.ListAPIKeys(ctx, prompts.Page{Limit: f.Size(), After: after})
			out := make([]prompts.APIKey, 0, len(page))
			for _, k := range page {
				if k.Source != api.KeySourceConfig {
					out = append(out, k.Domain())
				}
			}
			return out, more, err
		},
		f.Keeps,
		func(k prompts.APIKey) string { return k.ID })
}

// ListAPIKeys returns one page of GET /keys as the server answers it:
// on the first page (p.After empty) the keys of its configuration
// (Source api.KeySourceConfig, no id), then those of its store.
func (c *Client) ListAPIKeys(ctx context.Context, p prompts.Page) ([]api.Key, bool, error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	var q query
	q.page(p)
	return list(ctx, c, "/keys", q, nil, func(k api.Key) api.Key { return k })
}

// RevokeKey implements prompts.KeyManager: DELETE /keys/{id}. It checks
// in.Revoker against the key first (reading the list of keys to find
// it).
func (c *Client) RevokeKey(ctx context.Context, in prompts.KeyRevocation) (prompts.APIKey, error) {
	if err := in.Validate(); err != nil {
		return prompts.APIKey{}, err
	}
	if !prompts.ValidID(in.ID) {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	var found *prompts.APIKey
	for after := ""; found == nil; {
		page, more, err := c.ListKeys(ctx, prompts.KeyFilter{Page: prompts.Page{Limit: prompts.MaxLimit, After: after}})
		if err != nil {
			return prompts.APIKey{}, err
		}
		for i := range page {
			if page[i].ID == in.ID {
				found = &page[i]
			}
		}
		if !more || len(page) == 0 {
			break
		}
		after = page[len(page)-1].ID
	}
	if found == nil {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	if err := in.CheckRevoke(*found); err != nil {
		return prompts.APIKey{}, err
	}
	if _, err := c.do(ctx, request{method: http.MethodDelete, path: "/keys/" + url.PathEscape(in.ID)}); err != nil {
		return prompts.APIKey{}, err
	}
	return *found, nil
}
