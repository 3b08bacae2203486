package storetest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// A Store that manages API keys (prompts.KeyManager, such as a client of
// a server) is checked with keyManagerTests; one that also finds a key by
// its secret (prompts.KeyStore), itself or under a wrapper that passes it
// through, with keyStoreTests too. Run leaves out the tests of what the
// Store does not do, rather than skipping them.

// keyStore returns the Store's keys; only tests of keyStoreTests call it.
func (s *fixture) keyStore() prompts.KeyStore {
	s.t.Helper()
	k, ok := prompts.KeyStoreOf(s.Store)
	if !ok {
		s.t.Fatal("storetest: a test of keyStoreTests ran on a Store that keeps no API keys (prompts.KeyStore)")
	}
	return k
}

// keyManager returns the Store's key manager; only tests of
// keyManagerTests and keyStoreTests call it.
func (s *fixture) keyManager() prompts.KeyManager {
	s.t.Helper()
	k, ok := keyManagerOf(s.Store)
	if !ok {
		s.t.Fatal("storetest: a key test ran on a Store that manages no API keys (prompts.KeyManager)")
	}
	return k
}

// keyManagerOf returns the KeyStore of s, or else s itself when it is a
// KeyManager.
func keyManagerOf(s prompts.Store) (prompts.KeyManager, bool) {
	if k, ok := prompts.KeyStoreOf(s); ok {
		return k, true
	}
	k, ok := s.(prompts.KeyManager)
	return k, ok
}

// admin is the grant of an admin of every project.
var admin = prompts.Grant{Role: prompts.KeyAdmin}

// apiKey creates a key of this role and these projects (nil: all), made
// by an admin of every project, and returns it with its secret.
func (s *fixture) apiKey(role prompts.KeyRole, projectIDs []string) (prompts.APIKey, string) {
	is := is.New(s.t)
	is.Helper()
	s.n++
	k, secret, err := s.keyManager().CreateKey(s.t.Context(), prompts.NewAPIKey{
		Name: "key-" + strconv.Itoa(s.n), Role: role, ProjectIDs: projectIDs, Creator: admin,
	})
	is.NoErr(err) // create key
	return k, secret
}

// keyText is a key in one line.
func keyText(k prompts.APIKey) string {
	t := func(p *time.Time) string {
		if p == nil {
			return "never"
		}
		return p.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s %s %s projects=%v(nil %t) created=%s expires=%s used=%s", k.ID, k.Name, k.Role, k.ProjectIDs, k.ProjectIDs == nil,
		k.CreatedAt.Format(time.RFC3339Nano), t(k.ExpiresAt), t(k.LastUsedAt))
}

// keyNames lists the names of the keys f keeps, page by page.
func (s *fixture) keyNames(f prompts.KeyFilter) []string {
	is := is.New(s.t)
	is.Helper()
	var names []string
	for {
		page, more, err := s.keyManager().ListKeys(s.t.Context(), f)
		is.NoErr(err) // list keys
		for _, k := range page {
			names = append(names, k.Name)
		}
		if !more {
			return names
		}
		is.True(len(page) > 0) // a page before more has items
		f.After = page[len(page)-1].ID
	}
}

var secretForm = regexp.MustCompile(`^pk_[A-Za-z0-9_-]{43}$`)

// keyManagerTests need a prompts.KeyManager.
var keyManagerTests = []test{
	{"CreateKey refuses bad input, a name taken and an unknown project, and stores nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		ctx := t.Context()
		_, _, err := ks.CreateKey(ctx, prompts.NewAPIKey{Name: "bad name", Role: "owner", ProjectIDs: []string{}, Creator: admin})
		s.invalid(err, "name", "role", "project_ids")
		_, _, err = ks.CreateKey(ctx, prompts.NewAPIKey{Name: "a", Role: prompts.KeyRead, ProjectIDs: []string{"nope"}, Creator: prompts.Grant{}})
		s.invalid(err, "project_ids", "creator.role")
		_, _, err = ks.CreateKey(ctx, prompts.NewAPIKey{Name: string(make([]byte, 65)), Role: prompts.KeyRead, Creator: admin})
		s.invalid(err, "name")
		past := s.clock.Now().Add(-time.Second)
		_, _, err = ks.CreateKey(ctx, prompts.NewAPIKey{Name: "late", Role: prompts.KeyRead, ExpiresAt: &past, Creator: admin})
		s.invalid(err, "expires_at")
		_, _, err = ks.CreateKey(ctx, prompts.NewAPIKey{Name: "lost", Role: prompts.KeyRead, ProjectIDs: []string{unknownID}, Creator: admin})
		s.notFound(err, "project")
		s.apiKey(prompts.KeyRead, nil) // key-1
		_, _, err = ks.CreateKey(ctx, prompts.NewAPIKey{Name: "key-1", Role: prompts.KeyAdmin, Creator: admin})
		is.True(errors.Is(err, prompts.ErrConflict)) // the name is taken
		is.Equal(s.keyNames(prompts.KeyFilter{}), []string{"key-1"})
	}},
	{"no key creates a key above its role, or beyond its projects", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		a, b := s.project(), s.project()
		try := func(creator prompts.Grant, role prompts.KeyRole, projects []string) error {
			s.n++
			_, _, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "k" + strconv.Itoa(s.n), Role: role, ProjectIDs: projects, Creator: creator})
			return err
		}
		deployAll := prompts.Grant{Role: prompts.KeyDeploy}
		adminA := prompts.Grant{Role: prompts.KeyAdmin, ProjectIDs: []string{a.ID}}
		is.True(errors.Is(try(deployAll, prompts.KeyAdmin, nil), prompts.ErrForbidden))              // above its role
		is.True(errors.Is(try(adminA, prompts.KeyRead, nil), prompts.ErrForbidden))                  // every project, beyond a
		is.True(errors.Is(try(adminA, prompts.KeyRead, []string{a.ID, b.ID}), prompts.ErrForbidden)) // b too
		is.True(errors.Is(try(adminA, prompts.KeyRead, []string{b.ID}), prompts.ErrForbidden))       // b only
		is.Equal(s.keyNames(prompts.KeyFilter{}), []string(nil))                                     // nothing stored
		is.NoErr(try(deployAll, prompts.KeyDeploy, nil))                                             // its own role, every project
		is.NoErr(try(adminA, prompts.KeyAdmin, []string{a.ID}))                                      // within its projects
		is.NoErr(try(prompts.Grant{Role: prompts.KeyAdmin, ProjectIDs: []string{a.ID, b.ID}}, prompts.KeyWrite, []string{b.ID}))
		is.Equal(len(s.keyNames(prompts.KeyFilter{})), 3)
	}},
	{"ListKeys pages oldest first, and Within keeps the keys of those projects", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		a, b := s.project(), s.project()
		s.apiKey(prompts.KeyRead, nil)                  // key-3
		s.apiKey(prompts.KeyRead, []string{a.ID})       // key-4
		s.apiKey(prompts.KeyRead, []string{a.ID, b.ID}) // key-5
		s.apiKey(prompts.KeyRead, []string{b.ID})       // key-6
		all := []string{"key-3", "key-4", "key-5", "key-6"}
		is.Equal(s.keyNames(prompts.KeyFilter{}), all)
		is.Equal(s.keyNames(prompts.KeyFilter{Page: prompts.Page{Limit: 1}}), all)
		is.Equal(s.keyNames(prompts.KeyFilter{Within: []string{a.ID}}), []string{"key-4"})
		is.Equal(s.keyNames(prompts.KeyFilter{Within: []string{a.ID, b.ID}, Page: prompts.Page{Limit: 1}}), []string{"key-4", "key-5", "key-6"})
		is.Equal(s.keyNames(prompts.KeyFilter{Within: []string{}}), []string(nil))
		_, _, err := ks.ListKeys(t.Context(), prompts.KeyFilter{Page: prompts.Page{Limit: -1}})
		is.True(errors.Is(err, prompts.ErrInvalid))
	}},
	{"a key revokes only keys it could create", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		a, b := s.project(), s.project()
		ofA, _ := s.apiKey(prompts.KeyAdmin, []string{a.ID})
		ofB, _ := s.apiKey(prompts.KeyRead, []string{b.ID})
		all, _ := s.apiKey(prompts.KeyRead, nil)
		adminA := prompts.Grant{Role: prompts.KeyAdmin, ProjectIDs: []string{a.ID}}
		_, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: ofB.ID, Revoker: adminA})
		s.notFound(err, "a key of another project")
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: all.ID, Revoker: adminA})
		is.True(errors.Is(err, prompts.ErrForbidden)) // a key of every project
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: ofA.ID, Revoker: prompts.Grant{Role: prompts.KeyDeploy}})
		is.True(errors.Is(err, prompts.ErrForbidden)) // a key above the revoker's role
		is.Equal(len(s.keyNames(prompts.KeyFilter{})), 3)
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: ofA.ID, Revoker: adminA})
		is.NoErr(err) // its own kind
		is.Equal(len(s.keyNames(prompts.KeyFilter{})), 2)
	}},
	{"creating and revoking a key append key.created and key.revoked, of no project", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		l := s.eventLog()
		p := s.project()
		last := s.lastEvent()
		k, _ := s.apiKey(prompts.KeyWrite, []string{p.ID})
		_, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: k.ID, Revoker: admin})
		is.NoErr(err)
		evs := s.eventsAfter(last)
		is.Equal(len(evs), 2)
		for i, typ := range []prompts.EventType{prompts.EventKeyCreated, prompts.EventKeyRevoked} {
			is.Equal(evs[i].Type, typ)
			is.Equal(evs[i].ProjectID, "")
			is.True(evs[i].Key != nil)
			is.Equal(keyText(*evs[i].Key), keyText(k))
		}
		page, _, err := l.ListEvents(t.Context(), prompts.EventFilter{After: last, ProjectIDs: []string{p.ID}})
		is.NoErr(err)
		is.Equal(len(page), 0) // no project's
		page, _, err = l.ListEvents(t.Context(), prompts.EventFilter{After: 0, ProjectIDs: []string{""}, Limit: 1})
		is.NoErr(err)
		is.Equal(len(page), 1)                          // the events of no project: the keys'
		is.Equal(page[0].Type, prompts.EventKeyCreated) // the project's events left out
		// A refused change appends nothing.
		_, _, err = ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "x", Role: prompts.KeyAdmin, Creator: prompts.Grant{Role: prompts.KeyRead}})
		is.True(errors.Is(err, prompts.ErrForbidden))
		is.Equal(len(s.eventsAfter(last)), 2)
	}},
	{"of concurrent creates of one name exactly one succeeds", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyManager()
		const n = 16
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			ok, taken int
		)
		for i := range n {
			wg.Go(func() {
				_, _, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "same", Role: prompts.KeyRead, Creator: admin})
				_, _, err2 := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "own-" + strconv.Itoa(i), Role: prompts.KeyRead, Creator: admin})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, prompts.ErrConflict):
					taken++
				default:
					t.Errorf("create: %v", err)
				}
				if err2 != nil {
					t.Errorf("create own: %v", err2)
				}
			})
		}
		wg.Wait()
		is.Equal(ok, 1)
		is.Equal(taken, n-1)
		is.Equal(len(s.keyNames(prompts.KeyFilter{})), n+1)
	}},
}

// keyStoreTests need a prompts.KeyStore: they find keys by their secret.
var keyStoreTests = []test{
	{"CreateKey returns the key and its secret once; LookupKey finds it by the secret's SHA-256", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyStore()
		p := s.project()
		mark := s.clock.mark()
		k, secret, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "ci.deploy_1", Role: prompts.KeyDeploy, ProjectIDs: []string{p.ID}, Creator: admin})
		is.NoErr(err)
		is.True(secretForm.MatchString(secret)) // pk_ and 43 characters of base64url
		is.True(prompts.ValidID(k.ID))
		s.idStamped(mark, k.ID)
		s.stamped(mark, k.CreatedAt)
		is.Equal(k.Name, "ci.deploy_1")
		is.Equal(k.Role, prompts.KeyDeploy)
		is.Equal(k.ProjectIDs, []string{p.ID})
		is.True(k.ExpiresAt == nil && k.LastUsedAt == nil)

		got, err := ks.LookupKey(t.Context(), prompts.HashKeySecret(secret))
		is.NoErr(err)
		is.Equal(keyText(got), keyText(k))
		_, err = ks.LookupKey(t.Context(), prompts.HashKeySecret(secret+"x"))
		s.notFound(err, "another secret")

		k2, secret2, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "other", Role: prompts.KeyRead, Creator: admin})
		is.NoErr(err)
		is.True(secret2 != secret)    // every key its own secret
		is.True(k2.ProjectIDs == nil) // every project
		is.True(k2.ID > k.ID)         // ids grow
		is.Equal(s.keyNames(prompts.KeyFilter{}), []string{"ci.deploy_1", "other"})
	}},
	{"RevokeKey removes the key at once; revoking again is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyStore()
		k, secret := s.apiKey(prompts.KeyWrite, nil)
		kept, _ := s.apiKey(prompts.KeyRead, nil)
		got, err := ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: k.ID, Revoker: admin})
		is.NoErr(err)
		is.Equal(keyText(got), keyText(k))
		_, err = ks.LookupKey(t.Context(), prompts.HashKeySecret(secret))
		s.notFound(err, "a revoked key")
		is.Equal(s.keyNames(prompts.KeyFilter{}), []string{kept.Name})
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: k.ID, Revoker: admin})
		s.notFound(err, "a key revoked already")
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: "not-an-id", Revoker: admin})
		s.notFound(err, "a malformed id")
		_, err = ks.RevokeKey(t.Context(), prompts.KeyRevocation{ID: kept.ID})
		s.invalid(err, "revoker.role")
	}},
	{"an expired key is not found by LookupKey, and still listed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyStore()
		at := s.clock.Now().Add(time.Hour)
		k, secret, err := ks.CreateKey(t.Context(), prompts.NewAPIKey{Name: "soon", Role: prompts.KeyRead, ExpiresAt: &at, Creator: admin})
		is.NoErr(err)
		is.True(k.ExpiresAt != nil && k.ExpiresAt.Equal(at.Truncate(time.Microsecond)))
		is.Equal(k.ExpiresAt.Location(), time.UTC)
		_, err = ks.LookupKey(t.Context(), prompts.HashKeySecret(secret))
		is.NoErr(err) // not yet
		s.clock.jump(time.Hour)
		_, err = ks.LookupKey(t.Context(), prompts.HashKeySecret(secret))
		s.notFound(err, "an expired key")
		is.Equal(s.keyNames(prompts.KeyFilter{}), []string{"soon"})
	}},
	{"TouchKey moves LastUsedAt at most once a minute", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ks := s.keyStore()
		k, secret := s.apiKey(prompts.KeyRead, nil)
		at := s.clock.Now().UTC().Truncate(time.Microsecond)
		moved, err := ks.TouchKey(t.Context(), k.ID, at)
		is.NoErr(err)
		is.True(moved)
		got, err := ks.LookupKey(t.Context(), prompts.HashKeySecret(secret))
		is.NoErr(err)
		is.True(got.LastUsedAt != nil && got.LastUsedAt.Equal(at))
		moved, err = ks.TouchKey(t.Context(), k.ID, at.Add(59*time.Second))
		is.NoErr(err)
		is.True(!moved) // within the minute
		moved, err = ks.TouchKey(t.Context(), k.ID, at.Add(time.Minute))
		is.NoErr(err)
		is.True(moved)
		page, _, err := ks.ListKeys(t.Context(), prompts.KeyFilter{})
		is.NoErr(err)
		is.True(page[0].LastUsedAt.Equal(at.Add(time.Minute)))
		_, err = ks.TouchKey(t.Context(), unknownID, at)
		s.notFound(err, "an unknown key")
	}},
}
