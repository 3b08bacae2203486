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
		b, err := readAll(strings.NewReader(body), size, 1000)
		is.NoErr(err)             // read
		is.Equal(string(b), body) // whole
		b, err = readAll(iotest.OneByteReader(strings.NewReader(body)), size, 1000)
		is.NoErr(err)             // a byte at a time
		is.Equal(string(b), body) // whole
	}
	fail := errors.New("gone")
	_, err := readAll(iotest.ErrReader(fail), 10, 1000)
	is.Equal(err, fail) // the reader's error
}

// readAll stops once it has read more than its max, whatever length the
// body was said to have (a body some middleware replaced may be longer).
func TestReadAllMax(t *testing.T) {
	is := is.New(t)
	body := strings.Repeat("0123456789", 100)
	for _, size := range []int64{-1, 0, 10, 999, 1000, 5000} {
		_, err := readAll(strings.NewReader(body), size, 999)
		is.Equal(err, errTooLarge) // one byte over
		r := &countingReader{r: strings.NewReader(body + strings.Repeat(" ", 1<<20))}
		_, err = readAll(r, size, 999)
		is.Equal(err, errTooLarge) // far over
		is.True(r.n <= 5001)       // and not read to the end
	}
}

type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
