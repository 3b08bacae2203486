package memstore

import (
	"encoding/json"
	"time"

	"github.com/promptkit/prompts"
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
// records past prompts.IdempotencyRetention are removed then.
func write[T prompts.Project | prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](s *Store, op string, idem prompts.Idempotency, body func() (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idem.IsZero() {
		return body()
	}
	now := s.clock.Now()
	s.expireIdem(now)
	k := idemKey{idem.Scope, idem.Key}
	if rec, ok := s.idem[k]; ok {
		return replay[T](rec, op, idem)
	}
	v, err := body()
	if err != nil {
		return v, err // a failure keeps nothing: the key may be used again
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Cannot happen: the domain's values encode. Were it to, the
		// write stands and the key is not kept.
		return v, nil
	}
	rec := prompts.IdempotencyRecord{Op: op, Request: idem.Request, Result: b, At: now}
	s.idem[k] = rec
	s.idemOrder = append(s.idemOrder, idemEntry{k, rec})
	return v, nil
}

// replay answers a repeat from its record.
func replay[T prompts.Project | prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](rec prompts.IdempotencyRecord, op string, idem prompts.Idempotency) (T, error) {
	var zero T
	switch p := any(&zero).(type) {
	case *prompts.Prompt:
		v, err := prompts.Replay[prompts.Prompt](rec, op, idem)
		*p = v
		return zero, err
	case *prompts.PromptVersion:
		v, err := prompts.Replay[prompts.PromptVersion](rec, op, idem)
		*p = v
		return zero, err
	case *prompts.ActivePrompt:
		v, err := prompts.Replay[prompts.ActivePrompt](rec, op, idem)
		*p = v
		return zero, err
	}
	return zero, prompts.IdempotencyKeyReused() // no such write takes a key
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
