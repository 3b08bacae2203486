package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Server-sent events, as the WHATWG HTML standard parses them: lines end
// with CRLF, LF or CR; a line that starts with a colon is a comment; a
// field is its name up to the first colon, its value after it (one space
// after the colon dropped), or the whole line with an empty value; data
// lines accumulate, joined by LF; a blank line dispatches the event, if it
// has data; id sets the last event id (unless its value holds a NUL),
// which an event keeps after it until the next id; retry sets the
// reconnection time. A UTF-8 byte order mark at the start is skipped, and
// an event that the stream's end cuts off is not dispatched.

// maxLine bounds a line of the stream: an event's data line holds an
// event's JSON, a version's content with it, at most MaxEventSize, after
// the field's name.
const maxLine = MaxEventSize + 64

// errEventTooLarge returns the error of an event whose data exceeds
// MaxEventSize.
func errEventTooLarge() error { return tooLarge("an event of the stream", MaxEventSize) }

// sseEvent is one dispatched event.
type sseEvent struct {
	ID   string // the last event id when it was dispatched
	Type string // "message" unless the event said
	Data []byte // valid until the next line
}

// sseParser reads the lines of one stream.
type sseParser struct {
	data    []byte
	hasData bool
	typ     string
	lastID  string
	retry   int // milliseconds; 0 until the stream says
	// err is errEventTooLarge once an event's data exceeds MaxEventSize:
	// the stream is to be abandoned.
	err error
}

// line takes one line (without its end) and returns the event it
// dispatches, if any.
func (p *sseParser) line(l []byte) (sseEvent, bool) {
	if len(l) == 0 {
		if !p.hasData {
			p.typ = ""
			return sseEvent{}, false
		}
		ev := sseEvent{ID: p.lastID, Type: p.typ, Data: bytes.TrimSuffix(p.data, []byte("\n"))}
		if ev.Type == "" {
			ev.Type = "message"
		}
		p.data, p.hasData, p.typ = p.data[:0], false, ""
		return ev, true
	}
	if l[0] == ':' {
		return sseEvent{}, false // a comment
	}
	name, value := l, []byte(nil)
	if i := bytes.IndexByte(l, ':'); i >= 0 {
		name, value = l[:i], l[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(name) {
	case "event":
		p.typ = string(value)
	case "data":
		if len(p.data)+len(value) > MaxEventSize {
			p.err = errEventTooLarge()
			p.data, p.hasData = nil, false
			return sseEvent{}, false
		}
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.lastID = string(value)
		}
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
			p.retry = n
		}
	}
	return sseEvent{}, false
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// scanLines reads r line by line, calling f with each (without its end)
// until f returns false (scanLines then returns nil) or r ends (it
// returns r's error, io.EOF at a clean end). A line longer than max is an
// error: errEventTooLarge.
func scanLines(r io.Reader, max int, f func(line []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), max)
	sc.Split(splitLines())
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
			first = false
		}
		if !f(line) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errEventTooLarge()
		}
		return err
	}
	return io.EOF
}

// splitLines is a bufio.SplitFunc for the lines of a stream: it ends a
// line at CRLF, LF or CR, at once at a CR (a LF that follows in a later
// read is then skipped), and drops an unfinished line at the end.
func splitLines() bufio.SplitFunc {
	afterCR := false
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if afterCR && len(data) > 0 {
			afterCR = false
			if data[0] == '\n' {
				return 1, nil, nil // the LF of a CRLF split between reads
			}
		}
		i := bytes.IndexAny(data, "\r\n")
		switch {
		case i < 0 && atEOF:
			return len(data), nil, nil // an unfinished line: dropped
		case i < 0:
			return 0, nil, nil // more
		case data[i] == '\n':
			return i + 1, data[:i:i], nil
		case i+1 < len(data):
			if data[i+1] == '\n' {
				return i + 2, data[:i:i], nil
			}
			return i + 1, data[:i:i], nil
		default: // a CR at the end of what was read
			afterCR = true
			return i + 1, data[:i:i], nil
		}
	}
}
