package prompts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"time"
)

// KeyRole is what an API key may do: KeyRead, KeyWrite, KeyDeploy or
// KeyAdmin, each allowing all that the one before it allows (package
// httpapi maps each route to the least role it needs).
type KeyRole string

// The roles, from the least to the most.
const (
	KeyRead   KeyRole = "read"   // every read, and rendering
	KeyWrite  KeyRole = "write"  // also: create and update prompts, versions that activate nothing
	KeyDeploy KeyRole = "deploy" // also: activate, deactivate, roll back
	KeyAdmin  KeyRole = "admin"  // everything: projects, webhooks, keys
)

// KeyRoles lists the roles, from the least to the most.
var KeyRoles = []KeyRole{KeyRead, KeyWrite, KeyDeploy, KeyAdmin}

// Rank returns 1 to 4 for KeyRead to KeyAdmin, and 0 for anything else.
func (r KeyRole) Rank() int {
	return slices.Index(KeyRoles, r) + 1
}

// Valid reports whether r is one of KeyRoles.
func (r KeyRole) Valid() bool { return r.Rank() > 0 }

// Allows reports whether a key of role r may do what needs role need.
func (r KeyRole) Allows(need KeyRole) bool { return r.Valid() && r.Rank() >= need.Rank() }

// KeySecretPrefix starts every secret of a key kept in a Store, so that
// secret scanners can find one that leaked.
const KeySecretPrefix = "pk_"

// NewKeySecret returns a new secret: KeySecretPrefix and the unpadded
// base64url of 32 random bytes from crypto/rand (46 characters in all).
func NewKeySecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return KeySecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashKeySecret returns the SHA-256 of secret: all that a Store keeps of
// it, and what KeyStore.LookupKey takes. The secret is random and long, so
// an unsalted fast hash does not weaken it.
func HashKeySecret(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// MaxKeyName is the length of the longest key name.
const MaxKeyName = 64

// ValidKeyName reports whether name is 1 to 64 ASCII letters, digits, '.',
// '_' and '-': the names of keys, kept or configured.
func ValidKeyName(name string) bool {
	if len(name) == 0 || len(name) > MaxKeyName {
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

// APIKey is an API key kept in a Store, as every read answers it: never
// with its secret, of which the Store keeps the SHA-256 only.
type APIKey struct {
	ID         string // ULID
	Name       string // unique among the Store's keys
	Role       KeyRole
	ProjectIDs []string // nil: every project, present and future
	CreatedAt  time.Time
	ExpiresAt  *time.Time // nil: never
	// LastUsedAt is when the key was last used, to the minute: TouchKey
	// moves it at most once a minute.
	LastUsedAt *time.Time
}

// Copy returns a copy of k that shares nothing with it.
func (k APIKey) Copy() APIKey {
	if k.ProjectIDs != nil {
		k.ProjectIDs = slices.Clone(k.ProjectIDs)
	}
	k.ExpiresAt = copyTime(k.ExpiresAt)
	k.LastUsedAt = copyTime(k.LastUsedAt)
	return k
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// Expired reports whether the key has expired at now.
func (k APIKey) Expired(now time.Time) bool {
	return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}

// Grant is what the key that asks for a change of keys may do: its role
// and its projects (nil: every project). The Store checks the change
// against it, in the step that makes it, so that no key can make or
// remove a key it could not be.
type Grant struct {
	Role       KeyRole
	ProjectIDs []string // nil: every project
}

// Covers reports whether g reaches every project of projectIDs (nil:
// every project).
func (g Grant) Covers(projectIDs []string) bool {
	if g.ProjectIDs == nil {
		return true
	}
	if projectIDs == nil {
		return false
	}
	for _, id := range projectIDs {
		if !slices.Contains(g.ProjectIDs, id) {
			return false
		}
	}
	return true
}

// May reports whether a key of grant g may create, or revoke, key k:
// k's role is not above g's, and g reaches each of k's projects.
func (g Grant) May(role KeyRole, projectIDs []string) bool {
	return g.Role.Valid() && g.Role.Rank() >= role.Rank() && g.Covers(projectIDs)
}

func (g Grant) check(fe *fieldErrors, field string) {
	if !g.Role.Valid() {
		fe.add(field+".role", "must be read, write, deploy or admin")
	}
	for _, id := range g.ProjectIDs {
		if !ValidID(id) {
			fe.add(field+".project_ids", "must be well-formed ids")
			break
		}
	}
}

// NewAPIKey is the input of KeyStore.CreateKey. The Store makes the
// secret; the caller sees it once, in CreateKey's answer.
type NewAPIKey struct {
	Name       string // 1 to 64 ASCII letters, digits, '.', '_', '-'
	Role       KeyRole
	ProjectIDs []string   // nil: every project (the creator's Grant must reach every project)
	ExpiresAt  *time.Time // nil: never; else after the Store's now
	// Creator is the grant of the key that asks: the new key's role must
	// not be above its role, and its projects must be among the
	// creator's; else the call is ErrForbidden.
	Creator Grant
}

// Validate checks the name, the role, the projects (well-formed ids, each
// once, not an empty list) and the creator's grant. Whether
// ExpiresAt lies ahead is the Store's to check, with its clock.
func (in NewAPIKey) Validate() error {
	var fe fieldErrors
	if !ValidKeyName(in.Name) {
		fe.add("name", "must be 1 to 64 ASCII letters, digits, '.', '_' or '-'")
	}
	if !in.Role.Valid() {
		fe.add("role", "must be read, write, deploy or admin")
	}
	checkProjectIDs(&fe, in.ProjectIDs)
	in.Creator.check(&fe, "creator")
	return fe.err()
}

func checkProjectIDs(fe *fieldErrors, ids []string) {
	if ids != nil && len(ids) == 0 {
		fe.add("project_ids", "must name at least one project, or be null for every project")
		return
	}
	for i, id := range ids {
		if !ValidID(id) {
			fe.add("project_ids", "must be well-formed ids")
			return
		}
		if slices.Contains(ids[:i], id) {
			fe.add("project_ids", "must name each project once")
			return
		}
	}
}

// CheckKey checks what only the Store can check of a new key, at its time
// now: that ExpiresAt lies ahead (ErrInvalid), and that the creator may
// make it (ErrForbidden). A Store calls it in the step that creates the
// key.
func (in NewAPIKey) CheckKey(now time.Time) error {
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return &Error{Code: CodeInvalid, Message: "invalid input", Fields: []FieldError{{Field: "expires_at", Detail: "must be in the future"}}}
	}
	return in.CheckGrant()
}

// CheckGrant checks that the creator may make the key (ErrForbidden):
// its role is not above the creator's, and its projects are among the
// creator's.
func (in NewAPIKey) CheckGrant() error {
	if in.Creator.Role.Rank() < in.Role.Rank() {
		return &Error{Code: CodeForbidden, Message: "a key may not create a key of a higher role than its own (" + string(in.Creator.Role) + ")"}
	}
	if !in.Creator.Covers(in.ProjectIDs) {
		return &Error{Code: CodeForbidden, Message: "a key of some projects may create keys of its projects only"}
	}
	return nil
}

// KeyRevocation is the input of KeyStore.RevokeKey.
type KeyRevocation struct {
	ID string
	// Revoker is the grant of the key that asks: a key it could not have
	// created is, to it, ErrNotFound when it reaches none of the key's
	// projects, else ErrForbidden.
	Revoker Grant
}

// Validate checks the revoker's grant.
func (in KeyRevocation) Validate() error {
	var fe fieldErrors
	in.Revoker.check(&fe, "revoker")
	return fe.err()
}

// CheckRevoke checks, in the step that revokes k, that the revoker may:
// nil, ErrNotFound (it may see none of k's projects, so k does not exist
// for it) or ErrForbidden.
func (in KeyRevocation) CheckRevoke(k APIKey) error {
	if in.Revoker.May(k.Role, k.ProjectIDs) {
		return nil
	}
	sees := in.Revoker.ProjectIDs == nil || k.ProjectIDs == nil
	for _, id := range k.ProjectIDs {
		sees = sees || slices.Contains(in.Revoker.ProjectIDs, id)
	}
	if !sees {
		return NotFound("key")
	}
	return &Error{Code: CodeForbidden, Message: "a key may revoke only keys it could create: of its projects, and a role not above its own"}
}

// KeyFilter selects a page of keys.
type KeyFilter struct {
	Page
	// Within, when not nil, keeps the keys whose projects are all among
	// these (keys of every project are left out): the keys that a key of
	// these projects could have created.
	Within []string
}

// Validate checks the page and the project ids.
func (f KeyFilter) Validate() error {
	if err := f.Page.Validate(); err != nil {
		return err
	}
	var fe fieldErrors
	for _, id := range f.Within {
		if !ValidID(id) {
			fe.add("within", "must be well-formed ids")
			break
		}
	}
	return fe.err()
}

// Keeps reports whether the filter keeps k.
func (f KeyFilter) Keeps(k APIKey) bool {
	return f.Within == nil || Grant{Role: KeyAdmin, ProjectIDs: f.Within}.Covers(k.ProjectIDs)
}

// KeyTouchInterval is how often, at most, TouchKey moves a key's
// LastUsedAt.
const KeyTouchInterval = time.Minute

// KeyManager manages the API keys a Store keeps: a KeyStore does, and so
// does package client's Client, over the HTTP interface (where the
// server checks the grant of the key the client sends, whatever Creator
// or Revoker says).
type KeyManager interface {
	// CreateKey stores a new key and returns it with its secret
	// (NewKeySecret's), which nothing returns again: the Store keeps its
	// SHA-256 only. A name another key has is ErrConflict; an unknown
	// project is ErrNotFound; a key its creator may not make is
	// ErrForbidden (see NewAPIKey.CheckKey).
	CreateKey(ctx context.Context, in NewAPIKey) (key APIKey, secret string, err error)
	// ListKeys returns one page of the keys, oldest first, and whether
	// more follow. Revoked keys are gone; expired ones stay until revoked.
	ListKeys(ctx context.Context, f KeyFilter) (page []APIKey, more bool, err error)
	// RevokeKey removes the key and returns it as it was: from then on
	// LookupKey does not find it. An unknown id is ErrNotFound; a key its
	// revoker may not remove is ErrNotFound or ErrForbidden (see
	// KeyRevocation.CheckRevoke).
	RevokeKey(ctx context.Context, in KeyRevocation) (APIKey, error)
}

// KeyStore is what a Store that keeps API keys offers besides Store;
// memstore's and sqlstore's do. Find it with KeyStoreOf, which also finds
// it under a wrapper that passes it through (a cache). Beside managing
// keys, it finds the key of a secret, for the server that authenticates
// requests.
//
// Key events (EventKeyCreated, EventKeyRevoked) go into the Store's
// EventLog in the step that makes the change, when it keeps one.
type KeyStore interface {
	KeyManager
	// LookupKey returns the key whose secret has this SHA-256
	// (HashKeySecret). A revoked, expired or unknown key is ErrNotFound.
	LookupKey(ctx context.Context, hash [sha256.Size]byte) (APIKey, error)
	// TouchKey sets the key's LastUsedAt to at, unless it is within
	// KeyTouchInterval before at already (so that a key in use costs one
	// write a minute), and reports whether it moved. An unknown key is
	// ErrNotFound.
	TouchKey(ctx context.Context, id string, at time.Time) (bool, error)
}

// KeyStoreOf returns the keys s keeps: s itself when it is a KeyStore,
// else the first store down its Unwrap chain that is one; false when none
// is.
func KeyStoreOf(s Store) (KeyStore, bool) { return find[KeyStore](s) }
