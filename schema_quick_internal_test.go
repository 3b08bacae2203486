package prompts

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A quickSchema takes the simplest input schemas, and passes only values
// the validator passes: for every schema and values below, it agrees with
// the validator whenever it passes them.
func TestQuickSchemaPassesOnlyWhatTheValidatorPasses(t *testing.T) {
	is := is.New(t)
	schemas := []struct {
		schema string
		quick  bool // a quickSchema
	}{
		{`{"company":"string","agent?":"string, who signs","ok":"boolean","x":"any"}`, true},
		{`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{}},"required":["a"]}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false,"required":["a","z"]}`, true},
		{`{"n":"number"}`, false},
		{`{"a":"string"}`, true},
		{`{"type":"object","properties":{"a":{"type":"string","minLength":3}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, false},
		{`{"type":"object","properties":{"a":{"enum":["x"]}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"minProperties":1}`, false},
	}
	values := []string{
		`{}`, `{"a":"x"}`, `{"a":null}`, `{"a":1}`, `{"a":true}`, `{"a":"x","b":[1]}`, `{"a":"x","z":"y"}`,
		`{"company":"Acme","ok":true,"x":{"y":1}}`, `{"company":"Acme","ok":"yes","x":1}`, `{"company":null,"ok":false,"x":null}`,
		`{"company":"Acme","ok":true,"x":1,"agent":"Sam"}`, `{"company":"Acme","ok":true,"x":1,"agent":null}`,
		`{"company":"Acme","ok":true,"x":1,"other":"o"}`, `{"n":"1"}`,
	}
	for _, sc := range schemas {
		var s any
		is.NoErr(json.Unmarshal([]byte(sc.schema), &s))
		doc, sch, err := compileSchema(s)
		is.NoErr(err) // compiles
		q := newQuickSchema(doc)
		is.Equal(q != nil, sc.quick) // taken as quick, or not
		if q == nil {
			continue
		}
		for _, vs := range values {
			var v map[string]any
			dec := json.NewDecoder(strings.NewReader(vs))
			dec.UseNumber()
			is.NoErr(dec.Decode(&v))
			if q.passes(v) {
				if err := sch.Validate(v); err != nil {
					t.Errorf("schema %s: quick passes %s, the validator refuses it: %v", sc.schema, vs, err)
				}
			}
		}
	}
	q := newQuickSchema(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any{"a"}})
	is.True(q.passes(map[string]any{"a": "x"}))  // the common case passes quickly
	is.True(!q.passes(map[string]any{}))         // a required value missing goes to the validator
	is.True(!q.passes(map[string]any{"a": 1}))   // a value of another type too
	is.True(!q.passes(map[string]any{"b": "x"})) // and a name the schema does not name
	q = newQuickSchema(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{}, "b": map[string]any{}}, "required": []any{"b", "z"}})
	is.True(!q.passes(map[string]any{"a": 1, "b": 2})) // z, required, is never given: the validator judges
	q = newQuickSchema(map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{}, "b": map[string]any{}}, "required": []any{"b"}})
	is.True(q.passes(map[string]any{"a": 1, "b": 2})) // b given, a not required
	is.True(!q.passes(map[string]any{"a": 2}))        // b missing
}
