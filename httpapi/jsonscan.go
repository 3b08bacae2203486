package httpapi

import (
	"bytes"
	"iter"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/promptkit/prompts"
)

// The scanner of request bodies. A body is checked whole before any of it
// is used: valid UTF-8 (encoding/json would turn a bad byte into U+FFFD
// and go on), JSON text as RFC 8259 has it, no \u escape naming half of a
// surrogate pair (which would become U+FFFD too), and no name given twice
// in one object, however deep (which object member would count?).

// maxDepth is how deep a body may nest. No member of any request nests
// more than a few levels, metadata_ 32, so the bound only keeps a hostile
// body from growing the stack of the recursive scanner.
const maxDepth = 1000

// dupObjectSize is the number of members from which an object's names
// are checked for duplicates with a map rather than one by one.
const dupObjectSize = 16

// scanner reads one JSON text from data. Its methods stop at the first
// problem, which err holds.
type scanner struct {
	data  []byte
	pos   int
	err   *badRequest
	depth int
}

// span is a JSON string of data, quotes included.
type span struct{ start, end int }

// checkUTF8 returns the problem of a body that is not valid UTF-8, naming
// the offset of the first bad byte.
func checkUTF8(body []byte) *badRequest {
	if utf8.Valid(body) {
		return nil
	}
	i := 0
	for i < len(body) {
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return &badRequest{detail: "the request body is not valid UTF-8 (at byte " + strconv.Itoa(i) + ")"}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// fail records a syntax error at the current byte, which is not what
// context expects ("looking for beginning of value", …), and returns
// false.
func (s *scanner) fail(context string) bool {
	if s.err != nil {
		return false
	}
	if s.pos >= len(s.data) {
		s.err = &badRequest{detail: "the request body is not valid JSON: it ends too soon"}
		return false
	}
	r, _ := utf8.DecodeRune(s.data[s.pos:])
	q := strconv.QuoteRune(r)
	if r == '\'' {
		q = `'\''`
	}
	s.err = &badRequest{detail: "the request body is not valid JSON: invalid character " + q + " " + context + " (at byte " + strconv.Itoa(s.pos) + ")"}
	return false
}

// value reads one value and the white space after it.
func (s *scanner) value() bool {
	if s.pos >= len(s.data) {
		return s.fail("")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		_, ok := s.str()
		return ok && s.space()
	case c == '-' || c >= '0' && c <= '9':
		return s.number() && s.space()
	case c == 't':
		return s.literal("true") && s.space()
	case c == 'f':
		return s.literal("false") && s.space()
	case c == 'n':
		return s.literal("null") && s.space()
	default:
		return s.fail("looking for beginning of value")
	}
}

func (s *scanner) space() bool { s.skipSpace(); return true }

func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxDepth {
		s.err = &badRequest{detail: "the request body nests more than " + strconv.Itoa(maxDepth) + " levels (at byte " + strconv.Itoa(s.pos) + ")"}
		return false
	}
	return true
}

// object reads an object, checking that no name is given twice in it.
func (s *scanner) object() bool {
	if !s.enter() {
		return false
	}
	s.pos++ // {
	s.skipSpace()
	var buf [dupObjectSize]span
	names := buf[:0]
	var seen map[string]struct{} // from dupObjectSize members on
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return s.fail("looking for beginning of object key string")
			}
			name, ok := s.str()
			if !ok {
				return false
			}
			if s.given(name, names, &seen) {
				path := pathTo(s.data, name.start)
				s.err = &badRequest{
					detail: "the request body gives the member " + strconv.Quote(path) + " twice in one object",
					fields: []prompts.FieldError{{Field: path, Detail: "is given more than once"}},
				}
				return false
			}
			if seen == nil {
				names = append(names, name)
			}
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return s.fail("after object key")
			}
			s.pos++
			s.skipSpace()
			if !s.value() {
				return false
			}
			if s.pos < len(s.data) && s.data[s.pos] == ',' {
				s.pos++
				s.skipSpace()
				continue
			}
			if s.pos < len(s.data) && s.data[s.pos] == '}' {
				s.pos++
				break
			}
			return s.fail("after object key:value pair")
		}
	}
	s.depth--
	s.skipSpace()
	return true
}

// given reports whether name is one of the names of an object already
// read: names, or, once there are dupObjectSize of them, *seen, which it
// fills then and adds name to.
func (s *scanner) given(name span, names []span, seen *map[string]struct{}) bool {
	if *seen == nil && len(names) < dupObjectSize {
		for _, n := range names {
			if s.sameName(n, name) {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*dupObjectSize)
		for _, n := range names {
			(*seen)[unquote(s.data[n.start:n.end])] = struct{}{}
		}
	}
	k := unquote(s.data[name.start:name.end])
	if _, dup := (*seen)[k]; dup {
		return true
	}
	(*seen)[k] = struct{}{}
	return false
}

func (s *scanner) array() bool {
	if !s.enter() {
		return false
	}
	s.pos++ // [
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
	} else {
		for {
			if !s.value() {
				return false
			}
			if s.pos < len(s.data) && s.data[s.pos] == ',' {
				s.pos++
				s.skipSpace()
				continue
			}
			if s.pos < len(s.data) && s.data[s.pos] == ']' {
				s.pos++
				break
			}
			return s.fail("after array element")
		}
	}
	s.depth--
	s.skipSpace()
	return true
}

// sameName reports whether two names are the same string.
func (s *scanner) sameName(a, b span) bool {
	x, y := s.data[a.start:a.end], s.data[b.start:b.end]
	if bytes.Equal(x, y) {
		return true
	}
	if bytes.IndexByte(x, '\\') < 0 && bytes.IndexByte(y, '\\') < 0 {
		return false
	}
	return unquote(x) == unquote(y)
}

// pathTo names the member whose name starts at off in data, a body read
// up to there without a problem: metadata_.a, metadata_.tags[2].x. It is
// for the detail of an error: it reads the body again, keeping track of
// where it is, which the scanner does not, to be fast.
func pathTo(data []byte, off int) string {
	type elem struct {
		name  span
		index int // -1 for a member
	}
	var path []elem
	s := scanner{data: data}
	var walk func() bool // reports whether it reached off
	walk = func() bool {
		s.skipSpace()
		switch c := s.data[s.pos]; c {
		case '{', '[':
			s.pos++
			path = append(path, elem{index: -1})
			top := len(path) - 1
			for i := 0; ; i++ {
				s.skipSpace()
				if s.data[s.pos] == '}' || s.data[s.pos] == ']' {
					s.pos++
					break
				}
				if c == '{' {
					if s.pos == off {
						path[top].name, _ = s.str()
						return true
					}
					path[top].name, _ = s.str()
					s.skipSpace()
					s.pos++ // :
				} else {
					path[top].index = i
				}
				if walk() {
					return true
				}
				s.skipSpace()
				if s.data[s.pos] == ',' {
					s.pos++
				}
			}
			path = path[:top]
		case '"':
			s.str()
		default:
			s.pos++
			for s.pos < len(s.data) && strings.IndexByte(",]} \t\r\n", s.data[s.pos]) < 0 {
				s.pos++
			}
		}
		return false
	}
	walk()
	var b strings.Builder
	for i, e := range path {
		if e.index >= 0 {
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(unquote(data[e.name.start:e.name.end]))
	}
	return b.String()
}

// str reads a string, at its opening quote, and returns its span.
func (s *scanner) str() (span, bool) {
	start := s.pos
	s.pos++ // "
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return span{start, s.pos}, true
		case c == '\\':
			if !s.escape() {
				return span{}, false
			}
		case c < 0x20:
			return span{}, s.fail("in string literal")
		default:
			s.pos++
		}
	}
	return span{}, s.fail("")
}

// escape reads an escape sequence in a string, at its backslash. A \u
// escape of half of a surrogate pair must be followed by the other half.
func (s *scanner) escape() bool {
	s.pos++ // \
	if s.pos >= len(s.data) {
		return s.fail("")
	}
	switch s.data[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return true
	case 'u':
	default:
		return s.fail("in string escape code")
	}
	at := s.pos - 1
	r, ok := s.hex4()
	if !ok {
		return false
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xDC00: // the first half: the second must follow
		if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
			s.pos++
			r2, ok := s.hex4()
			if !ok {
				return false
			}
			if utf16.DecodeRune(r, r2) != utf8.RuneError {
				return true
			}
		}
		fallthrough
	case utf16.IsSurrogate(r):
		if s.err == nil {
			s.err = &badRequest{detail: "the request body is not valid JSON text: the escape " + string(s.data[at:at+6]) + " names half of a UTF-16 surrogate pair, not a character (at byte " + strconv.Itoa(at) + ")"}
		}
		return false
	}
	return true
}

// hex4 reads the u and four hex digits of a \u escape.
func (s *scanner) hex4() (rune, bool) {
	s.pos++ // u
	var r rune
	for range 4 {
		if s.pos >= len(s.data) {
			return 0, s.fail("")
		}
		c := s.data[s.pos]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, s.fail(`in \u hexadecimal character escape`)
		}
		s.pos++
	}
	return r, true
}

func (s *scanner) literal(lit string) bool {
	for i := 0; i < len(lit); i++ {
		if s.pos >= len(s.data) {
			return s.fail("")
		}
		if s.data[s.pos] != lit[i] {
			return s.fail("in literal " + lit + " (expecting " + strconv.QuoteRune(rune(lit[i])) + ")")
		}
		s.pos++
	}
	return true
}

// number reads a number: -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	d := s.data
	if d[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos >= len(d):
		return s.fail("")
	case d[s.pos] == '0':
		s.pos++
	case d[s.pos] >= '1' && d[s.pos] <= '9':
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	default:
		return s.fail("in numeric literal")
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if s.pos >= len(d) {
			return s.fail("")
		}
		if d[s.pos] < '0' || d[s.pos] > '9' {
			return s.fail("after decimal point in numeric literal")
		}
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if s.pos >= len(d) {
			return s.fail("")
		}
		if d[s.pos] < '0' || d[s.pos] > '9' {
			return s.fail("in exponent of numeric literal")
		}
		for s.pos < len(d) && d[s.pos] >= '0' && d[s.pos] <= '9' {
			s.pos++
		}
	}
	return true
}

// unquote returns the string a JSON string (quotes included) holds. It
// assumes the scanner has read it.
func unquote(q []byte) string {
	q = q[1 : len(q)-1]
	i := bytes.IndexByte(q, '\\')
	if i < 0 {
		return string(q)
	}
	b := make([]byte, 0, len(q))
	for i >= 0 {
		b = append(b, q[:i]...)
		q = q[i+1:]
		switch c := q[0]; c {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hexRune(q[1:5])
			q = q[4:]
			if utf16.IsSurrogate(r) && len(q) >= 7 && q[1] == '\\' && q[2] == 'u' {
				r = utf16.DecodeRune(r, hexRune(q[3:7]))
				q = q[6:]
			}
			b = utf8.AppendRune(b, r)
		default: // " \ /
			b = append(b, c)
		}
		q = q[1:]
		i = bytes.IndexByte(q, '\\')
	}
	return string(append(b, q...))
}

func hexRune(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// members calls f with the name and the value of each member of obj, a
// JSON object the scanner has read, until f returns false.
func members(obj []byte, f func(name, value []byte) bool) {
	s := scanner{data: obj}
	s.pos = 1
	s.skipSpace()
	for s.pos < len(s.data) && s.data[s.pos] == '"' {
		name, _ := s.str()
		s.skipSpace()
		s.pos++ // :
		s.skipSpace()
		start := s.pos
		s.value()
		if !f(s.data[name.start:name.end], trimSpace(s.data[start:s.pos])) {
			return
		}
		if s.data[s.pos] == ',' {
			s.pos++
			s.skipSpace()
		}
	}
}

// elements yields the elements of arr, a JSON array the scanner has read.
func elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		s := scanner{data: arr}
		s.pos = 1
		s.skipSpace()
		for s.pos < len(s.data) && s.data[s.pos] != ']' {
			start := s.pos
			s.value()
			if !yield(trimSpace(s.data[start:s.pos])) {
				return
			}
			if s.data[s.pos] == ',' {
				s.pos++
				s.skipSpace()
			}
		}
	}
}

// trimSpace returns v without the white space after it.
func trimSpace(v []byte) []byte {
	return bytes.TrimRight(v, " \t\r\n")
}
