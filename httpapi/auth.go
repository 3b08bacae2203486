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

// Access is what one API key may do and see: its Role, and every project
// or the projects named. The resources of any other project are answered
// exactly as if they did not exist (404), and never appear in lists.
type Access struct {
	// Name names the key (or whoever holds it): the actor of the changes
	// it makes, in the deployment history. "" records none. It must be
	// valid UTF-8 without NUL, of at most prompts.MaxName characters: a
	// request whose Access has another is answered 500, the authenticator's
	// fault, not the client's.
	Name string
	// Role is what the key may do. The zero Role allows nothing: an
	// Authenticator must say what each key may do.
	Role        Role
	AllProjects bool     // every project, present and future
	ProjectIDs  []string // else only these (none when empty)
}

// Role is what a key may do. Each role allows all that the one before it
// allows. A request its key's role does not allow is answered 403
// (forbidden, naming the role it needs) and changes nothing.
type Role int

// The roles, from the least to the most.
const (
	RoleRead   Role = iota + 1 // every GET (and HEAD)
	RoleWrite                  // also: create and update prompts, create versions that activate nothing
	RoleDeploy                 // also: activate, deactivate, roll back, create versions active in environments
	RoleAdmin                  // everything
)

var roleNames = [...]string{"", "read", "write", "deploy", "admin"}

// String returns the role's name in lower case: read, write, deploy or
// admin.
func (r Role) String() string {
	if r < RoleRead || r > RoleAdmin {
		return "none"
	}
	return roleNames[r]
}

// ParseRole returns the role with this name: read, write, deploy or admin.
func ParseRole(name string) (Role, error) {
	for r := RoleRead; r <= RoleAdmin; r++ {
		if roleNames[r] == name {
			return r, nil
		}
	}
	return 0, fmt.Errorf("httpapi: unknown role %q: want read, write, deploy or admin", name)
}

// allows reports whether a key of role r may do what needs role need.
func (r Role) allows(need Role) bool { return r >= need && r <= RoleAdmin }

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
	if !validKeyName(key.Name) {
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

// validKeyName reports whether name is 1 to 64 ASCII letters, digits,
// '.', '_' and '-'.
func validKeyName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
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
