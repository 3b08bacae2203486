package storetest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

var metadataTests = []test{
	{"metadata numbers keep every digit", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		numbers := []string{
			"3.141592653589793238462643383279",
			"12345678901234567890123",
			"1e400",
			"-0.000000000000000000001",
			"9007199254740993",
			"0.1",
			"-0",
			"1.0",
			"2E-3",
		}
		md := `{"n":[` + strings.Join(numbers, ",") + `],"deep":{"x":` + numbers[0] + `}}`
		v, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: prompts.Metadata(md)})
		is.NoErr(err) // create version with numbers float64 cannot hold
		got, err := s.GetVersion(t.Context(), p.ID, 1)
		is.NoErr(err) // get version
		for _, read := range []prompts.PromptVersion{v, got} {
			var doc struct {
				Metadata struct {
					N    []json.Number
					Deep struct{ X json.Number }
				} `json:"metadata_"`
			}
			is.NoErr(decodeNumbers([]byte(text(api.FromVersion(read))), &doc)) // the version's JSON decodes
			var texts []string
			for _, n := range doc.Metadata.N {
				texts = append(texts, string(n))
			}
			is.Equal(texts, numbers)                          // every number keeps its text, digit for digit
			is.Equal(string(doc.Metadata.Deep.X), numbers[0]) // nested too
		}
	}},
	{"metadata nested objects and arrays survive", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		md := `{
			"model": "gpt-5", "temperature": 0.2, "stop": ["\n\n", "END"],
			"tools": [{"name": "search", "args": {"q": "string", "n": 10, "opts": [true, false, null]}}],
			"empty": {}, "none": [], "nil": null, "text": "é \"quoted\" \\ \u00e9 😀",
			"nested": {"a": {"b": {"c": [[1, 2], [3, [4, {"d": "e"}]]]}}}
		}`
		v, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: prompts.Metadata(md)})
		is.NoErr(err) // create version
		vs, _, err := s.ListVersions(t.Context(), p.ID, prompts.Page{})
		is.NoErr(err) // list versions
		want := decodeValue(t, []byte(md))
		for _, read := range []prompts.PromptVersion{v, vs[0]} {
			is.Equal(decodeValue(t, []byte(read.Metadata)), want) // the same JSON value, key order and white space aside
		}
	}},
	{"metadata null reads back as null", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for _, md := range []prompts.Metadata{"", "null", "  null\n"} {
			v, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: md})
			is.NoErr(err)                              // null metadata is valid
			is.Equal(v.Metadata, prompts.Metadata("")) // returned as null
			got, err := s.GetVersion(t.Context(), p.ID, v.VersionNumber)
			is.NoErr(err)                                                              // get version
			is.Equal(got.Metadata, prompts.Metadata(""))                               // read back as null
			is.True(strings.Contains(text(api.FromVersion(got)), `"metadata_":null,`)) // encoded as null
		}
	}},
	{"metadata must be a JSON object or null", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		before := s.snapshot()
		for _, md := range []prompts.Metadata{"[]", "[{}]", "1", `"text"`, "true", "false", "{", `{"a":}`, `{"a":1}{}`, `{"a":1} x`, "{'a':1}", "nul"} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: md})
			s.invalid(err, "metadata_")
		}
		is.Equal(s.snapshot(), before) // no version was stored
	}},
	{"metadata nests at most 32 levels", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for _, md := range []string{nest(32, false), nest(32, true)} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: prompts.Metadata(md)})
			is.NoErr(err) // 32 levels are fine
		}
		before := s.snapshot()
		for _, md := range []string{nest(33, false), nest(33, true), nest(200, true)} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: prompts.Metadata(md)})
			s.invalid(err, "metadata_")
		}
		is.Equal(s.snapshot(), before) // no version was stored
	}},
	{"metadata gives no name twice in one object", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		before := s.snapshot()
		for md, field := range map[string]string{
			`{"model":"a","model":"b"}`:       "metadata_.model",
			`{"model":"a","n":{"x":1,"x":2}}`: "metadata_.n.x",
			`{"x":{"y":[1,{"z":1,"z":{}}]}}`:  "metadata_.x.y[1].z",
			`{"model":"a","\u006dodel":"b"}`:  "metadata_.model", // the same name, escaped
		} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: prompts.Metadata(md)})
			s.invalid(err, field)
		}
		is.Equal(s.snapshot(), before) // no version was stored
		_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: `{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`})
		is.NoErr(err) // one name in several objects is fine
	}},
	{"metadata encodes to at most 64 KiB", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		sized := func(n int) prompts.Metadata { // compact JSON of exactly n bytes
			return prompts.Metadata(`{"a":"` + strings.Repeat("x", n-len(`{"a":""}`)) + `"}`)
		}
		_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: sized(64 << 10)})
		is.NoErr(err) // exactly 64 KiB is fine
		spaced := prompts.Metadata(`{"a": ` + strings.Repeat(" ", 70<<10) + `1}`)
		_, err = s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: spaced})
		is.NoErr(err) // white space does not count
		before := s.snapshot()
		_, err = s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: sized(64<<10 + 1)})
		s.invalid(err, "metadata_")
		is.Equal(s.snapshot(), before) // no version was stored
	}},
}

// nest returns a JSON object that nests depth levels, with arrays in
// between when arrays is true.
func nest(depth int, arrays bool) string {
	var b strings.Builder
	for i := range depth {
		if arrays && i%2 == 1 {
			b.WriteString(`[`)
		} else {
			b.WriteString(`{"a":`)
		}
	}
	b.WriteString("1")
	for i := depth - 1; i >= 0; i-- {
		if arrays && i%2 == 1 {
			b.WriteString(`]`)
		} else {
			b.WriteString(`}`)
		}
	}
	return b.String()
}

// decodeNumbers decodes JSON keeping numbers as their text.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// decodeValue decodes a JSON value keeping numbers as their text, so that
// comparing two values compares numbers digit for digit.
func decodeValue(t *testing.T, b []byte) any {
	is := is.New(t)
	is.Helper()
	var v any
	is.NoErr(decodeNumbers(b, &v)) // valid JSON
	return v
}
