package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// readBody returns the request body after the checks of the third step
// of the order of checks (see the package doc), in order: the media type (JSON, or no Content-Type at all, else
// 415) and the size (413). It answers the request itself when it returns
// false.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header["Content-Type"]; len(ct) > 0 && ct[0] != "" && !isJSON(ct[0]) {
		h.problem(w, kindMediaType, "the request body must be JSON: send Content-Type: application/json", nil)
		return nil, false
	}
	tooLarge := func() string { return "the request body must be at most " + strconv.FormatInt(h.limit, 10) + " bytes" }
	if r.ContentLength > h.limit {
		h.problem(w, kindTooLarge, tooLarge(), nil)
		return nil, false
	}
	if r.Body == nil {
		return nil, true
	}
	// A body of known length, at most the limit, is read as it is (the
	// server reads no more than its length; readAll stops past the limit
	// all the same, for a body some middleware replaced); one of unknown
	// length (chunked) through MaxBytesReader, which also has net/http
	// close the connection of a client that sends on past the limit when
	// w is net/http's own.
	body := r.Body
	if r.ContentLength < 0 {
		body = http.MaxBytesReader(w, r.Body, h.limit)
	}
	b, err := readAll(body, r.ContentLength, h.limit)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe), errors.Is(err, errTooLarge):
			h.problem(w, kindTooLarge, tooLarge(), nil)
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server's read deadline (http.Server.ReadTimeout)
			// passed before the body arrived.
			h.problem(w, kindTimeout, "the request body did not arrive in time", nil)
		default:
			h.problem(w, kindOf(prompts.CodeInvalid), "the request body could not be read", nil)
		}
		return nil, false
	}
	return b, true
}

// isJSON reports whether a Content-Type names JSON: application/json, in
// any case, with any parameters.
func isJSON(ct string) bool {
	if ct == "application/json" { // what clients send, without parsing
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return false
	}
	return mt == "application/json"
}

// decode decodes body into v, a pointer to a request type of package
// api (see api.DecodeRequest), and answers 400 itself when it refuses
// it.
func (h *Handler) decode(w http.ResponseWriter, body []byte, v any) bool {
	if bad := api.DecodeRequest(body, v); bad != nil {
		h.problem(w, kindOf(prompts.CodeInvalid), bad.Detail, bad.Fields)
		return false
	}
	return true
}

// errTooLarge is readAll's error for a body longer than its max.
var errTooLarge = errors.New("body too large")

// readAll is io.ReadAll with a first buffer of size bytes (-1 when not
// known: 512) and one more, to see the end, which fails with errTooLarge
// once it has read more than max bytes: a body whose length is known is
// read into one allocation of that size, rather than into 512 bytes
// grown as it comes.
func readAll(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 {
		size = 511
	}
	b := make([]byte, 0, min(size, max)+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, errTooLarge
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // more than it said: grow, as ReadAll does
		}
	}
}

// Query parameters.

// queryParam returns the value of the query parameter name in the raw
// query. It returns a field error when the parameter is given twice or is
// not properly escaped; what it holds (a NUL character, say) is for the
// domain's rules of that parameter to judge. It allocates only to
// unescape.
func queryParam(raw, name string) (value string, given bool, fe *prompts.FieldError) {
	ps := [1]queryValue{{name: name}}
	queryParams(raw, ps[:])
	return ps[0].value, ps[0].given, ps[0].fe
}

// queryValue is one parameter that queryParams reads: its name, and what
// queryParam returns of it.
type queryValue struct {
	name  string
	value string
	given bool
	fe    *prompts.FieldError
}

// queryParams is queryParam for each of ps, in one pass over raw: the
// reads of a prompt in an environment, every application's hot path,
// read two parameters.
func queryParams(raw string, ps []queryValue) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if escaped(k) {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue // not a parameter this API knows
			}
		}
		for i := range ps {
			p := &ps[i]
			if k != p.name || p.fe != nil {
				continue
			}
			if p.given {
				p.value, p.fe = "", &prompts.FieldError{Field: p.name, Detail: "is given more than once"}
				continue
			}
			p.given, p.value = true, v
			if escaped(v) {
				var err error
				if p.value, err = url.QueryUnescape(v); err != nil {
					p.value, p.fe = "", &prompts.FieldError{Field: p.name, Detail: "is not properly escaped"}
				}
			}
		}
	}
}

// escaped reports whether s, a part of a query, holds an escape or a
// '+': what url.QueryUnescape would change.
func escaped(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			return true
		}
	}
	return false
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

// environmentOf judges the environment query parameter p: production
// when it is absent.
func (q *queryFields) environmentOf(p queryValue) prompts.Environment {
	q.add(p.fe)
	if p.fe != nil {
		return ""
	}
	if !p.given {
		return prompts.Production
	}
	e := prompts.Environment(p.value)
	if err := e.Validate(); err != nil {
		q.addErr(err)
		return ""
	}
	return e
}

// subject reads the subject query parameter of a read of a prompt in an
// environment: who the read is for, which picks the version of a split;
// "" when absent.
func (q *queryFields) subject(raw string) string {
	v, given, fe := queryParam(raw, "subject")
	return q.subjectOf(queryValue{value: v, given: given, fe: fe})
}

// subjectEmpty is the detail of a subject given empty, in a read or a
// render: an empty subject is not one that could be hashed, and one left
// out is served the split's first entry.
const subjectEmpty = "must not be empty: omit it to be served the split's first entry"

// subjectOf judges the subject parameter p.
func (q *queryFields) subjectOf(p queryValue) string {
	q.add(p.fe)
	if p.given && p.fe == nil && p.value == "" {
		q.add(&prompts.FieldError{Field: "subject", Detail: subjectEmpty})
	}
	return p.value
}

// read reads the query of a read of a prompt in an environment: its
// environment (production when absent) and its subject, in one pass.
func (q *queryFields) read(raw string) (prompts.Environment, string) {
	ps := [2]queryValue{{name: "environment"}, {name: "subject"}}
	queryParams(raw, ps[:])
	return q.environmentOf(ps[0]), q.subjectOf(ps[1])
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
