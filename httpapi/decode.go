package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// badRequest is a request refused with 400: a detail naming the problem,
// and the fields involved when there are any.
type badRequest struct {
	detail string
	fields []prompts.FieldError
}

// readBody returns the request body after the checks of the third step
// of the order of checks (see the package doc), in order: the media type (JSON, or no Content-Type at all, else
// 415) and the size (413). It answers the request itself when it returns
// false.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header["Content-Type"]; len(ct) > 0 && ct[0] != "" && !isJSON(ct[0]) {
		h.problem(w, kindMediaType, "the request body must be JSON: send Content-Type: application/json", nil)
		return nil, false
	}
	tooLarge := "the request body must be at most " + strconv.FormatInt(h.limit, 10) + " bytes"
	if r.ContentLength > h.limit {
		h.problem(w, kindTooLarge, tooLarge, nil)
		return nil, false
	}
	if r.Body == nil {
		return nil, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.limit))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			h.problem(w, kindTooLarge, tooLarge, nil)
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server's read deadline (http.Server.ReadTimeout)
			// passed before the body arrived.
			h.problem(w, kindTimeout, "the request body did not arrive in time", nil)
		default:
			h.problem(w, kindOf(prompts.CodeInvalid), "the request body could not be read", nil)
		}
		return nil, false
	}
	return body, true
}

// isJSON reports whether a Content-Type names JSON: application/json, in
// any case, with any parameters.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return false
	}
	return mt == "application/json"
}

// member is one member a request body's object may have: its name, what
// its value must be (for the error), and where to decode it.
type member struct {
	name string
	want string // "a string", "an integer", …
	dst  any
}

// decodeObject decodes body, which must be exactly one JSON object, into
// members. It refuses, with a detail naming the problem: an empty body,
// a body that is not valid UTF-8, malformed JSON, a value that is not an
// object, data after the object, a member given twice (in any object of
// the body), an unknown member (suggesting the known one meant, such as
// metadata_ for metadata), and values of the wrong type. Member names are
// matched exactly, case included. Type errors and unknown members are all
// reported at once.
func decodeObject(body []byte, members []member) *badRequest {
	if bad := checkUTF8(body); bad != nil {
		return bad
	}
	s := scanner{data: body}
	s.skipSpace()
	switch {
	case s.pos == len(body):
		return &badRequest{detail: "the request body is empty: send a JSON object"}
	case body[s.pos] != '{':
		if strings.IndexByte(`["-0123456789tfn`, body[s.pos]) >= 0 {
			return &badRequest{detail: "the request body must be a JSON object"}
		}
		s.fail("looking for beginning of value")
		return s.err
	}
	s.pos++
	s.skipSpace()
	var fields []prompts.FieldError
	var seenBuf [8]bool
	seen := seenBuf[:0]
	if len(members) > len(seenBuf) {
		seen = make([]bool, 0, len(members))
	}
	seen = seen[:len(members)]
	for s.pos < len(body) && body[s.pos] != '}' {
		if body[s.pos] != '"' {
			s.fail("looking for beginning of object key string")
			return s.err
		}
		nameSpan, ok := s.str()
		if !ok {
			return s.err
		}
		s.skipSpace()
		if s.pos >= len(body) || body[s.pos] != ':' {
			s.fail("after object key")
			return s.err
		}
		s.pos++
		s.skipSpace()
		start := s.pos
		if !s.value() {
			return s.err
		}
		value := body[start:s.pos]
		i := findMember(members, body[nameSpan.start:nameSpan.end])
		switch {
		case i < 0:
			name := unquote(body[nameSpan.start:nameSpan.end])
			fields = append(fields, prompts.FieldError{Field: name, Detail: unknownDetail(members, name)})
		case seen[i]:
			fields = append(fields, prompts.FieldError{Field: members[i].name, Detail: "is given more than once"})
		default:
			seen[i] = true
			if err := decodeValue(value, members[i].dst); err != nil {
				fields = append(fields, prompts.FieldError{Field: members[i].name, Detail: "must be " + members[i].want})
			}
		}
		if s.pos < len(body) && body[s.pos] == ',' {
			s.pos++
			s.skipSpace()
			if s.pos < len(body) && body[s.pos] == '}' {
				s.fail("looking for beginning of object key string")
				return s.err
			}
			continue
		}
		if s.pos < len(body) && body[s.pos] != '}' {
			s.fail("after object key:value pair")
			return s.err
		}
	}
	if s.pos >= len(body) {
		s.fail("")
		return s.err
	}
	s.pos++ // }
	s.skipSpace()
	if s.pos < len(body) {
		return &badRequest{detail: "the request body has data after the JSON object"}
	}
	if len(fields) > 0 {
		return &badRequest{detail: invalidDetail(fields), fields: fields}
	}
	return nil
}

// decodeValue decodes value, one JSON value that the scanner has read,
// into dst. The members of the hot paths decode without encoding/json.
func decodeValue(value []byte, dst any) error {
	value = trimSpace(value)
	null := string(value) == "null"
	switch d := dst.(type) {
	case *prompts.Optional[string]:
		switch {
		case null:
			*d = prompts.Null[string]()
		case value[0] == '"':
			*d = prompts.Some(unquote(value))
		default:
			return errWrongType
		}
		return nil
	case *prompts.Metadata:
		if null {
			*d = ""
		} else {
			*d = prompts.Metadata(value)
		}
		return nil
	case *[]string:
		if null {
			*d = nil
			return nil
		}
		if value[0] != '[' {
			return errWrongType
		}
		var list []string
		for v := range elements(value) {
			if v[0] != '"' {
				return errWrongType
			}
			list = append(list, unquote(v))
		}
		*d = list
		return nil
	case *stringMap:
		return d.UnmarshalJSON(value)
	case *bool:
		switch string(value) {
		case "true":
			*d = true
		case "false", "null":
			*d = false
		default:
			return errWrongType
		}
		return nil
	}
	return json.Unmarshal(value, dst)
}

// errWrongType is the error of a value of another type than its member's.
var errWrongType = errors.New("httpapi: a value of the wrong type")

// findMember returns the index of the member named by quoted, a JSON
// string the scanner has read, or -1.
func findMember(members []member, quoted []byte) int {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(unquote(quoted))
	}
	for i := range members {
		if members[i].name == string(raw) {
			return i
		}
	}
	return -1
}

// unknownDetail says a member is unknown, and which known one it may mean:
// the same name with a trailing underscore (metadata: metadata_) or in
// another case.
func unknownDetail(members []member, name string) string {
	for _, m := range members {
		if m.name == name+"_" || strings.EqualFold(m.name, name) {
			return "is not a known field; did you mean " + strconv.Quote(m.name) + "?"
		}
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	return "is not a known field; the fields are " + strings.Join(names, ", ")
}

// optString returns the value of an optional string member: nil when it
// was absent or null.
func optString(o prompts.Optional[string]) *string {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}

// Query parameters.

// queryParam returns the value of the query parameter name in the raw
// query. It returns a field error when the parameter is given twice or is
// not properly escaped; what it holds (a NUL character, say) is for the
// domain's rules of that parameter to judge. It allocates only to
// unescape.
func queryParam(raw, name string) (value string, given bool, fe *prompts.FieldError) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(k, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue // not a parameter this API knows
			}
		}
		if k != name {
			continue
		}
		if given {
			return "", true, &prompts.FieldError{Field: name, Detail: "is given more than once"}
		}
		given = true
		value = v
		if strings.ContainsAny(v, "%+") {
			var err error
			if value, err = url.QueryUnescape(v); err != nil {
				return "", true, &prompts.FieldError{Field: name, Detail: "is not properly escaped"}
			}
		}
	}
	return value, given, nil
}

// queryFields gathers the query's field errors.
type queryFields []prompts.FieldError

func (q *queryFields) add(fe *prompts.FieldError) {
	if fe != nil {
		*q = append(*q, *fe)
	}
}

// addErr adds the field errors of err, an invalid-input error of the
// domain.
func (q *queryFields) addErr(err error) {
	var e *prompts.Error
	if errors.As(err, &e) {
		*q = append(*q, e.Fields...)
	}
}

// environment reads the environment query parameter: production when it
// is absent.
func (q *queryFields) environment(raw string) prompts.Environment {
	v, given, fe := queryParam(raw, "environment")
	q.add(fe)
	if fe != nil {
		return ""
	}
	if !given {
		return prompts.Production
	}
	e := prompts.Environment(v)
	if err := e.Validate(); err != nil {
		q.addErr(err)
		return ""
	}
	return e
}

// page reads the limit and after query parameters; the domain's rules of
// a page judge them.
func (q *queryFields) page(raw string) prompts.Page {
	var p prompts.Page
	v, given, fe := queryParam(raw, "limit")
	q.add(fe)
	if given && fe == nil {
		n, ok := parseCount(v)
		if !ok || n < 1 {
			n = -1 // no page size: the rule's message for a limit out of range
		}
		p.Limit = n
	}
	v, given, fe = queryParam(raw, "after")
	q.add(fe)
	switch {
	case given && fe == nil && v == "": // given, yet no position
		q.add(&prompts.FieldError{Field: "after", Detail: "must not be empty"})
	case given && fe == nil:
		p.After = v
	}
	if err := p.Validate(); err != nil {
		q.addErr(err)
		return prompts.Page{}
	}
	return p
}

// parseCount parses a positive decimal number of at most 9 digits, with
// no sign.
func parseCount(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
