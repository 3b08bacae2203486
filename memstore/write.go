package memstore

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/promptkit/prompts"
)

// The ops of the writes that take a prompts.Idempotency.
const (
	opCreatePrompt  = "create_prompt"
	opCreateVersion = "create_version"
	opRollback      = "rollback"
)

// idemKey is whose key an idempotency record is under: the key's
// prompts.Idempotency.RecordKey.
type idemKey [sha256.Size]byte

// idemEntry is a record's place in the order of expiry.
type idemEntry struct {
	k   idemKey
	rec prompts.IdempotencyRecord
}

// write runs body, one write, under the write lock. With an Idempotency
// key, a live record of the key answers instead (what it names, read
// again, or ErrIdempotencyKeyReused), and a success is recorded in the
// same step; records past prompts.IdempotencyRetention, and events past
// the event retention, are removed then.
// A Store with a file (Open) appends what the write changed to its
// journal in the same step, and returns once that is on disk.
func write[T prompts.Project | prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](s *Store, op string, idem prompts.Idempotency, body func() (T, error)) (T, error) {
	v, pos, err := writeLocked(s, op, idem, body)
	if err != nil || s.journal == nil {
		return v, err
	}
	if err := s.journal.wait(pos); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// writeLocked is write's step under the lock; pos is where the journal
// must be on disk before the answer (0 without a journal).
func writeLocked[T prompts.Project | prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](s *Store, op string, idem prompts.Idempotency, body func() (T, error)) (v T, pos int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writable(); err != nil {
		return v, 0, err
	}
	s.step = step{}
	var (
		rec *idemEntry
		now time.Time // read once, when needed
	)
	if !idem.IsZero() {
		now = s.clock.Now()
		k := idemKey(idem.RecordKey())
		if r, ok := s.idem[k]; ok && !r.Expired(now) {
			// A replay waits for what it repeats to be on disk.
			v, err := prompts.Replay(r, op, idem, func(r prompts.IdempotencyRecord) (T, error) { return reread[T](s, r) })
			return v, s.journalEnd(), err
		}
		v, err = body()
		if err != nil {
			return v, 0, err // a failure keeps nothing: the key may be used again
		}
		// Kept before the journal's record is made: a compaction that
		// this write sets off writes the data as it is then.
		rec = &idemEntry{k, prompts.NewIdempotencyRecord(op, idem, now, v)}
		s.idem[k] = rec.rec
		s.idemOrder = append(s.idemOrder, *rec)
	} else if v, err = body(); err != nil {
		return v, 0, err
	}
	if len(s.idemOrder) > 0 || len(s.events) > 0 || len(s.deliveryOrder) > 0 || len(s.attempts) > 0 {
		if now.IsZero() {
			now = s.clock.Now()
		}
		s.expireIdem(now)
		s.expireEvents(now)
	}
	if s.journal == nil {
		return v, 0, nil
	}
	pos, err = s.journalChange(any(v), rec)
	return v, pos, err
}

// reread returns what the record r names, as it is now: the prompt, the
// version, or the prompt with the version active in the environment (see
// prompts.Replay). s.mu is held.
func reread[T prompts.Project | prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](s *Store, r prompts.IdempotencyRecord) (T, error) {
	var v T
	rec, ok := s.prompts[r.PromptID]
	if !ok {
		return v, prompts.NotFound("prompt")
	}
	switch p := any(&v).(type) {
	case *prompts.Prompt:
		*p = rec.p.Copy()
	case *prompts.PromptVersion:
		n := r.VersionNumber
		if n < 1 || n > len(rec.versions) || rec.versions[n-1].ID != r.VersionID {
			return v, prompts.NotFound("version")
		}
		*p = rec.versions[n-1].Copy()
	case *prompts.ActivePrompt:
		*p = rec.activeCopy(r.Environment)
	default:
		return v, prompts.Internal(fmt.Errorf("memstore: an idempotency record of %s names no %T", r.Op, v))
	}
	return v, nil
}

// expireIdem removes the records past their retention at now, oldest
// first: a few at each write, never on a goroutine.
func (s *Store) expireIdem(now time.Time) {
	for len(s.idemOrder) > 0 && s.idemOrder[0].rec.Expired(now) {
		e := s.idemOrder[0]
		if cur, ok := s.idem[e.k]; ok && cur.At.Equal(e.rec.At) {
			delete(s.idem, e.k)
		}
		s.idemOrder[0] = idemEntry{}
		s.idemOrder = s.idemOrder[1:]
	}
}
