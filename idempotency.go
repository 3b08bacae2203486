package prompts

import (
	"encoding/json"
	"fmt"
	"time"
)

// IdempotencyRetention is how long a Store keeps the record of a write
// made with an Idempotency key: a repeat within it does nothing new. After
// it, the record may be removed (each Store removes old records during
// later writes, never on a goroutine of its own) and the same key names a
// new write.
const IdempotencyRetention = 24 * time.Hour

// MaxIdempotencyKey is the longest Idempotency.Key, in bytes.
const MaxIdempotencyKey = 255

// Idempotency names a write so that doing it again does nothing new: a
// client that timed out, or lost the answer to a connection that died,
// repeats the write with the same Idempotency, and gets the first write's
// result instead of a second prompt, version or rollback.
//
// The Store keeps the record of the write in the same atomic step as the
// write: a crash never keeps one without the other, and a write that
// failed keeps no record (it may be repeated with the same key). Of
// concurrent repeats, one does the work and the others wait for it and
// answer its result. A repeat's result has Replayed set.
//
// NewPrompt, NewVersion and Rollback take one; the zero Idempotency (no
// Key) makes an ordinary write.
type Idempotency struct {
	// Key is the caller's name for the write: 1 to MaxIdempotencyKey
	// printable ASCII characters (space to '~').
	Key string
	// Scope is whose key it is, such as an API key's name: the same Key
	// in two scopes names two writes. "" is a scope like any other.
	Scope string
	// Request identifies what was asked, such as a hash of an HTTP
	// request's method, path and body. The same Key with another Request
	// (or for another kind of write) is refused with
	// ErrIdempotencyKeyReused, and nothing changes. At most 1,024 bytes.
	Request string
}

// IsZero reports whether in names no write.
func (in Idempotency) IsZero() bool { return in.Key == "" }

func (in Idempotency) check(fe *fieldErrors) {
	if in.IsZero() {
		if in.Scope != "" || in.Request != "" {
			fe.add("idempotency.key", "is required with a scope or a request")
		}
		return
	}
	if !ValidIdempotencyKey(in.Key) {
		fe.add("idempotency.key", fmt.Sprintf("must be 1 to %d printable ASCII characters (space to ~)", MaxIdempotencyKey))
	}
	if len(in.Scope) > 1024 || len(in.Request) > 1024 {
		fe.add("idempotency", "scope and request must be at most 1024 bytes each")
	}
}

// ValidIdempotencyKey reports whether key can be an Idempotency.Key: 1 to
// MaxIdempotencyKey printable ASCII characters (space to '~').
func ValidIdempotencyKey(key string) bool {
	if key == "" || len(key) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// IdempotencyRecord is what a Store keeps of a write made with an
// Idempotency: for Store implementations. Op names the kind of write
// ("create_prompt", "create_version", "rollback"), Result its result as
// JSON.
type IdempotencyRecord struct {
	Op      string
	Request string
	Result  []byte
	At      time.Time // when the write was made
}

// Expired reports whether the record is past IdempotencyRetention at now.
func (r IdempotencyRecord) Expired(now time.Time) bool {
	return now.Sub(r.At) >= IdempotencyRetention
}

// Replay returns the result of the write r records, marked Replayed, if
// r is the record of the same op and request; else
// ErrIdempotencyKeyReused. For Store implementations. (A Project, which no
// write with an Idempotency returns, is accepted so that a Store can
// handle all its writes' results alike; it has no Replayed to set.)
func Replay[T Project | Prompt | PromptVersion | ActivePrompt](r IdempotencyRecord, op string, in Idempotency) (T, error) {
	var v T
	if r.Op != op || r.Request != in.Request {
		return v, IdempotencyKeyReused()
	}
	if err := json.Unmarshal(r.Result, &v); err != nil {
		return v, Internal(fmt.Errorf("the record of idempotency key %q: %w", in.Key, err))
	}
	switch p := any(&v).(type) {
	case *Prompt:
		p.Replayed = true
	case *PromptVersion:
		p.Replayed = true
	case *ActivePrompt:
		p.Replayed = true
	}
	return v, nil
}

// IdempotencyKeyReused returns the error of a key given with another
// request than the one it named.
func IdempotencyKeyReused() error {
	return &Error{Code: CodeIdempotencyKeyReused, Message: "this idempotency key was used for another request; use a new key for a new request"}
}
