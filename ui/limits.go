package ui

import (
	"container/list"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"sync"
	"time"
)

// What sign-ins may cost: each sign-in form works once, a key holds a
// few sessions, and the handler holds a bounded number in all.

// Defaults of WithSessionLimits.
const (
	// DefaultSessionsPerKey is how many sessions one API key holds at
	// most: signing in once more ends its least recently used.
	DefaultSessionsPerKey = 10
	// DefaultMaxSessions is how many sessions a handler holds at most:
	// one more ends the least recently used of all.
	DefaultMaxSessions = 10_000
)

// WithSessionLimits sets how many sessions one API key may hold at once
// (perKey) and how many the handler holds in all (total):
// DefaultSessionsPerKey (10) and DefaultMaxSessions (10,000) unless set.
// A sign-in past either limit ends the session used least recently (of
// that key, or of all) and deletes it from the SessionStore: its browser
// is asked to sign in again. Both must be at least 1, and perKey at most
// total.
//
// The handler counts the sessions it made or served since it started; with
// replicas sharing a SessionStore, each counts its own, so a key may hold
// up to perKey sessions through each replica.
func WithSessionLimits(perKey, total int) Option {
	return func(h *Handler) error {
		if perKey < 1 || total < 1 || perKey > total {
			return errors.New("ui: the session limits need at least 1 session per key, and no more per key than in all")
		}
		h.sessIdx.perKey, h.sessIdx.total = perKey, total
		return nil
	}
}

// sessionIndex knows the sessions of a handler, by the key that signed
// them in, least recently used last, to end the least recently used past
// its limits. It holds at most total sessions, about 150 bytes each.
type sessionIndex struct {
	perKey, total int

	mu    sync.Mutex
	seq   uint64
	lru   list.List // of *indexed, the most recently used first
	byID  map[string]*indexed
	byKey map[string][]*indexed // at most perKey each
}

// indexed is one session of the index.
type indexed struct {
	id, key string
	seq     uint64 // when it was last used
	elem    *list.Element
}

func newSessionIndex() *sessionIndex {
	return &sessionIndex{perKey: DefaultSessionsPerKey, total: DefaultMaxSessions,
		byID: map[string]*indexed{}, byKey: map[string][]*indexed{}}
}

// use records that the session id of the key key was used now (it is
// added if the index does not know it), and returns the sessions it
// ends to stay within its limits: the key's least recently used when it
// holds more than perKey, then the least recently used of all while
// there are more than total.
func (x *sessionIndex) use(id, key string) (ended []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seq++
	if s := x.byID[id]; s != nil {
		s.seq = x.seq
		x.lru.MoveToFront(s.elem)
		return nil
	}
	s := &indexed{id: id, key: key, seq: x.seq}
	s.elem = x.lru.PushFront(s)
	x.byID[id] = s
	x.byKey[key] = append(x.byKey[key], s)
	if same := x.byKey[key]; len(same) > x.perKey {
		oldest := same[0]
		for _, o := range same[1:] {
			if o.seq < oldest.seq {
				oldest = o
			}
		}
		x.drop(oldest)
		ended = append(ended, oldest.id)
	}
	for x.lru.Len() > x.total {
		oldest := x.lru.Back().Value.(*indexed)
		x.drop(oldest)
		ended = append(ended, oldest.id)
	}
	return ended
}

// forget removes the session id, which ended.
func (x *sessionIndex) forget(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if s := x.byID[id]; s != nil {
		x.drop(s)
	}
}

func (x *sessionIndex) drop(s *indexed) {
	x.lru.Remove(s.elem)
	delete(x.byID, s.id)
	same := x.byKey[s.key]
	for i, o := range same {
		if o == s {
			same = append(same[:i], same[i+1:]...)
			break
		}
	}
	if len(same) == 0 {
		delete(x.byKey, s.key)
	} else {
		x.byKey[s.key] = same
	}
}

// keyIDInfo is the HKDF label of the key that names an API key in the
// session index: whatever else is ever derived from the handler's secret
// gets another.
const keyIDInfo = "github.com/promptkit/prompts/ui session index key id, HMAC-SHA256"

// keyID names an API key in the session index, without holding it: an
// HMAC of the key under a key derived from the handler's secret.
func (h *Handler) keyID(key string) string {
	m := hmac.New(sha256.New, h.idKey)
	m.Write([]byte(key))
	return string(m.Sum(nil)[:16])
}

// maxUsedForms bounds the sign-in forms remembered as used: about 10 MB.
// Past it, the oldest are forgotten before they expire.
const maxUsedForms = 100_000

// usedForms remembers the sign-in forms used, until they expire, so that
// each works once. A form's cookie is recorded, hashed, at its first
// post.
type usedForms struct {
	mu    sync.Mutex
	seen  map[[sha256.Size]byte]struct{}
	order []usedForm // oldest first, from head
	head  int
}

type usedForm struct {
	sum     [sha256.Size]byte
	expires time.Time
}

func newUsedForms() *usedForms { return &usedForms{seen: map[[sha256.Size]byte]struct{}{}} }

// use records the form whose cookie is cookie, expiring at expires, and
// reports whether it was not used before.
func (u *usedForms) use(cookie string, expires, now time.Time) bool {
	sum := sha256.Sum256([]byte(cookie))
	u.mu.Lock()
	defer u.mu.Unlock()
	// Forget the forms that expired, and the oldest past the bound.
	for u.head < len(u.order) && (len(u.order)-u.head >= maxUsedForms || !now.Before(u.order[u.head].expires)) {
		delete(u.seen, u.order[u.head].sum)
		u.order[u.head] = usedForm{}
		u.head++
	}
	if u.head > len(u.order)/2 {
		u.order = append(u.order[:0], u.order[u.head:]...)
		u.head = 0
	}
	if _, ok := u.seen[sum]; ok {
		return false
	}
	u.seen[sum] = struct{}{}
	u.order = append(u.order, usedForm{sum: sum, expires: expires})
	return true
}

// signInPrefix is how many bytes of a key the sign-in limit counts
// failures by, with the client's address.
const signInPrefix = 8

// limitKey is what the sign-in limit counts failures by: the client's
// address and the first bytes of the key tried, so that failures with
// one key (an attacker's guesses) do not lock out people who share the
// address (behind a proxy) but sign in with other keys.
func limitKey(addr, key string) string {
	if len(key) > signInPrefix {
		key = key[:signInPrefix]
	}
	return addr + "\x00" + key
}
