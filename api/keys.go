package api

import (
	"time"

	"github.com/promptkit/prompts"
)

// Key sources: a key kept in the server's Store, made by POST /keys, or
// one of the server's configuration (read-only: no id, no times).
const (
	KeySourceStore  = "store"
	KeySourceConfig = "config"
)

// Key is an API key as GET /keys answers it, never with its secret:
// project_ids null for every project; id, created_at null for a key of
// the server's configuration (source "config"); expires_at and
// last_used_at null for never. The answer to POST /keys holds the secret
// too, the only time it is shown.
type Key struct {
	ID         *string    `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	ProjectIDs []string   `json:"project_ids,format:emitnull"`
	CreatedAt  *time.Time `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	ExpiresAt  *time.Time `json:"expires_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	LastUsedAt *time.Time `json:"last_used_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
	Source     string     `json:"source"`
	Secret     string     `json:"secret,omitempty"`
}

// FromAPIKey returns the JSON form of a key kept in a Store.
func FromAPIKey(k prompts.APIKey) Key {
	k = k.Copy()
	id := k.ID
	created := utc(k.CreatedAt)
	out := Key{ID: &id, Name: k.Name, Role: string(k.Role), ProjectIDs: k.ProjectIDs, CreatedAt: &created, Source: KeySourceStore}
	if k.ExpiresAt != nil {
		t := utc(*k.ExpiresAt)
		out.ExpiresAt = &t
	}
	if k.LastUsedAt != nil {
		t := utc(*k.LastUsedAt)
		out.LastUsedAt = &t
	}
	return out
}

// FromNewAPIKey returns the JSON form of a key just created: with its
// secret.
func FromNewAPIKey(k prompts.APIKey, secret string) Key {
	out := FromAPIKey(k)
	out.Secret = secret
	return out
}

// Domain returns a stored key as package prompts has it (a configured
// key has no id: its ID is "").
func (k Key) Domain() prompts.APIKey {
	out := prompts.APIKey{ID: deref(k.ID), Name: k.Name, Role: prompts.KeyRole(k.Role), ProjectIDs: k.ProjectIDs, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt}
	if k.CreatedAt != nil {
		out.CreatedAt = utc(*k.CreatedAt)
	}
	return out.Copy()
}

// NewKey is the body of POST /keys: project_ids null or absent for every
// project the creating key may see; expires_at absent or null for never.
type NewKey struct {
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	ProjectIDs []string   `json:"project_ids,omitzero"`
	ExpiresAt  *time.Time `json:"expires_at,omitzero"`
}
