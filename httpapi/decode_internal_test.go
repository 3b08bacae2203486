package httpapi

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/matryer/is"
)

// readAll reads the whole body whatever length it was said to have: the
// length known, more than said, less, or none.
func TestReadAll(t *testing.T) {
	is := is.New(t)
	body := strings.Repeat("0123456789", 100)
	for _, size := range []int64{-1, 0, 1, 999, 1000, 1001, 5000} {
		b, err := readAll(strings.NewReader(body), size)
		is.NoErr(err)             // read
		is.Equal(string(b), body) // whole
		b, err = readAll(iotest.OneByteReader(strings.NewReader(body)), size)
		is.NoErr(err)             // a byte at a time
		is.Equal(string(b), body) // whole
	}
	fail := errors.New("gone")
	_, err := readAll(iotest.ErrReader(fail), 10)
	is.Equal(err, fail) // the reader's error
}
