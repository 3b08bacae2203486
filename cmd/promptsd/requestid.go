package main

import (
	"crypto/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/oklog/ulid/v2"
)

// requestIDs makes the request ids of the requests that bring none: ULIDs
// whose random part is a random number drawn once for the process
// followed by the request's number (the server counts the requests it
// starts), so that making one takes no lock. Its text is made from parts:
// the time's, written once a millisecond, the random number's, written
// once, and the request number's.
type requestIDs struct {
	once   sync.Once
	prefix [4]byte
	fixed  [6]byte                // the text of the prefix's first 30 bits
	ms     atomic.Pointer[msText] // the text of the last millisecond
}

// msText is the text of a ULID's time: its first 10 characters.
type msText struct {
	ms   uint64
	text [10]byte
}

// crockford is ULID's alphabet: Crockford's base 32.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// next returns the id of request number seq, started at now, written in
// text, whose bytes must not change after: the string is text's memory
// (the request's own allocation holds it, and no second one is made).
// Two requests of different numbers have different ids.
func (g *requestIDs) next(text *[ulid.EncodedSize]byte, now time.Time, seq uint64) string {
	g.once.Do(func() {
		_, _ = rand.Read(g.prefix[:])
		var id ulid.ULID
		copy(id[6:10], g.prefix[:])
		var t [ulid.EncodedSize]byte
		_ = id.MarshalTextTo(t[:])
		copy(g.fixed[:], t[10:16])
	})
	ms := ulid.Timestamp(now)
	m := g.ms.Load()
	if m == nil || m.ms != ms {
		m = &msText{ms: ms}
		var id ulid.ULID
		_ = id.SetTime(ms) // cannot fail: a time.Time's milliseconds fit
		var t [ulid.EncodedSize]byte
		_ = id.MarshalTextTo(t[:])
		copy(m.text[:], t[:10])
		g.ms.Store(m)
	}
	copy(text[:10], m.text[:])
	copy(text[10:16], g.fixed[:])
	// The last 10 characters: the prefix's last 2 bits, then the
	// number's last 48.
	v := uint64(g.prefix[3]&3)<<48 | seq&(1<<48-1)
	for i := ulid.EncodedSize - 1; i >= 16; i-- {
		text[i] = crockford[v&31]
		v >>= 5
	}
	return unsafe.String(&text[0], len(text))
}

// validRequestID reports whether a client's X-Request-Id may be used as
// it is: 1 to 128 characters, letters, digits and . _ : / + = -. Anything
// else (empty, longer, spaces, quotes, control characters) is replaced,
// so that the log line cannot be forged through it.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("._:/+=-", c) >= 0:
		default:
			return false
		}
	}
	return true
}
