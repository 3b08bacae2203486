package client

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/matryer/is"
)

// parse reads a whole stream and returns its events as "type id data"
// lines, and the reconnection time it asked for.
func parse(t *testing.T, r io.Reader) ([]string, int) {
	t.Helper()
	var p sseParser
	var got []string
	err := scanLines(r, maxLine, func(line []byte) bool {
		if e, ok := p.line(line); ok {
			got = append(got, e.Type+" "+e.ID+" "+string(e.Data))
		}
		return true
	})
	if !errors.Is(err, io.EOF) {
		t.Fatalf("scan: %v", err)
	}
	return got, p.retry
}

// The stream is parsed as the WHATWG HTML standard says.
func TestServerSentEvents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		want   []string
	}{
		{"one event", "id: 1\nevent: version.created\ndata: {\"a\":1}\n\n", []string{`version.created 1 {"a":1}`}},
		{"lines end with CRLF, CR or LF", "id: 1\r\ndata: a\r\rid: 2\rdata: b\n\n", []string{"message 1 a", "message 2 b"}},
		{"data lines join with LF", "data: a\ndata:b\ndata\ndata:  c\n\n", []string{"message  a\nb\n\n c"}},
		{"comments are skipped", ": keep-alive\n:\ndata: x\n: between\n\n", []string{"message  x"}},
		{"no data, no event; its type goes, its id stays", "id: 7\nevent: e\n\ndata: x\n\n", []string{"message 7 x"}},
		{"an id stays until the next", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []string{"message 1 a", "message 1 b", "message  c"}},
		{"an id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []string{"message 1 a", "message 1 b"}},
		{"unknown fields are ignored", "foo: bar\ndata: x\nbaz\n\n", []string{"message  x"}},
		{"the colon's one space only is dropped", "data:   x\n\n", []string{"message    x"}},
		{"a byte order mark at the start is skipped", "\uFEFFdata: x\n\n", []string{"message  x"}},
		{"an event cut by the end is not dispatched", "data: a\n\ndata: b\n", []string{"message  a"}},
		{"an unfinished line is dropped", "data: a\n\ndata: b", []string{"message  a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, _ := parse(t, strings.NewReader(tc.stream))
			is.Equal(got, tc.want)
			got, _ = parse(t, iotest.OneByteReader(strings.NewReader(tc.stream)))
			is.Equal(got, tc.want) // the same a byte at a time: a CRLF split between reads is one end
		})
	}
	is := is.New(t)
	_, retry := parse(t, strings.NewReader("retry: 2500\nretry: x\nretry: -1\n\n"))
	is.Equal(retry, 2500) // a retry of digits only
}

// A line longer than the limit is an error, not a buffer that grows for
// ever.
func TestServerSentEventsBoundALine(t *testing.T) {
	is := is.New(t)
	err := scanLines(io.MultiReader(strings.NewReader("data: "), &endless{}), 1<<10, func([]byte) bool { return true })
	is.True(err != nil && !errors.Is(err, io.EOF))
}

// endless reads 'x' for ever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
