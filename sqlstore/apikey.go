package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// The API keys (prompts.KeyStore), in the table api_keys: the SHA-256 of
// each secret, never the secret. A write of keys runs in a transaction
// that appends its event (key.created, key.revoked) when it commits, as
// every other write does.

var _ prompts.KeyStore = (*Store)(nil)

const apiKeyCols = `id, name, role, project_ids, created_at, expires_at, last_used_at`

// CreateKey implements prompts.KeyStore. Of concurrent creates of one
// name, the unique index lets one commit; the others, having waited for
// it, insert nothing and are ErrConflict.
func (s *Store) CreateKey(ctx context.Context, in prompts.NewAPIKey) (prompts.APIKey, string, error) {
	type created struct {
		k      prompts.APIKey
		secret string
	}
	c, err := bounded(ctx, func() (created, error) {
		k, secret, err := s.createKey(ctx, in)
		return created{k, secret}, err
	})
	return c.k, c.secret, err
}

func (s *Store) createKey(ctx context.Context, in prompts.NewAPIKey) (prompts.APIKey, string, error) {
	if err := in.Validate(); err != nil {
		return prompts.APIKey{}, "", err
	}
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	if err := in.CheckKey(now); err != nil {
		return prompts.APIKey{}, "", err
	}
	secret := prompts.NewKeySecret()
	hash := prompts.HashKeySecret(secret)
	k := prompts.APIKey{ID: prompts.NewID(now), Name: in.Name, Role: in.Role, ProjectIDs: in.ProjectIDs, CreatedAt: now, ExpiresAt: in.ExpiresAt}.Copy()
	if k.ExpiresAt != nil {
		t := k.ExpiresAt.UTC().Truncate(time.Microsecond)
		k.ExpiresAt = &t
	}
	q := s.quoted()
	t, err := s.begin(ctx)
	if err != nil {
		return prompts.APIKey{}, "", err
	}
	defer t.Rollback()
	if k.ProjectIDs != nil {
		var n int
		if err := t.GetContext(ctx, &n, `SELECT count(*) FROM `+q+`.projects WHERE id = ANY ($1::text[])`, pq.StringArray(k.ProjectIDs)); err != nil {
			return prompts.APIKey{}, "", s.fail(ctx, err)
		}
		if n != len(k.ProjectIDs) {
			return prompts.APIKey{}, "", prompts.NotFound("project")
		}
	}
	var projects any // NULL: every project
	if k.ProjectIDs != nil {
		projects = pq.StringArray(k.ProjectIDs)
	}
	res, err := t.ExecContext(ctx, `INSERT INTO `+q+`.api_keys (id, name, role, project_ids, hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING`,
		k.ID, k.Name, string(k.Role), projects, hash[:], k.CreatedAt, k.ExpiresAt)
	if err != nil {
		return prompts.APIKey{}, "", s.fail(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return prompts.APIKey{}, "", s.fail(ctx, err)
		}
		return prompts.APIKey{}, "", &prompts.Error{Code: prompts.CodeConflict, Message: "a key named " + k.Name + " exists"}
	}
	ev, err := keyEvent(prompts.EventKeyCreated, k, now)
	if err != nil {
		return prompts.APIKey{}, "", prompts.Internal(err)
	}
	t.emit(ev)
	if err := t.commit(ctx); err != nil {
		return prompts.APIKey{}, "", s.fail(ctx, err)
	}
	s.wake()
	return k, secret, nil
}

// keyEvent returns the event of key k at at: the key in data.
func keyEvent(typ prompts.EventType, k prompts.APIKey, at time.Time) (pendingEvent, error) {
	b, err := json.Marshal(eventKeyOf(k))
	if err != nil {
		return pendingEvent{}, err
	}
	return pendingEvent{typ: typ, data: string(b), at: at}, nil
}

// eventKey is a key as the data of its event's row holds it.
type eventKey struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Role       prompts.KeyRole `json:"role"`
	ProjectIDs []string        `json:"project_ids"`
	CreatedAt  time.Time       `json:"created_at"`
	ExpiresAt  *time.Time      `json:"expires_at"`
	LastUsedAt *time.Time      `json:"last_used_at"`
}

func eventKeyOf(k prompts.APIKey) eventKey {
	return eventKey{ID: k.ID, Name: k.Name, Role: k.Role, ProjectIDs: k.ProjectIDs, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt}
}

func (e eventKey) key() prompts.APIKey {
	k := prompts.APIKey{ID: e.ID, Name: e.Name, Role: e.Role, ProjectIDs: e.ProjectIDs, CreatedAt: e.CreatedAt.UTC(), ExpiresAt: e.ExpiresAt, LastUsedAt: e.LastUsedAt}
	for _, p := range []**time.Time{&k.ExpiresAt, &k.LastUsedAt} {
		if *p != nil {
			t := (*p).UTC()
			*p = &t
		}
	}
	return k
}

// keyRow receives the columns apiKeyCols.
type keyRow struct {
	k                 prompts.APIKey
	role              string
	projects          pq.StringArray
	expires, lastUsed sql.NullTime
}

func (r *keyRow) dest() []any {
	return []any{&r.k.ID, &r.k.Name, &r.role, &r.projects, &r.k.CreatedAt, &r.expires, &r.lastUsed}
}

func (r *keyRow) key() prompts.APIKey {
	k := r.k
	k.Role = prompts.KeyRole(r.role)
	k.CreatedAt = k.CreatedAt.UTC()
	if r.projects != nil {
		k.ProjectIDs = []string(r.projects)
	}
	if r.expires.Valid {
		t := r.expires.Time.UTC()
		k.ExpiresAt = &t
	}
	if r.lastUsed.Valid {
		t := r.lastUsed.Time.UTC()
		k.LastUsedAt = &t
	}
	return k
}

func scanKey(sc scanner) (prompts.APIKey, error) {
	var r keyRow
	if err := sc.Scan(r.dest()...); err != nil {
		return prompts.APIKey{}, err
	}
	return r.key(), nil
}

// ListKeys implements prompts.KeyStore. It pages on the primary key.
func (s *Store) ListKeys(ctx context.Context, f prompts.KeyFilter) ([]prompts.APIKey, bool, error) {
	return boundedPage(ctx, func() ([]prompts.APIKey, bool, error) {
		if err := f.Validate(); err != nil {
			return nil, false, err
		}
		n := f.Size()
		var within any
		if f.Within != nil {
			within = pq.StringArray(append([]string{}, f.Within...))
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+apiKeyCols+` FROM `+s.quoted()+`.api_keys
			WHERE id > $1 AND ($3::text[] IS NULL OR (project_ids IS NOT NULL AND project_ids <@ $3::text[]))
			ORDER BY id LIMIT $2`, f.After, n+1, within)
		if err != nil {
			return nil, false, s.fail(ctx, err)
		}
		defer rows.Close()
		out := []prompts.APIKey{}
		for rows.Next() {
			k, err := scanKey(rows)
			if err != nil {
				return nil, false, s.fail(ctx, err)
			}
			out = append(out, k)
		}
		if err := rows.Err(); err != nil {
			return nil, false, s.fail(ctx, err)
		}
		if len(out) > n {
			return out[:n], true, nil
		}
		return out, false, nil
	})
}

// RevokeKey implements prompts.KeyStore: the key's row, locked, checked
// against the revoker's grant, deleted, with its event.
func (s *Store) RevokeKey(ctx context.Context, in prompts.KeyRevocation) (prompts.APIKey, error) {
	return bounded(ctx, func() (prompts.APIKey, error) { return s.revokeKey(ctx, in) })
}

func (s *Store) revokeKey(ctx context.Context, in prompts.KeyRevocation) (prompts.APIKey, error) {
	if err := in.Validate(); err != nil {
		return prompts.APIKey{}, err
	}
	if !prompts.ValidID(in.ID) {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	q := s.quoted()
	t, err := s.begin(ctx)
	if err != nil {
		return prompts.APIKey{}, err
	}
	defer t.Rollback()
	k, err := scanKey(t.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM `+q+`.api_keys WHERE id = $1 FOR UPDATE`, in.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.APIKey{}, prompts.NotFound("key")
	}
	if err != nil {
		return prompts.APIKey{}, s.fail(ctx, err)
	}
	if err := in.CheckRevoke(k); err != nil {
		return prompts.APIKey{}, err
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM `+q+`.api_keys WHERE id = $1`, in.ID); err != nil {
		return prompts.APIKey{}, s.fail(ctx, err)
	}
	ev, err := keyEvent(prompts.EventKeyRevoked, k, s.clock.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return prompts.APIKey{}, prompts.Internal(err)
	}
	t.emit(ev)
	if err := t.commit(ctx); err != nil {
		return prompts.APIKey{}, s.fail(ctx, err)
	}
	s.wake()
	return k, nil
}

// LookupKey implements prompts.KeyStore: one probe of the unique index on
// the hash.
func (s *Store) LookupKey(ctx context.Context, hash [sha256.Size]byte) (prompts.APIKey, error) {
	return bounded(ctx, func() (prompts.APIKey, error) {
		k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM `+s.quoted()+`.api_keys
			WHERE hash = $1 AND (expires_at IS NULL OR expires_at > $2)`, hash[:], s.clock.Now()))
		if errors.Is(err, sql.ErrNoRows) {
			return prompts.APIKey{}, prompts.NotFound("key")
		}
		if err != nil {
			return prompts.APIKey{}, s.fail(ctx, err)
		}
		return k, nil
	})
}

// TouchKey implements prompts.KeyStore: one UPDATE that changes the row
// only when its last use is a minute old or more.
func (s *Store) TouchKey(ctx context.Context, id string, at time.Time) (bool, error) {
	return bounded(ctx, func() (bool, error) {
		if !prompts.ValidID(id) {
			return false, prompts.NotFound("key")
		}
		at = at.UTC().Truncate(time.Microsecond)
		var moved, exists bool
		err := s.db.QueryRowContext(ctx, `WITH u AS (
	UPDATE `+s.quoted()+`.api_keys SET last_used_at = $2
	WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 minute')
	RETURNING id
)
SELECT EXISTS (SELECT FROM u), EXISTS (SELECT FROM `+s.quoted()+`.api_keys WHERE id = $1)`, id, at).Scan(&moved, &exists)
		if err != nil {
			return false, s.fail(ctx, err)
		}
		if !moved && !exists {
			return false, prompts.NotFound("key")
		}
		return moved, nil
	})
}
