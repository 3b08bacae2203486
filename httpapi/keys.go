package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/promptkit/prompts"
)

// Keys is an Authenticator for a fixed set of named API keys, each with a
// role, for every project or for a named set of projects. It keeps only
// the SHA-256 hash of each secret, and compares a presented key with every
// stored hash in constant time, without stopping at a match. Since the
// hash is not salted or slowed, secrets should be long random strings (32
// random bytes, encoded), not passwords; Add refuses secrets shorter than
// MinSecretLength. A Keys is safe for concurrent use, Add included.
type Keys struct {
	mu   sync.RWMutex
	keys []storedKey
}

type storedKey struct {
	hash   [sha256.Size]byte
	access Access
}

var _ Authenticator = (*Keys)(nil)

// MinSecretLength is the length under which Add refuses a secret.
const MinSecretLength = 16

// Key is an API key for Keys.Add.
type Key struct {
	// Name names the key in the deployment history and in logs, never
	// its secret: 1 to 64 ASCII letters, digits, '.', '_' and '-', unique
	// within a Keys.
	Name string
	Role Role
	// Secret is what clients send in X-API-Key, at least MinSecretLength
	// bytes; or, when it is empty, Hash is its SHA-256 in the form
	// "sha256:<64 hex digits>", so that the secret itself appears nowhere
	// in the configuration.
	Secret string
	Hash   string
	// ProjectIDs are the projects the key may see; none means every
	// project, present and future.
	ProjectIDs []string
}

// NewKeys returns an empty set of keys; add keys with Add.
func NewKeys() *Keys { return &Keys{} }

// Add adds a key. It returns an error naming the problem, and adds
// nothing, for an invalid or duplicate name, an unknown role, a secret
// that is too short or given along with a hash, a malformed hash, an
// empty project id, or a secret already added. Its errors never hold the
// secret.
func (k *Keys) Add(key Key) error {
	if !prompts.ValidKeyName(key.Name) {
		// The name is not echoed: a secret given as a name must not show.
		return errors.New("httpapi: a key name must be 1 to 64 ASCII letters, digits, '.', '_' or '-'")
	}
	if key.Role < RoleRead || key.Role > RoleAdmin {
		return fmt.Errorf("httpapi: key %s: unknown role %d", key.Name, key.Role)
	}
	sk := storedKey{access: Access{Name: key.Name, Role: key.Role}}
	switch {
	case key.Secret != "" && key.Hash != "":
		return fmt.Errorf("httpapi: key %s: give a secret or its hash, not both", key.Name)
	case key.Secret != "":
		if len(key.Secret) < MinSecretLength {
			return fmt.Errorf("httpapi: key %s: the secret must be at least %d characters", key.Name, MinSecretLength)
		}
		sk.hash = hashKey(key.Secret)
	default:
		h, ok := strings.CutPrefix(key.Hash, "sha256:")
		b, err := hex.DecodeString(h)
		if !ok || err != nil || len(b) != sha256.Size {
			return fmt.Errorf("httpapi: key %s: the hash must be sha256: and 64 hex digits", key.Name)
		}
		copy(sk.hash[:], b)
	}
	if slices.Contains(key.ProjectIDs, "") {
		return fmt.Errorf("httpapi: key %s: a project id must not be empty", key.Name)
	}
	if len(key.ProjectIDs) == 0 {
		sk.access.AllProjects = true
	} else {
		sk.access.ProjectIDs = slices.Clone(key.ProjectIDs)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.keys {
		if s.access.Name == key.Name {
			return fmt.Errorf("httpapi: key %s: a key with this name was already added", key.Name)
		}
		if s.hash == sk.hash {
			return fmt.Errorf("httpapi: key %s: its secret is the secret of key %s", key.Name, s.access.Name)
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

// ConfiguredKeys returns the keys added, in the order of Add, without
// secrets: what GET /keys lists as the configuration's.
func (k *Keys) ConfiguredKeys() []Access {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]Access, len(k.keys))
	for i, s := range k.keys {
		out[i] = s.access
		out[i].ProjectIDs = slices.Clone(s.access.ProjectIDs)
	}
	return out
}
