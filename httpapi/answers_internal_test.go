package httpapi

import (
	"bytes"
	"hash/maphash"
	"testing"

	"github.com/matryer/is"
)

// The cache answers a tag only with the answer made for that tag, and
// keeps no answer past its size bound.
func TestAnswerCache(t *testing.T) {
	is := is.New(t)
	c := &answerCache{seed: maphash.MakeSeed()}
	tag := []byte(`"a-1-production-7"`)
	is.True(c.get(tag) == nil) // empty
	c.put(newEncoded(tag, []byte(`{"v":7}`)))
	e := c.get(tag)
	is.True(e != nil)
	is.Equal(string(e.body), `{"v":7}`)
	is.Equal(e.vals, []string{`"a-1-production-7"`, "7"}) // ETag, Content-Length
	is.True(c.get([]byte(`"a-1-production-8"`)) == nil)   // another revision: not this answer
	big := newEncoded([]byte(`"a-2-production-1"`), bytes.Repeat([]byte("x"), maxCachedAnswer+1))
	c.put(big)
	is.True(c.get([]byte(`"a-2-production-1"`)) == nil) // too large to keep
}
