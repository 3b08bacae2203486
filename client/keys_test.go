package client_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// A client manages the server's keys over /keys: the secret comes back
// once and works, the list has the configuration's keys on the side, a
// revoked key stops working, and what the caller's grant may not do is
// refused before anything is sent.
func TestClientManagesKeys(t *testing.T) {
	is := is.New(t)
	ms := memstore.New()
	cfg := httpapi.NewKeys()
	is.NoErr(cfg.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}))
	h := httpapi.New(ms, httpapi.WithAuthenticator(httpapi.NewStoreKeys(cfg, ms)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cl := newClient(t, srv.URL, adminKey)
	ctx := t.Context()

	k, secret, err := cl.CreateKey(ctx, prompts.NewAPIKey{Name: "ci", Role: prompts.KeyRead, Creator: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	is.Equal(k.Name, "ci")
	is.True(prompts.ValidID(k.ID))
	is.True(len(secret) == 46)
	_, _, err = newClient(t, srv.URL, secret).ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err) // the new key works

	all, more, err := cl.ListAPIKeys(ctx, prompts.Page{})
	is.NoErr(err)
	is.True(!more)
	is.Equal(len(all), 2)
	is.Equal(all[0].Source, api.KeySourceConfig)
	is.Equal(all[1].Source, api.KeySourceStore)
	kept, _, err := cl.ListKeys(ctx, prompts.KeyFilter{})
	is.NoErr(err)
	is.Equal(len(kept), 1) // the store's only
	is.Equal(kept[0].ID, k.ID)

	_, _, err = cl.CreateKey(ctx, prompts.NewAPIKey{Name: "big", Role: prompts.KeyAdmin, Creator: prompts.Grant{Role: prompts.KeyWrite}})
	is.True(errors.Is(err, prompts.ErrForbidden)) // refused before sending

	_, err = cl.RevokeKey(ctx, prompts.KeyRevocation{ID: k.ID, Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	_, _, err = newClient(t, srv.URL, secret).ListProjects(ctx, prompts.ProjectFilter{})
	is.True(errors.Is(err, prompts.ErrUnauthenticated)) // revoked
	_, err = cl.RevokeKey(ctx, prompts.KeyRevocation{ID: k.ID, Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.True(errors.Is(err, prompts.ErrNotFound))
}
