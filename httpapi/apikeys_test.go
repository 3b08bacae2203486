package httpapi_test

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
)

// keysEnv is an env whose authenticator is a StoreKeys over the
// configured keys of newEnv (all, own, other) and the store's keys, on a
// clock the test moves.
func keysEnv(t *testing.T) (*env, *httpapi.StoreKeys, *movable) {
	t.Helper()
	base := newEnv(t)
	cfg := httpapi.NewKeys()
	for _, err := range []error{
		cfg.Add(httpapi.Key{Name: "all", Role: httpapi.RoleAdmin, Secret: base.key}),
		cfg.Add(httpapi.Key{Name: "own", Role: httpapi.RoleAdmin, Secret: base.ownKey, ProjectIDs: []string{base.project.ID}}),
		cfg.Add(httpapi.Key{Name: "other", Role: httpapi.RoleAdmin, Secret: base.otherKey, ProjectIDs: []string{base.other.ID}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ks, ok := prompts.KeyStoreOf(base.store)
	if !ok {
		t.Fatal("the test store keeps no keys")
	}
	clock := &movable{}
	sk := httpapi.NewStoreKeys(cfg, ks, httpapi.WithKeysClock(clock.now))
	return base.withHandler(httpapi.WithAuthenticator(sk)), sk, clock
}

// watch runs sk.Watch on the store's event log until the test ends.
func watch(t *testing.T, e *env, sk *httpapi.StoreKeys) {
	t.Helper()
	log, ok := prompts.EventLogOf(e.store)
	if !ok {
		t.Fatal("the test store keeps no event log")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = sk.Watch(ctx, log) }()
	t.Cleanup(func() { cancel(); <-done })
}

var keySecret = regexp.MustCompile(`^pk_[A-Za-z0-9_-]{43}$`)

func TestKeysCreateShowsTheSecretOnceAndTheKeyWorks(t *testing.T) {
	is := is.New(t)
	e, _, _ := keysEnv(t)
	r := e.do("POST", "/v1/integration/keys", `{"name":"ci","role":"write"}`)
	is.Equal(r.status, 200)
	k := r.obj(t)
	secret, _ := k["secret"].(string)
	is.True(keySecret.MatchString(secret)) // pk_ and 43 characters of base64url
	is.Equal(k["name"], "ci")
	is.Equal(k["role"], "write")
	is.Equal(k["source"], "store")
	is.Equal(k["project_ids"], nil) // every project, as its creator
	is.Equal(k["last_used_at"], nil)

	// The key works at once, with its role.
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	is.Equal(e.call(secret, "POST", "/v1/integration/prompts", `{"project_id":"`+e.project.ID+`","key":"by-ci","name":"N"}`).status, 200)
	is.Equal(e.call(secret, "GET", "/v1/integration/keys", "").status, 403) // not an admin
	is.Equal(e.call(secret+"x", "GET", "/v1/integration/prompts", "").status, 401)
	is.Equal(e.call("pk_"+strings.Repeat("A", 43), "GET", "/v1/integration/prompts", "").status, 401)

	// Never again: not in the list, the events, the logs.
	list := e.do("GET", "/v1/integration/keys", "")
	is.Equal(list.status, 200)
	is.True(!strings.Contains(string(list.body), secret))
	is.True(!strings.Contains(string(list.body), `"secret"`))
	var names, sources []string
	for _, x := range list.arr(t) {
		names = append(names, x["name"].(string))
		sources = append(sources, x["source"].(string))
	}
	is.Equal(names, []string{"all", "own", "other", "ci"})
	is.Equal(sources, []string{"config", "config", "config", "store"})
	events := e.do("GET", "/v1/integration/events", "")
	is.True(strings.Contains(string(events.body), `"type":"key.created"`))
	is.True(!strings.Contains(string(events.body), secret))
	is.True(!strings.Contains(e.logs.String(), secret))

	// A name is one key's, kept or configured.
	is.Equal(e.do("POST", "/v1/integration/keys", `{"name":"ci","role":"read"}`).status, 409)  // a name kept
	is.Equal(e.do("POST", "/v1/integration/keys", `{"name":"own","role":"read"}`).status, 409) // a name configured
}

func TestKeysCreateRefusesBadInput(t *testing.T) {
	e, _, _ := keysEnv(t)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct{ body, field string }{
		{`{"name":"a b","role":"read"}`, "name"},
		{`{"name":"a","role":"owner"}`, "role"},
		{`{"name":"a","role":"read","project_ids":[]}`, "project_ids"},
		{`{"name":"a","role":"read","expires_at":"` + past + `"}`, "expires_at"},
		{`{"name":"a","role":"read","expires_at":"tomorrow"}`, "expires_at"},
		{`{"role":"read"}`, "name"},
	} {
		t.Run(c.body, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/integration/keys", c.body)
			is.Equal(r.status, 400)
			is.True(strings.Contains(string(r.body), `"`+c.field+`"`)) // names the field
		})
	}
	// A timestamp that does not parse says what it must be.
	for _, v := range []string{`"tomorrow"`, `"2027-01-01"`, `""`, `42`} {
		t.Run("expires_at "+v, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/integration/keys", `{"name":"a","role":"read","expires_at":`+v+`}`)
			is.Equal(r.status, 400)
			is.True(strings.Contains(string(r.body), "must be an RFC 3339 timestamp such as 2027-01-01T00:00:00Z")) // string(r.body)
		})
	}
	is := is.New(t)
	is.Equal(len(e.do("GET", "/v1/integration/keys", "").arr(t)), 3) // nothing made
}

func TestKeysOfSomeProjectsStayWithinThem(t *testing.T) {
	is := is.New(t)
	e, _, _ := keysEnv(t)
	// own is an admin of e.project only: null is its projects.
	r := e.call(e.ownKey, "POST", "/v1/integration/keys", `{"name":"mine","role":"admin"}`)
	is.Equal(r.status, 200)
	mine := r.obj(t)
	is.Equal(mine["project_ids"], []any{e.project.ID})
	is.Equal(e.call(e.ownKey, "POST", "/v1/integration/keys", `{"name":"theirs","role":"read","project_ids":["`+e.other.ID+`"]}`).status, 404)
	is.Equal(e.call(e.ownKey, "POST", "/v1/integration/keys", `{"name":"both","role":"read","project_ids":["`+e.project.ID+`","`+e.other.ID+`"]}`).status, 404)

	// The key it made sees its project only, and cannot reach further.
	secret := mine["secret"].(string)
	is.Equal(e.call(secret, "GET", "/v1/integration/projects/"+e.other.ID, "").status, 404)
	is.Equal(e.call(secret, "POST", "/v1/integration/keys", `{"name":"wider","role":"read","project_ids":["`+e.other.ID+`"]}`).status, 404)

	all := e.do("POST", "/v1/integration/keys", `{"name":"everywhere","role":"read"}`).obj(t)
	theirs := e.do("POST", "/v1/integration/keys", `{"name":"theirs","role":"read","project_ids":["`+e.other.ID+`"]}`).obj(t)

	// It lists what it could have made.
	var names []string
	for _, k := range e.call(e.ownKey, "GET", "/v1/integration/keys", "").arr(t) {
		names = append(names, k["name"].(string))
	}
	is.Equal(names, []string{"own", "mine"})

	// And revokes only that.
	is.Equal(e.call(e.ownKey, "DELETE", "/v1/integration/keys/"+theirs["id"].(string), "").status, 404)
	is.Equal(e.call(e.ownKey, "DELETE", "/v1/integration/keys/"+all["id"].(string), "").status, 403)
	is.Equal(e.call(theirs["secret"].(string), "GET", "/v1/integration/projects/"+e.other.ID, "").status, 200) // still works
	is.Equal(e.call(e.ownKey, "DELETE", "/v1/integration/keys/"+mine["id"].(string), "").status, 204)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 401)
}

func TestKeysRevokedAreRefusedAtOnce(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "without Watch", true: "with Watch"}[watched], func(t *testing.T) {
			is := is.New(t)
			e, sk, _ := keysEnv(t)
			if watched {
				watch(t, e, sk)
			}
			k := e.do("POST", "/v1/integration/keys", `{"name":"gone","role":"read"}`).obj(t)
			secret := k["secret"].(string)
			for range 3 { // remembered, when watched
				is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
			}
			is.Equal(e.do("DELETE", "/v1/integration/keys/"+k["id"].(string), "").status, 204)
			is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 401) // at once
			is.Equal(e.do("DELETE", "/v1/integration/keys/"+k["id"].(string), "").status, 404)
			events := e.do("GET", "/v1/integration/events", "")
			is.True(strings.Contains(string(events.body), `"type":"key.revoked"`))
			is.True(!strings.Contains(string(events.body), secret))
		})
	}
}

// A key revoked by another process on the same data (here: the Store
// itself, past this handler) is refused once Watch sees its event.
func TestKeysRevokedElsewhereAreRefusedOnceWatchSeesIt(t *testing.T) {
	is := is.New(t)
	e, sk, _ := keysEnv(t)
	watch(t, e, sk)
	k := e.do("POST", "/v1/integration/keys", `{"name":"elsewhere","role":"read"}`).obj(t)
	secret := k["secret"].(string)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	ks, _ := prompts.KeyStoreOf(e.store)
	_, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: k["id"].(string), Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	poll.For(t, time.Second, "the key revoked elsewhere refused", func() bool {
		return e.call(secret, "GET", "/v1/integration/prompts", "").status == 401
	})
}

// Without Watch, StoreKeys remembers nothing: a key revoked past it is
// refused at the next request.
func TestKeysWithoutWatchLookEveryKeyUp(t *testing.T) {
	is := is.New(t)
	e, _, _ := keysEnv(t)
	k := e.do("POST", "/v1/integration/keys", `{"name":"k1","role":"read"}`).obj(t)
	secret := k["secret"].(string)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	ks, _ := prompts.KeyStoreOf(e.store)
	_, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: k["id"].(string), Revoker: prompts.Grant{Role: prompts.KeyAdmin}})
	is.NoErr(err)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 401)
}

func TestKeysExpire(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(map[bool]string{false: "without Watch", true: "with Watch"}[watched], func(t *testing.T) {
			is := is.New(t)
			e, sk, clock := keysEnv(t)
			if watched {
				watch(t, e, sk)
			}
			at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
			k := e.do("POST", "/v1/integration/keys", `{"name":"brief","role":"read","expires_at":"`+at+`"}`).obj(t)
			is.True(k["expires_at"] != nil)
			secret := k["secret"].(string)
			is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
			clock.add(time.Hour + time.Second)
			is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 401)
			is.Equal(len(e.do("GET", "/v1/integration/keys", "").arr(t)), 4) // still listed, until revoked
		})
	}
}

func TestKeysLastUseMovesAtMostOnceAMinute(t *testing.T) {
	is := is.New(t)
	e, sk, clock := keysEnv(t)
	watch(t, e, sk)
	k := e.do("POST", "/v1/integration/keys", `{"name":"used","role":"read"}`).obj(t)
	secret := k["secret"].(string)
	lastUse := func() any {
		for _, x := range e.do("GET", "/v1/integration/keys", "").arr(t) {
			if x["name"] == "used" {
				return x["last_used_at"]
			}
		}
		return "missing"
	}
	is.Equal(lastUse(), nil)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	first := lastUse()
	is.True(first != nil)
	clock.add(30 * time.Second)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	is.Equal(lastUse(), first) // within the minute
	clock.add(31 * time.Second)
	is.Equal(e.call(secret, "GET", "/v1/integration/prompts", "").status, 200)
	is.True(lastUse() != first)
}

// countingKeys counts the lookups of the store's keys.
type countingKeys struct {
	prompts.KeyStore
	lookups atomic.Int64
}

func (c *countingKeys) LookupKey(ctx context.Context, h [32]byte) (prompts.APIKey, error) {
	c.lookups.Add(1)
	return c.KeyStore.LookupKey(ctx, h)
}

// While Watch runs, a key is looked up once, not at every request, and
// an unknown secret of the kept keys' form once too.
func TestKeysAreRememberedWhileWatched(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ks, _ := prompts.KeyStoreOf(e.store)
	counting := &countingKeys{KeyStore: ks}
	sk := httpapi.NewStoreKeys(newKeysFor(t, e.key), counting)
	e2 := e.withHandler(httpapi.WithAuthenticator(sk))
	watch(t, e2, sk)
	poll.For(t, time.Second, "Watch started", func() bool {
		_, secret, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "probe" + time.Now().Format("150405.000000"), Role: prompts.KeyRead, Creator: prompts.Grant{Role: prompts.KeyAdmin}})
		is.NoErr(err)
		before := counting.lookups.Load()
		e2.call(secret, "GET", "/v1/integration/prompts", "")
		e2.call(secret, "GET", "/v1/integration/prompts", "")
		return counting.lookups.Load() == before+1
	})
	unknown := "pk_" + strings.Repeat("B", 43)
	before := counting.lookups.Load()
	for range 3 {
		is.Equal(e2.call(unknown, "GET", "/v1/integration/prompts", "").status, 401)
	}
	is.Equal(counting.lookups.Load(), before+1)
	is.Equal(e2.call("not-a-kept-key-form", "GET", "/v1/integration/prompts", "").status, 401)
	is.Equal(counting.lookups.Load(), before+1) // not looked up at all
}
