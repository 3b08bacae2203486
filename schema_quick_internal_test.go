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
		// Many properties, few values: passes walks the values rather
		// than looking each property up.
		{`{"a?":"string","b?":"boolean","c?":"string","d?":"string","e?":"string","f?":"string","g?":"any","h":"string"}`, true},
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
		`{"h":"x"}`, `{"h":"x","b":"no"}`, `{"h":"x","q":"y"}`, `{"b":true}`, `{"h":1}`,
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

	// Both ways of walking agree: each property looked up (about as many
	// values as properties) and each value searched (few values).
	props := map[string]any{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		props[n] = map[string]any{"type": "string"}
	}
	q = newQuickSchema(map[string]any{"type": "object", "properties": props, "required": []any{"h"}})
	is.True(q.passes(map[string]any{"h": "x"}))             // few values: searched
	is.True(!q.passes(map[string]any{"a": "x"}))            // h missing
	is.True(!q.passes(map[string]any{"h": "x", "z": "y"}))  // a name the schema does not name
	is.True(!q.passes(map[string]any{"h": "x", "a": true})) // another type
	all := map[string]any{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7", "h": "8"}
	is.True(q.passes(all)) // as many as the properties: looked up
	all["h"] = 8
	is.True(!q.passes(all)) // another type
	all["h"], all["z"] = "8", "9"
	is.True(!q.passes(all)) // more values than properties
	delete(all, "z")
	delete(all, "a")
	all["zz"] = "x"
	is.True(!q.passes(all)) // as many, one not named
}

// BenchmarkQuickSchemaPasses is the input schema's check of a render's
// values: four strings, four properties (the chat prompt of the load
// harness).
func BenchmarkQuickSchemaPasses(b *testing.B) {
	props := map[string]any{}
	values := map[string]any{}
	for _, n := range []string{"company", "handoff_url", "agent_name", "customer_name"} {
		props[n] = map[string]any{"type": "string"}
		values[n] = "x"
	}
	q := newQuickSchema(map[string]any{"type": "object", "properties": props, "required": []any{"company", "handoff_url", "agent_name", "customer_name"}})
	for b.Loop() {
		if !q.passes(values) {
			b.Fatal("refused")
		}
	}
}
