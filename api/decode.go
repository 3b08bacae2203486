package api

import (
	"bytes"
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
