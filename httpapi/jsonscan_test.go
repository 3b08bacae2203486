package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"
)

// scan reads data as a whole body, as decodeObject does, whatever its
// top-level value: nil when it is valid.
func scan(data []byte) *badRequest {
	if bad := checkUTF8(data); bad != nil {
		return bad
	}
	s := scanner{data: data}
	s.skipSpace()
	if !s.value() {
		return s.err
	}
	if s.pos != len(data) {
		return &badRequest{detail: "data after the value"}
	}
	return nil
}

func TestScanner(t *testing.T) {
	for _, tc := range []struct {
		body   string
		detail string // "" for a valid body
		field  string // the field of a duplicate
	}{
		{`{}`, "", ""},
		{` {"a" : [1, -0.5e+10, true, false, null, "x", {}, []] } `, "", ""},
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`, "", ""},               // the same name in other objects
		{`{"a":1,"A":2,"a ":3}`, "", ""},                                    // other names
		{`"\ud83d\ude00 \u00e9 \/ \b\f\n\r\t \\ \""`, "", ""},               // a surrogate pair, every escape
		{`{"a":1,"a":2}`, "twice in one object", "a"},                       // at the top
		{`{"m":{"x":1,"y":{"z":1,"z":2}}}`, "twice in one object", "m.y.z"}, // deep
		{`{"m":{"list":[1,{"a":1,"b":2,"a":3}]}}`, "twice in one object", "m.list[1].a"},
		{`{"m":{"a":1,"\u0061":2}}`, "twice in one object", "m.a"}, // the same name escaped
		{`{"m":{"\u00e9":1,"é":2}}`, "twice in one object", "m.é"},
		{`[{"a":1,"a":1}]`, "twice in one object", "[0].a"},
		{"\"\xff\"", "not valid UTF-8 (at byte 1)", ""},
		{"{\"a\":\"ok\xc3\x28\"}", "not valid UTF-8 (at byte 8)", ""},
		{`"\ud800"`, "half of a UTF-16 surrogate pair", ""}, // a lone first half
		{`"\udc00\ud800"`, "half of a UTF-16 surrogate pair", ""},
		{`"\ud800\u0041"`, "half of a UTF-16 surrogate pair", ""},
		{`"\ud800x"`, "half of a UTF-16 surrogate pair", ""},
		{`{"a":}`, "invalid character '}' looking for beginning of value (at byte 5)", ""},
		{`{"a" 1}`, "invalid character '1' after object key (at byte 5)", ""},
		{`{"a":1 "b":2}`, "after object key:value pair", ""},
		{`[1 2]`, "after array element", ""},
		{`{"a":1,}`, "looking for beginning of object key string", ""},
		{`{'a':1}`, `invalid character '\'' looking for beginning of object key string`, ""},
		{"\"a\x01\"", `invalid character '\x01' in string literal`, ""},
		{`"\x"`, "in string escape code", ""},
		{`"\u12g4"`, `in \u hexadecimal character escape`, ""},
		{`tru`, "ends too soon", ""},
		{`trUe`, "in literal true (expecting 'u')", ""},
		{`01`, "data after the value", ""},
		{`-`, "ends too soon", ""},
		{`-a`, "in numeric literal", ""},
		{`1.`, "ends too soon", ""},
		{`1.e5`, "after decimal point in numeric literal", ""},
		{`1e+`, "ends too soon", ""},
		{`1ex`, "in exponent of numeric literal", ""},
		{`{"a":[1,2`, "ends too soon", ""},
		{strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), "", ""},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "nests more than 1000 levels", ""},
	} {
		t.Run(tc.body[:min(len(tc.body), 40)], func(t *testing.T) {
			is := is.New(t)
			bad := scan([]byte(tc.body))
			if tc.detail == "" {
				is.True(bad == nil) // valid
				is.True(json.Valid([]byte(tc.body)))
				return
			}
			is.True(bad != nil) // refused
			is.True(strings.Contains(bad.detail, tc.detail))
			if tc.field != "" {
				is.Equal(len(bad.fields), 1)
				is.Equal(bad.fields[0].Field, tc.field) // names the member
			}
		})
	}
}

// An object of many members is checked through a map: the same answers.
func TestScannerManyMembers(t *testing.T) {
	is := is.New(t)
	var b strings.Builder
	b.WriteString(`{"x":{`)
	for i := range 1000 {
		b.WriteString(`"k` + strconv.Itoa(i) + `":1,`)
	}
	is.True(scan([]byte(b.String()+`"k1000":1}}`)) == nil) // all distinct
	for _, dup := range []string{`"k0"`, `"k999"`, `"\u006b15"`, `"k16"`} {
		bad := scan([]byte(b.String() + dup + `:1}}`))
		is.True(bad != nil) // a duplicate, early or late, escaped or not
		is.Equal(bad.fields[0].Field, "x."+unquote([]byte(dup)))
	}
}

// FuzzScanner checks the scanner against encoding/json: a body it
// accepts is valid JSON with no name twice in an object, every string of
// it unquotes as encoding/json reads it; one it refuses is invalid JSON,
// invalid UTF-8, a lone surrogate escape, a name given twice, or too deep.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"\u00e9\n"}],"c":null}`, `{"a":1,"a":2}`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `[1e5,-0.1,true]`, `{"a":{"b":1,"b":2}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bad := scan(data)
		valid := json.Valid(data)
		if bad == nil {
			if !valid {
				t.Fatalf("accepted %q, which encoding/json refuses", data)
			}
			if d, ok := refDuplicate(data); ok {
				t.Fatalf("accepted %q, which gives %q twice", data, d)
			}
			checkStrings(t, data)
			return
		}
		switch {
		case !valid, !utf8.Valid(data):
		case strings.Contains(bad.detail, "surrogate"):
			if !bytes.Contains(bytes.ToLower(data), []byte(`\ud`)) {
				t.Fatalf("%q: %s", data, bad.detail)
			}
		case strings.Contains(bad.detail, "twice"):
			if _, ok := refDuplicate(data); !ok {
				t.Fatalf("%q: %s, but no name is given twice", data, bad.detail)
			}
		case strings.Contains(bad.detail, "nests more"):
		default:
			t.Fatalf("refused %q, which encoding/json accepts: %s", data, bad.detail)
		}
	})
}

// refDuplicate returns a name given twice in an object of data, valid
// JSON, as encoding/json reads it, if there is one.
func refDuplicate(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj   bool
		key   bool // the next string token is a name
		names map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: d == '{', key: d == '{', names: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top == nil || !top.obj {
			continue
		}
		if top.key {
			name := tok.(string)
			if top.names[name] {
				return name, true
			}
			top.names[name] = true
			top.key = false
			continue
		}
		top.key = true
	}
}

// checkStrings checks that every string of data, valid, unquotes as
// encoding/json reads it.
func checkStrings(t *testing.T, data []byte) {
	s := scanner{data: data}
	for s.pos < len(data) {
		if data[s.pos] != '"' {
			s.pos++
			continue
		}
		sp, ok := s.str()
		if !ok {
			t.Fatalf("%q: a string does not scan at %d", data, sp.start)
		}
		var want string
		if err := json.Unmarshal(data[sp.start:sp.end], &want); err != nil {
			t.Fatalf("%q: %v", data[sp.start:sp.end], err)
		}
		if got := unquote(data[sp.start:sp.end]); got != want {
			t.Fatalf("unquote(%q) = %q, want %q", data[sp.start:sp.end], got, want)
		}
	}
}
