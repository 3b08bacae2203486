package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"sync"
)

// ErrUnknownKey is what an Authenticator returns (or wraps) for a key it
// does not know. The handler answers it with 401, exactly as it answers a
// missing key.
var ErrUnknownKey = errors.New("httpapi: unknown API key")

// Authenticator maps the X-API-Key of a request to what that key may see.
// The embedding application implements it to keep keys where it likes;
// Keys is a ready implementation for a fixed set of keys.
//
// Authenticate is called once per request, before any other check, with a
// non-empty key. It returns an error for which errors.Is(err,
// ErrUnknownKey) holds when the key is unknown (401). Any other error is
// the authenticator's own failure: a *prompts.Error with
// prompts.CodeUnavailable answers 503 with Retry-After, anything else 500
// (logged; the body does not show it). Implementations must be safe for
// concurrent use and should compare keys in constant time.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (Access, error)
}

// Access is what one API key may see: every project, or the projects
// named. The resources of any other project are answered exactly as if
// they did not exist (404), and never appear in lists.
type Access struct {
	// Name names the key (or whoever holds it): the actor of the changes
	// it makes, in the deployment history. "" records none.
	Name        string
	AllProjects bool     // every project, present and future
	ProjectIDs  []string // else only these (none when empty)
}

// Allows reports whether the key may see the project with this id.
func (a Access) Allows(projectID string) bool {
	return a.AllProjects || (projectID != "" && slices.Contains(a.ProjectIDs, projectID))
}

// visible returns the project ids a list is limited to: nil for every
// project, else a non-nil slice (empty when the key sees none), as
// prompts.PromptFilter and prompts.ProjectFilter expect.
func (a Access) visible() []string {
	if a.AllProjects {
		return nil
	}
	if a.ProjectIDs == nil {
		return []string{}
	}
	return a.ProjectIDs
}

// Keys is an Authenticator for a fixed set of API keys, each for every
// project or for a named set of projects. It keeps only the SHA-256 hash of
// each key, and compares a presented key with every stored hash in
// constant time, without stopping at a match. Since the hash is not salted
// or slowed, keys should be long random strings (32 random bytes, encoded),
// not passwords. A Keys is safe for concurrent use, Add included.
type Keys struct {
	mu   sync.RWMutex
	keys []storedKey
}

type storedKey struct {
	hash   [sha256.Size]byte
	access Access
}

var _ Authenticator = (*Keys)(nil)

// NewKeys returns an empty set of keys; add keys with Add.
func NewKeys() *Keys { return &Keys{} }

// Add adds an API key that may see the projects with the given ids, or
// every project when no id is given. It returns an error for an empty key,
// an empty project id, or a key already added.
func (k *Keys) Add(key string, projectIDs ...string) error {
	if key == "" {
		return errors.New("httpapi: an API key must not be empty")
	}
	if slices.Contains(projectIDs, "") {
		return errors.New("httpapi: a project id must not be empty")
	}
	sk := storedKey{hash: hashKey(key)}
	if len(projectIDs) == 0 {
		sk.access.AllProjects = true
	} else {
		sk.access.ProjectIDs = slices.Clone(projectIDs)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.keys {
		if s.hash == sk.hash {
			return errors.New("httpapi: this API key was already added")
		}
	}
	k.keys = append(k.keys, sk)
	return nil
}

// Authenticate implements Authenticator.
func (k *Keys) Authenticate(_ context.Context, key string) (Access, error) {
	h := hashKey(key)
	k.mu.RLock()
	defer k.mu.RUnlock()
	found := -1
	for i := range k.keys {
		eq := subtle.ConstantTimeCompare(h[:], k.keys[i].hash[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 || key == "" {
		return Access{}, ErrUnknownKey
	}
	a := k.keys[found].access
	if a.ProjectIDs != nil {
		a.ProjectIDs = slices.Clone(a.ProjectIDs)
	}
	return a, nil
}

// hashKey returns the SHA-256 hash of key, without a heap copy of a key
// of usual length.
func hashKey(key string) [sha256.Size]byte {
	var buf [128]byte
	if len(key) <= len(buf) {
		return sha256.Sum256(append(buf[:0], key...))
	}
	return sha256.Sum256([]byte(key))
}
