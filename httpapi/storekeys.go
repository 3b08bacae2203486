package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/promptkit/prompts"
)

// StoreKeys is an Authenticator for the keys of a configuration (a
// *Keys, which may be nil) and the keys a Store keeps (prompts.KeyStore):
// a presented key is looked for among the configured keys first, in
// constant time as Keys does, then, when it has the form of a kept key's
// secret (prompts.KeySecretPrefix), in the Store by its SHA-256. No secret
// is compared there: the Store finds the hash on an index, and what a
// lookup's time may tell is about a hash, which tells nothing of any
// secret.
//
// A kept key that is revoked, expired or unknown is refused as an
// unknown key (401). Each use moves the key's last use, at most once a
// minute (prompts.KeyStore.TouchKey).
//
// While Watch runs, StoreKeys remembers the keys it looked up (and the
// secrets it found no key for), at most DefaultKeyCacheSize of each, so
// that a request costs no lookup; Watch follows the Store's event log
// and forgets a key when the log says it was revoked, here or on any
// other process on the same data: within a second of the revocation's
// commit with sqlstore (at once with its Feed), at once with memstore.
// Forget, which the handler calls when it revokes a key, forgets it at
// once. Without Watch every request looks its key up: slower, never
// stale. StoreKeys starts no goroutine.
type StoreKeys struct {
	config *Keys
	store  prompts.KeyStore
	log    *slog.Logger
	now    func() time.Time
	size   int

	mu       sync.Mutex
	watching bool   // Watch runs and has caught up with the log
	gen      uint64 // moves on at every forgetting: a lookup begun before does not fill the cache
	known    map[[sha256.Size]byte]cachedKey
	unknown  map[[sha256.Size]byte]struct{}
}

type cachedKey struct {
	key     prompts.APIKey
	touched time.Time // the last use StoreKeys recorded or saw
	at      time.Time // when it was looked up
}

// DefaultKeyCacheSize is how many kept keys, and how many unknown
// secrets, a StoreKeys remembers at most.
const DefaultKeyCacheSize = 4096

// keyCacheTTL bounds how long a kept key is remembered without a new
// lookup, even while Watch sees no revocation.
const keyCacheTTL = 5 * time.Minute

// StoreKeysOption configures a StoreKeys.
type StoreKeysOption func(*StoreKeys)

// WithKeysLogger sets where a StoreKeys logs what fails around a request
// (a last use it could not record, a watch that lost the log); default
// none. Secrets are never logged.
func WithKeysLogger(l *slog.Logger) StoreKeysOption {
	return func(k *StoreKeys) {
		if l != nil {
			k.log = l
		}
	}
}

// WithKeysClock sets the clock that decides expiry and last use (default
// time.Now).
func WithKeysClock(now func() time.Time) StoreKeysOption {
	return func(k *StoreKeys) {
		if now != nil {
			k.now = now
		}
	}
}

// NewStoreKeys returns the Authenticator of the configured keys (nil:
// none) and of the keys store keeps.
func NewStoreKeys(config *Keys, store prompts.KeyStore, opts ...StoreKeysOption) *StoreKeys {
	k := &StoreKeys{
		config: config, store: store, now: time.Now, size: DefaultKeyCacheSize,
		log:     slog.New(slog.DiscardHandler),
		known:   make(map[[sha256.Size]byte]cachedKey),
		unknown: make(map[[sha256.Size]byte]struct{}),
	}
	for _, o := range opts {
		o(k)
	}
	return k
}

var _ Authenticator = (*StoreKeys)(nil)

// Authenticate implements Authenticator. Access.KeyID names a kept key.
func (k *StoreKeys) Authenticate(ctx context.Context, secret string) (Access, error) {
	if k.config != nil {
		a, err := k.config.Authenticate(ctx, secret)
		if !errors.Is(err, ErrUnknownKey) {
			return a, err
		}
	}
	if k.store == nil || !strings.HasPrefix(secret, prompts.KeySecretPrefix) {
		return Access{}, ErrUnknownKey
	}
	hash := prompts.HashKeySecret(secret)
	now := k.now()
	key, touched, err := k.lookup(ctx, hash, now)
	if err != nil {
		return Access{}, err
	}
	if key.Expired(now) {
		return Access{}, ErrUnknownKey
	}
	if !now.Before(touched.Add(prompts.KeyTouchInterval)) {
		k.touch(ctx, hash, key.ID, now)
	}
	return accessOf(key), nil
}

// lookup returns the kept key of hash, from memory while Watch runs, and
// the time of its last use known here.
func (k *StoreKeys) lookup(ctx context.Context, hash [sha256.Size]byte, now time.Time) (prompts.APIKey, time.Time, error) {
	k.mu.Lock()
	watching, gen := k.watching, k.gen
	if watching {
		if c, ok := k.known[hash]; ok && now.Before(c.at.Add(keyCacheTTL)) {
			k.mu.Unlock()
			return c.key, c.touched, nil
		}
		if _, ok := k.unknown[hash]; ok {
			k.mu.Unlock()
			return prompts.APIKey{}, time.Time{}, ErrUnknownKey
		}
	}
	k.mu.Unlock()
	key, err := k.store.LookupKey(ctx, hash)
	if errors.Is(err, prompts.ErrNotFound) {
		k.remember(gen, func() {
			if len(k.unknown) >= k.size {
				clear(k.unknown)
			}
			k.unknown[hash] = struct{}{}
		})
		return prompts.APIKey{}, time.Time{}, ErrUnknownKey
	}
	if err != nil {
		return prompts.APIKey{}, time.Time{}, err
	}
	var touched time.Time
	if key.LastUsedAt != nil {
		touched = *key.LastUsedAt
	}
	k.remember(gen, func() {
		if len(k.known) >= k.size {
			clear(k.known)
		}
		k.known[hash] = cachedKey{key: key.Copy(), touched: touched, at: now}
	})
	return key, touched, nil
}

// remember runs fill under the lock when Watch runs and nothing was
// forgotten since gen.
func (k *StoreKeys) remember(gen uint64, fill func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.watching && k.gen == gen {
		fill()
	}
}

// touch records a use of the key at now; a failure is logged, not the
// request's.
func (k *StoreKeys) touch(ctx context.Context, hash [sha256.Size]byte, id string, now time.Time) {
	if _, err := k.store.TouchKey(ctx, id, now); err != nil && !errors.Is(err, prompts.ErrNotFound) {
		k.log.WarnContext(ctx, "httpapi: recording the last use of a key failed", "key_id", id, "err", err)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.known[hash]; ok {
		c.touched = now
		k.known[hash] = c
	}
}

// accessOf returns what a kept key may do.
func accessOf(key prompts.APIKey) Access {
	role, _ := ParseRole(string(key.Role))
	a := Access{Name: key.Name, Role: role, KeyID: key.ID}
	if key.ExpiresAt != nil {
		a.ExpiresAt = *key.ExpiresAt
	}
	if key.ProjectIDs == nil {
		a.AllProjects = true
	} else {
		a.ProjectIDs = slices.Clone(key.ProjectIDs)
	}
	return a
}

// Forget drops what StoreKeys remembers of the kept key id (all keys
// when id is ""): the next request with it looks it up again.
func (k *StoreKeys) Forget(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	if id == "" {
		clear(k.known)
	} else {
		for h, c := range k.known {
			if c.key.ID == id {
				delete(k.known, h)
			}
		}
	}
	clear(k.unknown) // a key created may be one of them
}

// setWatching turns the memory on or off; off forgets everything.
func (k *StoreKeys) setWatching(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.watching = on
	k.gen++
	clear(k.known)
	clear(k.unknown)
}

// keyEvents keeps only the events of no project: those of keys.
var keyEvents = []string{""}

// Watch follows log, the event log of the Store whose keys k reads, and
// forgets each key it reports revoked, until ctx ends; it returns ctx's
// error. While it runs and sees the log, k remembers keys; when the log
// fails, k forgets everything and looks every key up until Watch sees
// the log again (it retries, waiting up to a few seconds). Run it on a
// goroutine of the application's, once:
//
//	go keys.Watch(ctx, log)
func (k *StoreKeys) Watch(ctx context.Context, log prompts.EventLog) error {
	defer k.setWatching(false)
	wait := 100 * time.Millisecond
	for {
		err := k.follow(ctx, log)
		k.setWatching(false)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		k.log.WarnContext(ctx, "httpapi: following the event log for key revocations failed; every key is looked up until it recovers", "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// follow reads the key events of log from its newest on, forgetting the
// keys revoked, until an error (ctx's included).
func (k *StoreKeys) follow(ctx context.Context, log prompts.EventLog) error {
	after, err := log.LastEventID(ctx)
	if err != nil {
		return err
	}
	k.setWatching(true)
	for {
		if err := log.WaitEvents(ctx, after); err != nil {
			return err
		}
		// Every key event up to last is in the pages read next (ids
		// follow the order of the commits): after can move to last
		// even when none was a key's.
		last, err := log.LastEventID(ctx)
		if err != nil {
			return err
		}
		for {
			page, more, err := log.ListEvents(ctx, prompts.EventFilter{After: after, ProjectIDs: keyEvents, Limit: prompts.MaxLimit})
			if err != nil {
				return err
			}
			for _, e := range page {
				switch {
				case e.Type == prompts.EventKeyRevoked && e.Key != nil:
					k.Forget(e.Key.ID)
				case e.Type == prompts.EventKeyCreated:
					k.mu.Lock()
					clear(k.unknown)
					k.mu.Unlock()
				}
				after = max(after, e.ID)
			}
			if !more {
				break
			}
		}
		after = max(after, last)
	}
}

// ConfiguredKeys returns the keys of the configuration, without secrets.
func (k *StoreKeys) ConfiguredKeys() []Access {
	if k.config == nil {
		return nil
	}
	return k.config.ConfiguredKeys()
}

// KeyStore returns the Store whose keys k reads.
func (k *StoreKeys) KeyStore() prompts.KeyStore { return k.store }
