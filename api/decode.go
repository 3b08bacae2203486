package api

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// RequestError is a request body that DecodeRequest refused: a detail
// for people, and the members involved when there are any.
type RequestError struct {
	Detail string
	Fields []prompts.FieldError
}

func (e *RequestError) Error() string { return e.Detail }

// DecodeRequest decodes body, which must be exactly one JSON object, into
// v, a pointer to one of this package's request types. It refuses, with
// a detail naming the problem: an empty body, invalid UTF-8, malformed
// JSON, an escape naming half of a UTF-16 surrogate pair, a name given
// twice in any object (the field is its path, as in metadata_.a.b[1].c),
// a value that is not an object, data after it, and, all at once in the
// order given, members the type does not have (suggesting the one meant,
// such as metadata_ for metadata) and values of the wrong type. Names are
// matched exactly, case included.
func DecodeRequest(body []byte, v any) *RequestError {
	// A body that is an object Unmarshal reads, which refuses all the
	// above but null (hence the brace), is read in one pass; any other
	// is read again, step by step, to say what is wrong with it.
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if f, ok := v.(quickDecoder); ok && f.decodeQuick(body) {
			return checked(v)
		}
		if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err == nil {
			return checked(v)
		}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	val, err := dec.ReadValue()
	if err != nil {
		return syntaxError(body, err)
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return &RequestError{Detail: "the request body has data after the JSON object"}
	}
	if val.Kind() != '{' {
		return &RequestError{Detail: "the request body must be a JSON object"}
	}
	if err := json.Unmarshal(val, v, json.RejectUnknownMembers(true)); err != nil {
		return memberErrors(val, reflect.TypeOf(v).Elem())
	}
	return checked(v)
}

// quickDecoder is a request type that reads the bodies it is most often
// sent without reflection: decodeQuick reports whether it read body
// whole, with the very values Unmarshal would give it; when it did not,
// it leaves the value as it found it (the zero value) for Unmarshal, which
// says what is wrong. It never accepts a body Unmarshal refuses.
type quickDecoder interface {
	decodeQuick(body []byte) bool
}

// decodeQuick reads a render's body as an application sends it
// (environment or version_number, variables, allow_unused, context,
// history, subject) in one pass over its bytes, without reflection, and takes its
// strings as slices of one copy of the body rather than one allocation
// each. A member it does not know (or given twice, or of another type), a
// value nested deeper than quickDepth, and anything that is not JSON it
// leaves to Unmarshal. BENCHMARKS.md ("Render over HTTP") has the
// figures.
func (in *Render) decodeQuick(body []byte) bool {
	d := quickScan{b: body, s: string(body)}
	if !d.render(in) {
		*in = Render{}
		return false
	}
	return true
}

// quickDepth is how deeply the values decodeQuick reads may nest.
const quickDepth = 64

// quickScan reads JSON from b, strictly: what it accepts, Unmarshal
// accepts and reads the same (names matched exactly, a name given twice in
// an object refused, strings valid UTF-8 without lone surrogates); it may
// refuse what Unmarshal accepts. s is b as a string, which strings without
// escapes are slices of.
type quickScan struct {
	b     []byte
	s     string
	i     int
	depth int
}

func (d *quickScan) render(in *Render) bool {
	if !d.consume('{') {
		return false
	}
	if !d.consume('}') {
		var seen uint8
		for {
			name, ok := d.str()
			if !ok || !d.consume(':') {
				return false
			}
			var bit uint8
			switch name {
			case "environment":
				bit = 1
				switch d.peek() {
				case 'n':
					if !d.literal("null") {
						return false
					}
					in.Environment = Null[prompts.Environment]()
				case '"':
					env, ok := d.str()
					if !ok {
						return false
					}
					in.Environment = Some(prompts.Environment(env))
				default:
					return false
				}
			case "version_number":
				bit = 2
				if c := d.peek(); c < '0' || c > '9' {
					return false // null, a sign: Unmarshal says what they are
				}
				v, ok := d.number()
				if !ok || !isDigits([]byte(v)) {
					return false
				}
				n, err := strconv.Atoi(v)
				if err != nil {
					n = int(^uint(0) >> 1) // as VersionNumber.UnmarshalJSON reads it
				}
				in.VersionNumber = VersionNumber(Some(n))
			case "variables":
				bit = 4
				m, ok := d.objectOrNull()
				if !ok {
					return false
				}
				in.Variables = m
			case "context":
				bit = 8
				m, ok := d.objectOrNull()
				if !ok {
					return false
				}
				in.Context = m
			case "allow_unused":
				bit = 16
				switch {
				case d.literal("true"):
					in.AllowUnused = true
				case d.literal("false"):
					in.AllowUnused = false
				default:
					return false
				}
			case "subject":
				bit = 64
				switch d.peek() {
				case 'n':
					if !d.literal("null") {
						return false
					}
					in.Subject = Null[string]()
				case '"':
					subject, ok := d.str()
					if !ok {
						return false
					}
					in.Subject = Some(subject)
				default:
					return false
				}
			case "history":
				bit = 32
				d.peek()
				start := d.i
				if _, ok := d.value(); !ok || in.History.UnmarshalJSON(d.b[start:d.i]) != nil {
					return false
				}
			default:
				return false
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return false
		}
	}
	d.peek()
	return d.i == len(d.b)
}

// peek skips white space and returns the next byte, 0 at the end.
func (d *quickScan) peek() byte {
	for d.i < len(d.b) {
		switch c := d.b[d.i]; c {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return c
		}
	}
	return 0
}

// consume reads c, after white space, if it is next.
func (d *quickScan) consume(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

// literal reads lit (true, false or null) if it is next.
func (d *quickScan) literal(lit string) bool {
	d.peek()
	if !strings.HasPrefix(d.s[d.i:], lit) {
		return false
	}
	d.i += len(lit)
	return true
}

// str reads a string: a slice of d.s, or, when it holds escapes, its
// unquoted text.
func (d *quickScan) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	n := bytes.IndexByte(d.b[start:], '"')
	if n < 0 {
		return "", false
	}
	i := start + n
	if bytes.IndexByte(d.b[start:i], '\\') < 0 {
		// No escape: the closing quote is the first, and the text is
		// what is between, once it holds no control character and is
		// valid UTF-8.
		ascii := true
		for _, c := range d.b[start:i] {
			if c < 0x20 {
				return "", false
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
		}
		if !ascii && !utf8.Valid(d.b[start:i]) {
			return "", false
		}
		d.i = i + 1
		return d.s[start:i], true
	}
	for i = start; i < len(d.b) && d.b[i] != '"'; i++ {
		if d.b[i] == '\\' {
			i++ // the escaped byte: AppendUnquote checks the escape
		}
	}
	if i >= len(d.b) {
		return "", false
	}
	d.i = i + 1
	u, err := jsontext.AppendUnquote(nil, d.b[start-1:i+1])
	if err != nil {
		return "", false
	}
	return string(u), true
}

// number reads a number as JSON writes it, and returns its text.
func (d *quickScan) number() (string, bool) {
	b, i := d.b, d.i
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return "", false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	start := d.i
	d.i = i
	return d.s[start:i], true
}

// objectOrNull reads an object, or null, as decodeObjectFrom does.
func (d *quickScan) objectOrNull() (map[string]any, bool) {
	switch d.peek() {
	case 'n':
		return nil, d.literal("null")
	case '{':
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		return v.(map[string]any), true
	}
	return nil, false
}

// value reads the next value as decodeValue does: objects as
// map[string]any, arrays as []any, numbers as json.Number.
func (d *quickScan) value() (any, bool) {
	switch c := d.peek(); {
	case c == '{':
		if d.depth++; d.depth > quickDepth {
			return nil, false
		}
		defer func() { d.depth-- }()
		d.i++
		m := map[string]any{}
		if d.consume('}') {
			return m, true
		}
		for {
			name, ok := d.str()
			if !ok || !d.consume(':') {
				return nil, false
			}
			v, ok := d.value()
			if !ok {
				return nil, false
			}
			if _, twice := m[name]; twice {
				return nil, false
			}
			m[name] = v
			if d.consume(',') {
				continue
			}
			return m, d.consume('}')
		}
	case c == '[':
		if d.depth++; d.depth > quickDepth {
			return nil, false
		}
		defer func() { d.depth-- }()
		d.i++
		a := []any{}
		if d.consume(']') {
			return a, true
		}
		for {
			v, ok := d.value()
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if d.consume(',') {
				continue
			}
			return a, d.consume(']')
		}
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		n, ok := d.number()
		return stdjson.Number(n), ok
	case d.literal("true"):
		return true, true
	case d.literal("false"):
		return false, true
	case d.literal("null"):
		return nil, true
	}
	return nil, false
}

// checked returns the error of v's own rules (see checker), if it has
// any, once it is decoded.
func checked(v any) *RequestError {
	if c, ok := v.(checker); ok {
		if bad := c.check(); len(bad) > 0 {
			return fieldsRequestError(bad)
		}
	}
	return nil
}

// checker is a request type with rules of its own beyond its members'
// types, which DecodeRequest checks once it decodes.
type checker interface {
	check() []prompts.FieldError
}

// syntaxError is the problem of a body that is not one JSON value.
func syntaxError(body []byte, err error) *RequestError {
	var se *jsontext.SyntacticError
	switch {
	case len(bytes.TrimLeft(body, " \t\r\n")) == 0:
		return &RequestError{Detail: "the request body is empty: send a JSON object"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &RequestError{Detail: "the request body is not valid JSON: it ends too soon"}
	case !errors.As(err, &se):
		return &RequestError{Detail: "the request body is not valid JSON: " + err.Error()}
	case errors.Is(err, jsontext.ErrDuplicateName):
		path := pathOf(body, se.JSONPointer)
		return &RequestError{
			Detail: "the request body gives the member " + strconv.Quote(path) + " twice in one object (no member may be given more than once)",
			Fields: []prompts.FieldError{{Field: path, Detail: "is given more than once"}},
		}
	case !utf8.Valid(body):
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return &RequestError{Detail: "the request body is not valid UTF-8 (at byte " + strconv.Itoa(i) + ")"}
	}
	msg := se.Err.Error()
	if strings.Contains(msg, "surrogate") || (strings.Contains(msg, `\u`) && strings.Contains(msg, "escape")) {
		return &RequestError{Detail: "the request body is not valid JSON text: " + msg + ": an escape names half of a UTF-16 surrogate pair, not a character (at byte " + strconv.FormatInt(se.ByteOffset, 10) + ")"}
	}
	return &RequestError{Detail: "the request body is not valid JSON: " + msg + " (at byte " + strconv.FormatInt(se.ByteOffset, 10) + ")"}
}

// memberErrors decodes each member of obj, a valid JSON object, alone
// into a field of t, a struct type, and returns every member that is
// unknown or whose value does not decode, in order.
func memberErrors(obj jsontext.Value, t reflect.Type) *RequestError {
	fields := jsonFields(t)
	dec := jsontext.NewDecoder(bytes.NewReader(obj))
	var bad []prompts.FieldError
	if _, err := dec.ReadToken(); err != nil {
		return &RequestError{Detail: "the request body is not valid JSON: " + err.Error()}
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		name := tok.String() // before the next read voids tok
		value, err := dec.ReadValue()
		if err != nil {
			break
		}
		f, ok := fields[name]
		if !ok {
			bad = append(bad, prompts.FieldError{Field: name, Detail: unknownDetail(t, name)})
			continue
		}
		dst := reflect.New(f.Type)
		if err := json.Unmarshal(value, dst.Interface()); err != nil {
			var fe fieldsError
			if errors.As(err, &fe) { // named member by member, as history[0].role
				for _, e := range fe {
					bad = append(bad, prompts.FieldError{Field: name + e.Field, Detail: e.Detail})
				}
				continue
			}
			bad = append(bad, prompts.FieldError{Field: name, Detail: "must be " + want(f.Type)})
		}
	}
	if len(bad) == 0 {
		return &RequestError{Detail: "the request body could not be read"}
	}
	return fieldsRequestError(bad)
}

// fieldsRequestError is the error of a body with these bad members.
func fieldsRequestError(bad []prompts.FieldError) *RequestError {
	var b strings.Builder
	b.WriteString("invalid input: ")
	for i, f := range bad {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Field + " " + f.Detail)
	}
	return &RequestError{Detail: b.String(), Fields: bad}
}

// jsonFields returns the fields of t by their JSON names.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f
	}
	return out
}

// unknownDetail says a member is unknown, and which known one it may
// mean: the same name with a trailing underscore (metadata: metadata_) or
// in another case.
func unknownDetail(t reflect.Type, name string) string {
	var names []string
	for i := range t.NumField() {
		known, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if known == name+"_" || strings.EqualFold(known, name) {
			return "is not a known field; did you mean " + strconv.Quote(known) + "?"
		}
		names = append(names, known)
	}
	return "is not a known field; the fields are " + strings.Join(names, ", ")
}

// want says what a value of a member of type t must be.
func want(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Metadata]():
		return "a JSON object or null"
	case reflect.TypeFor[Variables]():
		return "an object of distinct names (for a plain version, whose values are strings)"
	case reflect.TypeFor[Context]():
		return "an object or null"
	case reflect.TypeFor[History]():
		return "an array of messages ({\"role\", \"content\": [{\"text\"} or {\"media\": {\"url\", \"contentType\"}}]}) or null"
	case reflect.TypeFor[VersionNumber](), reflect.TypeFor[Optional[int]]():
		return "an integer"
	case reflect.TypeFor[Optional[prompts.Environment]]():
		return "an environment of the project (a string) or null"
	case reflect.TypeFor[Optional[string]]():
		return "a string or null"
	case reflect.TypeFor[[]prompts.Environment]():
		return "an array of environment names (strings) or null"
	case reflect.TypeFor[[]prompts.EventType]():
		return "an array of event types (strings) or null"
	case reflect.TypeFor[time.Time](), reflect.TypeFor[*time.Time]():
		return "an RFC 3339 timestamp such as 2027-01-01T00:00:00Z"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Slice:
		return "an array of strings or null"
	}
	return "of another type"
}

// pathOf returns the member ptr points to in body as the interface names
// it: metadata_.a.b[1].c.
func pathOf(body []byte, ptr jsontext.Pointer) string {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var b strings.Builder
	for tok := range ptr.Tokens() {
		switch dec.PeekKind() {
		case '{':
			if _, err := dec.ReadToken(); err != nil {
				return string(ptr)
			}
			for dec.PeekKind() == '"' {
				name, err := dec.ReadToken()
				if err != nil {
					return string(ptr)
				}
				if name.String() == tok {
					break
				}
				if err := dec.SkipValue(); err != nil {
					return string(ptr)
				}
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		case '[':
			n, err := strconv.Atoi(tok)
			if _, err2 := dec.ReadToken(); err != nil || err2 != nil {
				return string(ptr)
			}
			for range n {
				if err := dec.SkipValue(); err != nil {
					return string(ptr)
				}
			}
			b.WriteString("[" + tok + "]")
		default:
			return string(ptr)
		}
	}
	return b.String()
}
