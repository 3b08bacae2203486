package prompts

import (
	"time"

	"github.com/oklog/ulid/v2"
)

// Clock returns the current time. Stores take one as an option so that
// tests can fix time; nil means time.Now.
type Clock func() time.Time

// Now returns the clock's current time in UTC, truncated to microseconds:
// the precision every Store keeps, so that all Stores return identical
// timestamps.
func (c Clock) Now() time.Time {
	var t time.Time
	if c == nil {
		t = time.Now()
	} else {
		t = c()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// NewID returns a new ULID for time t: 26 characters of upper-case Crockford
// base32. IDs made in one process are strictly increasing while t does not
// go back (the entropy is monotonic within a millisecond).
func NewID(t time.Time) string {
	return ulid.MustNew(ulid.Timestamp(t), ulid.DefaultEntropy()).String()
}

// ValidID reports whether s is a well-formed ULID in its canonical form (26
// characters, upper-case Crockford base32, no overflow). Stores answer
// not found for ids that are not, without looking them up.
func ValidID(s string) bool {
	if len(s) != ulid.EncodedSize {
		return false
	}
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return false
	}
	// ParseStrict accepts lower case; the canonical form is upper case.
	return id.String() == s
}
