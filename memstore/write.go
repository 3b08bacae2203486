package memstore

import (
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// The ops of the writes that take a prompts.Idempotency.
const (
	opCreatePrompt  = "create_prompt"
	opCreateVersion = "create_version"
	opRollback      = "rollback"
)

// idemKey is whose key an idempotency record is under.
type idemKey struct{ scope, key string }

// idemEntry is a record's place in the order of expiry.
type idemEntry struct {
	k   idemKey
	rec prompts.IdempotencyRecord
}

// write runs body, one write, under the write lock. With an Idempotency
// key, a live record of the key answers instead (its result, or
// ErrIdempotencyKeyReused), and a success is recorded in the same step;
// records past prompts.IdempotencyRetention are removed then. A Store
// with a file (Open) appends what the write changed to its journal in
// the same step, and returns once that is on disk.
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
	var (
		rec *idemEntry
		now time.Time // read once, when needed
	)
	if !idem.IsZero() {
		now = s.clock.Now()
		k := idemKey{idem.Scope, idem.Key}
		if r, ok := s.idem[k]; ok && !r.Expired(now) {
			// A replay waits for what it repeats to be on disk.
			v, err := prompts.Replay[T](r, op, idem)
			return v, s.journalEnd(), err
		}
		v, err = body()
		if err != nil {
			return v, 0, err // a failure keeps nothing: the key may be used again
		}
		b, jerr := wire.JSON(v)
		if jerr == nil { // it cannot fail: the domain's values encode
			// Kept before the journal's record is made: a compaction
			// that this write sets off writes the data as it is then.
			rec = &idemEntry{k, prompts.IdempotencyRecord{Op: op, Request: idem.Request, Result: b, At: now}}
			s.idem[k] = rec.rec
			s.idemOrder = append(s.idemOrder, *rec)
		}
	} else if v, err = body(); err != nil {
		return v, 0, err
	}
	if len(s.idemOrder) > 0 {
		if now.IsZero() {
			now = s.clock.Now()
		}
		s.expireIdem(now)
	}
	if s.journal == nil {
		return v, 0, nil
	}
	pos, err = s.journalChange(any(v), rec)
	return v, pos, err
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
