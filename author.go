package prompts

import (
	"time"

	"github.com/oklog/ulid/v2"
)

// What a Store's author needs beyond the vocabulary: the errors a Store
// returns, ids that follow another, and the next revision of a prompt.
// Applications do not need these; storetest.Run checks that a Store uses
// them as the contract says.

// NotFound returns a not-found error whose message names what is missing,
// e.g. NotFound("prompt").
//
// For Store authors (see "Writing a Store" in the package doc).
func NotFound(what string) error {
	return &Error{Code: CodeNotFound, Message: what + " not found"}
}

// Conflict returns a conflict error with the given message.
//
// For Store authors (see "Writing a Store" in the package doc).
func Conflict(msg string) error {
	return &Error{Code: CodeConflict, Message: msg}
}

// KeyTaken returns the conflict error of a prompt key that another prompt
// of the project has.
//
// For Store authors (see "Writing a Store" in the package doc).
func KeyTaken(key string) error {
	return Conflict("the project already has a prompt with key " + key)
}

// SlugTaken returns the conflict error of a project slug that another
// project has.
//
// For Store authors (see "Writing a Store" in the package doc).
func SlugTaken(slug string) error {
	return Conflict("a project with slug " + slug + " exists")
}

// Unavailable wraps cause as an unavailable error.
//
// For Store authors (see "Writing a Store" in the package doc).
func Unavailable(cause error) error {
	return &Error{Code: CodeUnavailable, Message: "store unavailable", Err: cause}
}

// ContextDone wraps ctx.Err() (or another error of a context that ended) as
// an unavailable error; errors.Is(err, context.Canceled) still holds.
//
// For Store authors (see "Writing a Store" in the package doc).
func ContextDone(cause error) error {
	return &Error{Code: CodeUnavailable, Message: "request ended before the store answered", Err: cause}
}

// Internal wraps cause as an internal error; its message says nothing of the
// cause, which stays reachable through Unwrap for logging.
//
// For Store authors (see "Writing a Store" in the package doc).
func Internal(cause error) error {
	return &Error{Code: CodeInternal, Message: "internal error", Err: cause}
}

// Invalid returns an invalid-input error for one field.
//
// For Store authors (see "Writing a Store" in the package doc).
func Invalid(field, detail string) error {
	return fieldErrors{{Field: field, Detail: detail}}.err()
}

// NewIDAfter returns a new ULID for time t that is strictly greater than
// prev (a well-formed id, or ""). Stores use it where ids must increase
// with another order, such as a prompt's version numbers, even when ids are
// made in several processes whose clocks disagree.
//
// For Store authors (see "Writing a Store" in the package doc).
func NewIDAfter(t time.Time, prev string) string {
	id := ulid.MustNew(ulid.Timestamp(t), ulid.DefaultEntropy())
	if prev == "" {
		return id.String()
	}
	p, err := ulid.ParseStrict(prev)
	if err != nil || id.Compare(p) > 0 {
		return id.String()
	}
	// prev is ahead of this clock: take its successor.
	for i := len(p) - 1; i >= 0; i-- {
		p[i]++
		if p[i] != 0 {
			break
		}
	}
	return p.String()
}

// NextRevision returns the revision of a prompt after a change made at
// now to a prompt whose revision was prev: the larger of prev+1 and now in
// microseconds since 1970 (UTC). It grows with every change even when
// clocks disagree; and because it follows the clock, a change made after a
// database is restored from a backup gets a revision above those of the
// changes the restore undid, so that no entity tag or cache entry of a
// lost state can pass for a new one. A new prompt's revision is
// NextRevision(0, now).
//
// For Store authors (see "Writing a Store" in the package doc).
func NextRevision(prev int64, now time.Time) int64 {
	return max(prev+1, now.UnixMicro())
}
