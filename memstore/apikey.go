package memstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/promptkit/prompts"
)

// The API keys (prompts.KeyStore): s.keys by id, s.keyOrder their ids
// sorted, s.keyByHash and s.keyByName the ids by the SHA-256 of their
// secret and by name. A revoked key is removed; its events stay.

var _ prompts.KeyStore = (*Store)(nil)

// storedKey is a key with the SHA-256 of its secret.
type storedKey struct {
	key  prompts.APIKey
	hash [sha256.Size]byte
}

// CreateKey implements prompts.KeyStore.
func (s *Store) CreateKey(ctx context.Context, in prompts.NewAPIKey) (prompts.APIKey, string, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.APIKey{}, "", err
	}
	secret := prompts.NewKeySecret()
	var out prompts.APIKey
	err := s.change(func(now time.Time) (entry, error) {
		if err := in.CheckKey(now); err != nil {
			return entry{}, err
		}
		for _, id := range in.ProjectIDs {
			if _, ok := s.projects[id]; !ok {
				return entry{}, prompts.NotFound("project")
			}
		}
		if _, ok := s.keyByName[in.Name]; ok {
			return entry{}, &prompts.Error{Code: prompts.CodeConflict, Message: "a key named " + in.Name + " exists"}
		}
		last := ""
		if n := len(s.keyOrder); n > 0 {
			last = s.keyOrder[n-1]
		}
		k := &storedKey{hash: prompts.HashKeySecret(secret), key: prompts.APIKey{
			ID: prompts.NewIDAfter(now, last), Name: in.Name, Role: in.Role, ProjectIDs: in.ProjectIDs,
			CreatedAt: now, ExpiresAt: in.ExpiresAt,
		}}
		if k.key.ExpiresAt != nil {
			t := k.key.ExpiresAt.UTC().Truncate(time.Microsecond)
			k.key.ExpiresAt = &t
		}
		k.key = k.key.Copy()
		s.addKey(k)
		out = k.key.Copy()
		ev := k.key.Copy()
		s.emit(prompts.Event{Type: prompts.EventKeyCreated, CreatedAt: now, Key: &ev})
		return entry{Key: fileKeyOf(k)}, nil
	})
	if err != nil {
		return prompts.APIKey{}, "", err
	}
	return out, secret, nil
}

// addKey keeps k, in place of a key of the same id; s.mu is held.
func (s *Store) addKey(k *storedKey) {
	if old, ok := s.keys[k.key.ID]; ok {
		delete(s.keyByHash, old.hash)
		delete(s.keyByName, old.key.Name)
	} else {
		s.keyOrder = insertSorted(s.keyOrder, k.key.ID)
	}
	s.keys[k.key.ID] = k
	s.keyByHash[k.hash] = k.key.ID
	s.keyByName[k.key.Name] = k.key.ID
}

// removeKey forgets the key id; s.mu is held.
func (s *Store) removeKey(id string) {
	k, ok := s.keys[id]
	if !ok {
		return
	}
	delete(s.keys, id)
	delete(s.keyByHash, k.hash)
	delete(s.keyByName, k.key.Name)
	if i, ok := slices.BinarySearch(s.keyOrder, id); ok {
		s.keyOrder = slices.Delete(s.keyOrder, i, i+1)
	}
}

// ListKeys implements prompts.KeyStore.
func (s *Store) ListKeys(ctx context.Context, f prompts.KeyFilter) ([]prompts.APIKey, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	out := []prompts.APIKey{}
	i, _ := slices.BinarySearch(s.keyOrder, f.After)
	if i < len(s.keyOrder) && s.keyOrder[i] == f.After {
		i++
	}
	for ; i < len(s.keyOrder); i++ {
		k := s.keys[s.keyOrder[i]].key
		if !f.Keeps(k) {
			continue
		}
		if len(out) == f.Size() {
			return out, true, nil
		}
		out = append(out, k.Copy())
	}
	return out, false, nil
}

// RevokeKey implements prompts.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, in prompts.KeyRevocation) (prompts.APIKey, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.APIKey{}, err
	}
	var out prompts.APIKey
	err := s.change(func(now time.Time) (entry, error) {
		k, ok := s.keys[in.ID]
		if !ok {
			return entry{}, prompts.NotFound("key")
		}
		if err := in.CheckRevoke(k.key); err != nil {
			return entry{}, err
		}
		s.removeKey(in.ID)
		out = k.key.Copy()
		ev := k.key.Copy()
		s.emit(prompts.Event{Type: prompts.EventKeyRevoked, CreatedAt: now, Key: &ev})
		return entry{Unkey: in.ID}, nil
	})
	if err != nil {
		return prompts.APIKey{}, err
	}
	return out, nil
}

// LookupKey implements prompts.KeyStore.
func (s *Store) LookupKey(ctx context.Context, hash [sha256.Size]byte) (prompts.APIKey, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return prompts.APIKey{}, err
	}
	defer s.mu.RUnlock()
	id, ok := s.keyByHash[hash]
	if !ok {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	k := s.keys[id].key
	if k.Expired(s.clock.Now()) {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	return k.Copy(), nil
}

// TouchKey implements prompts.KeyStore. A touch that moves nothing takes
// the read lock only.
func (s *Store) TouchKey(ctx context.Context, id string, at time.Time) (bool, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return false, err
	}
	k, ok := s.keys[id]
	fresh := ok && recentlyUsed(k.key, at)
	s.mu.RUnlock()
	if !ok {
		return false, prompts.NotFound("key")
	}
	if fresh {
		return false, nil
	}
	moved := false
	err := s.change(func(time.Time) (entry, error) {
		k, ok := s.keys[id]
		if !ok {
			return entry{}, prompts.NotFound("key")
		}
		if recentlyUsed(k.key, at) {
			return entry{}, nil
		}
		t := at.UTC().Truncate(time.Microsecond)
		k.key.LastUsedAt = &t
		moved = true
		return entry{Key: fileKeyOf(k)}, nil
	})
	return moved, err
}

// recentlyUsed reports whether k's last use is within
// prompts.KeyTouchInterval before at (or after it).
func recentlyUsed(k prompts.APIKey, at time.Time) bool {
	return k.LastUsedAt != nil && at.Before(k.LastUsedAt.Add(prompts.KeyTouchInterval))
}

// fileKey is a key as the journal holds it: with the hex SHA-256 of its
// secret, except in an event.
type fileKey struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Role       prompts.KeyRole `json:"role"`
	ProjectIDs []string        `json:"project_ids"`
	CreatedAt  time.Time       `json:"created_at"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
	LastUsedAt *time.Time      `json:"last_used_at,omitempty"`
	Hash       string          `json:"hash,omitempty"`
}

func fileKeyOf(k *storedKey) *fileKey {
	fk := fileKeyOfAPIKey(k.key)
	fk.Hash = hex.EncodeToString(k.hash[:])
	return fk
}

func fileKeyOfAPIKey(k prompts.APIKey) *fileKey {
	k = k.Copy()
	return &fileKey{ID: k.ID, Name: k.Name, Role: k.Role, ProjectIDs: k.ProjectIDs, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt}
}

func (fk *fileKey) apiKey() prompts.APIKey {
	return prompts.APIKey{ID: fk.ID, Name: fk.Name, Role: fk.Role, ProjectIDs: fk.ProjectIDs, CreatedAt: fk.CreatedAt, ExpiresAt: fk.ExpiresAt, LastUsedAt: fk.LastUsedAt}.Copy()
}

// applyKey puts a key's record read back into s.
func (s *Store) applyKey(e entry) {
	if fk := e.Key; fk != nil {
		var k storedKey
		if b, err := hex.DecodeString(fk.Hash); err != nil || len(b) != sha256.Size {
			s.log.Warn("memstore: dropped an API key without a valid hash", "key", fk.ID)
		} else {
			copy(k.hash[:], b)
			k.key = fk.apiKey()
			s.addKey(&k)
		}
	}
	if e.Unkey != "" {
		s.removeKey(e.Unkey)
	}
}

// compactKeys adds the records of the keys to a compaction; s.mu is held.
func (s *Store) compactKeys(add func(entry) error) error {
	var err error
	for _, id := range s.keyOrder {
		if e := add(entry{Key: fileKeyOf(s.keys[id])}); e != nil {
			err = e
		}
	}
	return err
}
