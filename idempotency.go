package prompts

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
// concurrent repeats, one does the work and the others wait for it. A
// repeat answers the resource the first write made or changed, read again
// by its id, with Replayed set (see Replay for what that is when the
// resource changed since): the record names the resource instead of
// holding it, so it costs a few hundred bytes whatever the resource's
// size.
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
// Idempotency, under the Idempotency's RecordKey: for Store
// implementations. It names the write's result instead of holding it (by
// ids of 26 bytes, beside a digest of 64), so that it costs about 200
// bytes whatever the size of the result: a replay reads the result again
// (see Replay). Make it with NewIdempotencyRecord.
type IdempotencyRecord struct {
	// Op is the kind of write: "create_prompt", "create_version" or
	// "rollback".
	Op string
	// Request is the SHA-256 of the Idempotency's Request, in hex (see
	// Idempotency.RequestDigest).
	Request string
	At      time.Time // when the write was made
	// PromptID is the prompt the write made or changed.
	PromptID string
	// VersionID and VersionNumber are the version a create_version made,
	// or the one a rollback made active.
	VersionID     string
	VersionNumber int
	// Environment is the environment a rollback changed.
	Environment Environment
}

// RecordKey returns what a Store keeps the record of a write made with in
// under: the SHA-256 of its Scope and Key, 32 bytes whatever their
// length. Two Idempotencies have the same RecordKey when, and (short of
// a SHA-256 collision) only when, they have the same Scope and Key.
func (in Idempotency) RecordKey() [sha256.Size]byte {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(in.Scope))))
	h.Write([]byte(in.Scope))
	h.Write([]byte(in.Key))
	return [sha256.Size]byte(h.Sum(nil))
}

// RequestDigest returns what a record keeps of in.Request: its SHA-256,
// in hex (64 bytes).
func (in Idempotency) RequestDigest() string {
	sum := sha256.Sum256([]byte(in.Request))
	return hex.EncodeToString(sum[:])
}

// NewIdempotencyRecord returns the record of a write of op made with in
// at the time at, whose result is v: the ids that name v. For Store
// implementations. (A Project, which no write with an Idempotency
// returns, is accepted so that a Store can handle all its writes' results
// alike; a record names none.)
func NewIdempotencyRecord[T Project | Prompt | PromptVersion | ActivePrompt](op string, in Idempotency, at time.Time, v T) IdempotencyRecord {
	r := IdempotencyRecord{Op: op, Request: in.RequestDigest(), At: at}
	switch v := any(v).(type) {
	case Prompt:
		r.PromptID = v.ID
	case PromptVersion:
		r.PromptID, r.VersionID, r.VersionNumber = v.PromptID, v.ID, v.VersionNumber
	case ActivePrompt:
		r.PromptID, r.Environment = v.ID, v.Environment
		if v.ActiveVersion != nil {
			r.VersionID, r.VersionNumber = v.ActiveVersion.ID, v.ActiveVersion.VersionNumber
		}
	}
	return r
}

// Expired reports whether the record is past IdempotencyRetention at now.
func (r IdempotencyRecord) Expired(now time.Time) bool {
	return now.Sub(r.At) >= IdempotencyRetention
}

// Replay answers a repeat of the write r records: if r is the record of
// the same op and request, the result read again by read (the Store's
// read of what r names, see below), marked Replayed; else
// ErrIdempotencyKeyReused. For Store implementations.
//
// A replay answers the resource the first write made or changed, with
// the same id, as it is now:
//
//   - create_prompt: the prompt (GetPrompt of PromptID), with the name,
//     key and revision it has now if it changed since;
//   - create_version: the version (GetVersion of PromptID and
//     VersionNumber), which never changes: the first answer again;
//   - rollback: the prompt and environment as GetActive answers them
//     (GetActive of PromptID and Environment): if the environment was
//     changed again since the rollback, the version active now, with the
//     revision it goes with, so that the answer is one state of the
//     prompt, as a read of it would be. ListDeployments keeps the
//     rollback's record.
//
// A read that fails (the resource is gone) answers its error.
func Replay[T Project | Prompt | PromptVersion | ActivePrompt](r IdempotencyRecord, op string, in Idempotency, read func(IdempotencyRecord) (T, error)) (T, error) {
	var v T
	if r.Op != op || r.Request != in.RequestDigest() {
		return v, IdempotencyKeyReused()
	}
	v, err := read(r)
	if err != nil {
		return v, err
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
