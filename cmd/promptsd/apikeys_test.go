package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/poll"
)

// keyClient sends requests with one key on connections of its own, kept
// alive, as a client with one key does.
type keyClient struct {
	secret string
	c      *http.Client
}

func newKeyClient(t *testing.T, secret string) *keyClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &keyClient{secret: secret, c: &http.Client{Transport: tr}}
}

// get answers the status of GET path on s.
func (k *keyClient) get(t *testing.T, s *server, path string) int {
	t.Helper()
	req, err := http.NewRequest("GET", s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", k.secret)
	resp, err := k.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// Two servers on one database: a key created through one works on the
// other; revoked through one, it is refused by the other within a
// second, though the other had it in memory and the client keeps its
// connection.
func TestServerKeyRevokedOnOneReplicaIsRefusedByTheOther(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	a := start(t, env)
	a.key = testKey
	b := start(t, env)
	b.key = testKey

	var k struct{ ID, Secret string }
	is.Equal(a.call(t, "POST", "/keys", `{"name":"ci","role":"read"}`, &k).StatusCode, 200)
	is.True(strings.HasPrefix(k.Secret, "pk_"))
	ci := newKeyClient(t, k.Secret)
	for range 3 { // on b, from memory after the first, on one connection
		is.Equal(ci.get(t, b, "/prompts"), 200)
	}
	var listed []map[string]any
	is.Equal(b.call(t, "GET", "/keys", "", &listed).StatusCode, 200)
	is.Equal(len(listed), 2) // default (config) and ci (store)
	is.Equal(listed[0]["source"], "config")
	is.Equal(listed[1]["source"], "store")

	resp := a.call(t, "DELETE", "/keys/"+k.ID, "", nil)
	is.Equal(resp.StatusCode, 204)
	is.Equal(ci.get(t, a, "/prompts"), 401) // at once where it was revoked
	poll.For(t, time.Second, "the other replica refuses the revoked key", func() bool {
		return ci.get(t, b, "/prompts") == 401
	})
	is.True(!strings.Contains(a.out.String()+b.out.String(), k.Secret)) // never logged
}

// With a data file, a key created lasts across a restart; revoked, it is
// refused, on the connection that used it too.
func TestServerKeysOnADataFile(t *testing.T) {
	is := is.New(t)
	data := t.TempDir() + "/prompts.data"
	env := []string{"PROMPTS_API_KEY=" + testKey}
	s := start(t, env, "-data", data)
	s.key = testKey
	var k struct{ ID, Secret string }
	is.Equal(s.call(t, "POST", "/keys", `{"name":"ci","role":"read"}`, &k).StatusCode, 200)
	is.Equal(s.callWith(t, k.Secret, "/prompts", nil).StatusCode, 200)
	is.NoErr(s.stop(t))

	s = start(t, env, "-data", data)
	s.key = testKey
	ci := newKeyClient(t, k.Secret)
	is.Equal(ci.get(t, s, "/prompts"), 200) // kept
	is.Equal(s.call(t, "DELETE", "/keys/"+k.ID, "", nil).StatusCode, 204)
	is.Equal(ci.get(t, s, "/prompts"), 401) // on the connection that used it too
}

// A configured key given the name of a stored one later: the server
// starts, with a warning naming the clash; without a clash, none.
func TestServerWarnsOfAStoredKeyNamedAsAConfiguredOne(t *testing.T) {
	is := is.New(t)
	data := t.TempDir() + "/prompts.data"
	env := []string{"PROMPTS_API_KEY=" + testKey}
	s := start(t, env, "-data", data)
	s.key = testKey
	var k struct{ ID string }
	is.Equal(s.call(t, "POST", "/keys", `{"name":"later","role":"read"}`, &k).StatusCode, 200)
	is.NoErr(s.stop(t))
	is.True(!strings.Contains(s.out.String(), "a stored API key has the name of a configured one")) // no clash yet

	s = start(t, env, "-data", data, "-key", "later:admin:later-secret-0123456789")
	s.key = testKey
	is.True(strings.Contains(s.out.String(), `level=WARN msg="a stored API key has the name of a configured one`))
	is.True(strings.Contains(s.out.String(), `name=later stored_key_id=`+k.ID))
	is.Equal(s.callWith(t, "later-secret-0123456789", "/prompts", nil).StatusCode, 200) // it started, and both work
	is.NoErr(s.stop(t))
}
