package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
)

// countedKeys counts the calls of the Authenticator it wraps.
type countedKeys struct {
	next  httpapi.Authenticator
	calls atomic.Int64
}

func (c *countedKeys) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	c.calls.Add(1)
	return c.next.Authenticate(ctx, key)
}

// A connection remembers the last key accepted on it: the keys are asked
// again only for another key, a refused one, or another connection.
func TestConnectionRemembersItsKey(t *testing.T) {
	is := is.New(t)
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "alpha", Role: httpapi.RoleRead, Secret: "alpha-secret-0123456789"}))
	is.NoErr(keys.Add(httpapi.Key{Name: "beta", Role: httpapi.RoleRead, Secret: "beta-secret-0123456789", ProjectIDs: []string{"p1"}}))
	counted := &countedKeys{next: keys}
	auth := namedKeys{keys: counted}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, err := auth.Authenticate(r.Context(), r.Header.Get("X-API-Key"))
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, a.Name)
		if len(a.ProjectIDs) > 0 {
			io.WriteString(w, ","+a.ProjectIDs[0])
			a.ProjectIDs[0] = "changed" // the caller's own copy: the next answer is as before
		}
	}))
	srv.Config.ConnContext = withConnAuth
	srv.Start()
	defer srv.Close()

	get := func(c *http.Client, key string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		is.NoErr(err)
		req.Header.Set("X-API-Key", key)
		resp, err := c.Do(req)
		is.NoErr(err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		return resp.StatusCode, string(b)
	}
	one := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}} // one connection, kept alive
	defer one.CloseIdleConnections()
	calls := func() int64 { return counted.calls.Load() }

	for range 3 {
		code, name := get(one, "alpha-secret-0123456789")
		is.Equal(code, http.StatusOK)
		is.Equal(name, "alpha")
	}
	is.Equal(calls(), int64(1)) // asked once for the three

	for range 2 {
		_, name := get(one, "beta-secret-0123456789")
		is.Equal(name, "beta,p1") // the second as the first: no caller changed what the connection keeps
	}
	is.Equal(calls(), int64(2)) // another key: asked again, once
	a, err := auth.Authenticate(context.WithValue(context.Background(), connAuthKey{}, new(connAuth)), "beta-secret-0123456789")
	is.NoErr(err)
	is.Equal(a.ProjectIDs, []string{"p1"}) // no caller changed what the keys gave
	is.Equal(calls(), int64(3))

	code, _ := get(one, "alpha-secret-0123456789-and-more") // a key that starts as the last one
	is.Equal(code, http.StatusUnauthorized)
	code, _ = get(one, "alpha-secret-0123456789-and-more")
	is.Equal(code, http.StatusUnauthorized)
	is.Equal(calls(), int64(5)) // a refused key is never remembered

	_, name := get(one, "beta-secret-0123456789")
	is.Equal(name, "beta,p1")
	is.Equal(calls(), int64(5)) // still the last key accepted: a refusal forgets nothing

	other := &http.Client{Transport: &http.Transport{}}
	defer other.CloseIdleConnections()
	_, name = get(other, "beta-secret-0123456789")
	is.Equal(name, "beta,p1")
	is.Equal(calls(), int64(6)) // another connection remembers nothing yet

	_, err = auth.Authenticate(context.Background(), "beta-secret-0123456789")
	is.NoErr(err)
	_, err = auth.Authenticate(context.Background(), "beta-secret-0123456789")
	is.NoErr(err)
	is.Equal(calls(), int64(8)) // without a connection, every call asks
}
