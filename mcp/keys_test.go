package mcp_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/mcp"
)

// keptKeys serves f's store over MCP with the keys the store keeps
// (httpapi.StoreKeys), sessions counted by g, and returns the fixture of
// that server with the secrets of two kept keys, the second expiring at
// expires (zero: never).
func keptKeys(t *testing.T, g *gate, expires time.Time) (*fixture, prompts.KeyStore, [2]prompts.APIKey, [2]string) {
	t.Helper()
	is := is.New(t)
	f := newFixture(t)
	ks, ok := prompts.KeyStoreOf(f.store)
	is.True(ok)
	var keys [2]prompts.APIKey
	var secrets [2]string
	for i, name := range []string{"leaving", "staying"} {
		in := prompts.NewAPIKey{Name: name, Role: prompts.KeyRead, Creator: prompts.Grant{Role: prompts.KeyAdmin}}
		if i == 0 && !expires.IsZero() {
			in.ExpiresAt = &expires
		}
		k, secret, err := ks.CreateKey(context.Background(), in)
		is.NoErr(err)
		keys[i], secrets[i] = k, secret
	}
	h := mcp.New(f.store, mcp.WithAuthenticator(httpapi.NewStoreKeys(nil, ks)), mcp.WithSessionGate(g.acquire))
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	f2 := *f
	f2.handler, f2.srv = h, srv
	return &f2, ks, keys, secrets
}

// A revoked key's open sessions end, and see no list_changed after the
// revocation; another key's session goes on.
func TestSessionOfARevokedKeyEnds(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	g := &gate{max: 10, open: map[string]int{}}
	f, ks, keys, secrets := keptKeys(t, g, time.Time{})
	p := f.prompt(t, f.demo.ID, "late", "v1", "", "")
	f.connect(t, secrets[0], "")
	staying := f.connect(t, secrets[1], "")
	is.Equal(g.count("leaving"), 1)

	_, err := ks.RevokeKey(ctx, prompts.KeyRevocation{ID: keys[0].ID, Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	poll.For(t, 5*time.Second, "the revoked key's session ended", func() bool { return g.count("leaving") == 0 })
	is.Equal(g.count("staying"), 1)

	_, err = f.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	select {
	case got := <-f.changes:
		is.Equal(got, secrets[1]) // the staying key's session only
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed after a promotion")
	}
	is.NoErr(staying.Ping(ctx, nil))
	_, err = f.dial(secrets[0], "", keyTransport{"X-API-Key", secrets[0]})
	is.True(err != nil) // refused
}

// A kept key's open sessions end when it expires.
func TestSessionOfAnExpiredKeyEnds(t *testing.T) {
	is := is.New(t)
	g := &gate{max: 10, open: map[string]int{}}
	at := time.Now().Add(3 * time.Second)
	f, _, _, secrets := keptKeys(t, g, at)
	f.connect(t, secrets[0], "")
	f.connect(t, secrets[1], "")
	is.Equal(g.count("leaving"), 1)
	poll.For(t, 10*time.Second, "the expired key's session ended", func() bool { return g.count("leaving") == 0 })
	is.True(!time.Now().Before(at))
	is.Equal(g.count("staying"), 1)
}

// Serve refuses a key whose revocation the handler has read, and one
// that expired; a session of a key revoked while it runs ends.
func TestServeRefusesAnEndedKey(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	g := &gate{max: 10, open: map[string]int{}}
	f, ks, keys, secrets := keptKeys(t, g, time.Time{})
	f.connect(t, secrets[1], "") // the handler follows the event log

	// A session over another transport for the key about to be revoked.
	server, client := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() {
		served <- f.handler.Serve(ctx, server, httpapi.Access{Role: httpapi.RoleRead, KeyID: keys[0].ID})
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, client, nil)
	is.NoErr(err)
	defer cs.Close()

	_, err = ks.RevokeKey(ctx, prompts.KeyRevocation{ID: keys[0].ID, Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	poll.For(t, 5*time.Second, "the handler read the revocation", func() bool { return f.handler.Revoked(keys[0].ID) })
	select {
	case <-served: // the session under way ended
	case <-time.After(10 * time.Second):
		t.Fatal("the session of a revoked key goes on")
	}

	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // without the refusal, a session that waits
	defer cancel()
	server, _ = sdk.NewInMemoryTransports()
	is.Equal(f.handler.Serve(ctx, server, httpapi.Access{Role: httpapi.RoleRead, KeyID: keys[0].ID}), mcp.ErrKeyEnded) // revoked before it began
	past := time.Now().Add(-time.Second)
	server, _ = sdk.NewInMemoryTransports()
	is.Equal(f.handler.Serve(ctx, server, httpapi.Access{Role: httpapi.RoleRead, KeyID: keys[1].ID, ExpiresAt: past}), mcp.ErrKeyEnded) // expired
}
