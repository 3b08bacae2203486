package mcp

import (
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A schema of any shape is read leniently: what cannot be read is no
// schema, never a panic, and the version's variables are arguments all
// the same.
func TestInputSchemaLenient(t *testing.T) {
	for _, m := range []string{
		``, `null`, `{}`, `{"input":3}`, `{"input":{"schema":"x"}}`, `{"input":{"schema":[1]}}`,
		`{"input":{"schema":{"properties":5}}}`, `{"input":{"schema":{"properties":{"a":3}}}}`,
		`{"input":{"schema":{"properties":{"a":{"type":[1,"null"]}},"required":"a"}}}`,
		`{"input":{"schema":{"a(":"x","(":"y","?":1,"b()":"","c(,)":{},"d?(object, e)":{"f":"string"}}}}`,
	} {
		v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Metadata: prompts.Metadata(m), Variables: []string{"a"}}
		args := arguments(v)
		found := false
		for _, a := range args {
			found = found || a.name == "a"
		}
		if !found {
			t.Errorf("%s: the variable a is no argument: %v", m, args)
		}
		_, _ = values(v, map[string]string{"a": "1", "(": "", "d": "{}"}) // an error or not; never a panic
	}
}

func TestPicoschema(t *testing.T) {
	is := is.New(t)
	props, ok := inputSchema(`{"input":{"schema":{"name":"string, who","age?":"integer","tags(array, the tags)":"string","addr?(object)":{"city":"string"},"any":"any, whatever"}}}`)
	is.True(ok)
	is.Equal(props["name"], argument{name: "name", description: "who", typ: "string", required: true})
	is.Equal(props["age"], argument{name: "age", typ: "integer"})
	is.Equal(props["tags"], argument{name: "tags", description: "the tags", typ: "array", required: true})
	is.Equal(props["addr"], argument{name: "addr", typ: "object"})
	is.Equal(props["any"], argument{name: "any", description: "whatever", required: true})
}
