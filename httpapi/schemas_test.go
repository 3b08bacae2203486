package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// jsonBody returns v as JSON text, for a request body.
func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A dotprompt version's front matter (metadata_) with a Dotprompt key of
// the wrong shape is 400 naming the key; nothing is stored.
func TestFrontMatterShapes(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	versions := "/v1/integration/prompts/" + id + "/versions"
	e.newVersion(id, `{"content":"{{x}}","template_format":"dotprompt","metadata_":{"model":"m","config":{"t":1},"tools":["a"],"metadata":{},"output":{"format":"json","schema":{"ok":"boolean"}},"input":{"default":{"x":"d"},"schema":{"x?":"string"}},"acme.owner":"team"}}`)
	for _, tc := range []struct{ metadata, field, detail string }{
		{`{"model":1}`, "metadata_.model", "must be a string"},
		{`{"config":"hot"}`, "metadata_.config", "must be an object"},
		{`{"tools":"a"}`, "metadata_.tools", "must be an array of strings"},
		{`{"tools":[1]}`, "metadata_.tools", "must be an array of strings"},
		{`{"metadata":[]}`, "metadata_.metadata", "must be an object"},
		{`{"output":"json"}`, "metadata_.output", "must be an object"},
		{`{"output":{"format":{}}}`, "metadata_.output.format", "must be a string"},
		{`{"output":{"schema":{"a":"nosuchtype"}}}`, "metadata_.output.schema", `does not compile: a: unsupported scalar type "nosuchtype"`},
		{`{"input":[]}`, "metadata_.input", "must be an object"},
		{`{"input":{"default":1}}`, "metadata_.input.default", "must be an object"},
		{`{"input":{"schema":{"type":"object","properties":{"a":{"type":"text"}}}}}`, "metadata_.input.schema", "does not compile: at /properties/a/type: "},
		{`{"input":{"schema":{"a":{"$ref":"https://example.com/a.json"}}}}`, "metadata_.input.schema", "does not compile: "},
		{`{"input":{"schema":{"type":"string"}}}`, "metadata_.input.schema", "must describe an object"},
		{`{"input":{"schema":{"a":"string"},"default":{"b":1}}}`, "metadata_.input.default.b", "is not a property of the input schema"},
	} {
		r := e.do("POST", versions, `{"content":"{{x}}","metadata_":`+tc.metadata+`}`) // the latest's format, dotprompt
		is.Equal(r.status, 400)                                                        // tc.metadata
		is.Equal(fieldsOf(t, r), []string{tc.field})                                   // tc.metadata
		is.True(strings.HasPrefix(problemDetail(t, r, tc.field), tc.detail))           // tc.metadata
	}
	r := e.do("POST", versions, `{"content":"{{x}}","template_format":"plain","metadata_":{"config":"hot"}}`)
	is.Equal(r.status, 200)                            // a plain version's metadata_ is free-form
	is.Equal(len(e.do("GET", versions, "").arr(t)), 2) // nothing else stored
	r = e.do("POST", versions, `{"content":"{{x}}","template_format":"dotprompt","metadata_":{"config":"hot"}}`)
	is.Equal(r.status, 400) // named explicitly
	is.Equal(fieldsOf(t, r), []string{"metadata_.config"})
}

// With an input schema a version's variables are its properties, and a
// render checks the values (input.default applied): one errors entry a
// variable, in name order.
func TestRenderInputSchema(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	base := "/v1/integration/prompts/" + id
	fm := map[string]any{"input": map[string]any{
		"default": map[string]any{"n": 3},
		"schema":  map[string]any{"name": "string", "n": "integer", "tags?(array)": "string", "pos?(object)": map[string]any{"x": "number"}},
	}}
	e.newVersion(id, jsonBody(t, map[string]any{"content": "{{name}} x{{n}}{{#each tags}} #{{this}}{{/each}}{{unread}}", "template_format": "dotprompt",
		"metadata_": fm, "environments": []string{"production"}}))
	v := e.do("GET", base+"/versions/1", "").obj(t)
	is.Equal(v["variables"], []any{"n", "name", "pos", "tags"}) // the schema's properties

	r := e.do("POST", base+"/render", `{"variables":{"name":"Ada","tags":["a","b"]}}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["text"], "Ada x3 #a #b") // the default applied
	r = e.do("POST", base+"/render", `{"variables":{"name":"Ada","n":7.0}}`)
	is.Equal(r.status, 200)
	is.Equal(r.obj(t)["text"], "Ada x7") // a JSON integer, written as a number

	r = e.do("POST", base+"/render", `{"variables":{"zz":1,"n":"3","tags":["a",1],"pos":{"x":"1"},"unread":"u"}}`)
	is.Equal(r.status, 400)
	is.Equal(r.problem(t)["errors"], []any{
		map[string]any{"field": "variables.n", "detail": "must be integer, not string"},
		map[string]any{"field": "variables.name", "detail": "is missing: the input schema requires it"},
		map[string]any{"field": "variables.pos", "detail": "at /x: must be number, not string"},
		map[string]any{"field": "variables.tags", "detail": "at /1: must be string, not number"},
		map[string]any{"field": "variables.unread", "detail": "is not named by the input schema"},
		map[string]any{"field": "variables.zz", "detail": "is not named by the input schema"},
	})
	r = e.do("POST", base+"/render", `{"variables":{"name":"Ada","zz":1},"allow_unused":true}`)
	is.Equal(r.status, 200) // allowed: left out
	is.Equal(r.obj(t)["text"], "Ada x3")
	r = e.do("POST", base+"/render", `{"variables":{"name":"Ada","tags":null}}`)
	is.Equal(r.status, 200) // an optional value may be null
}

// The promotion guard compares input schemas: a change of a variable's
// type or of what is required is 409 variables_changed, unless allowed.
func TestPromotionGuardSchemas(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	env := "/v1/integration/prompts/" + id + "/environments/production"
	versions := "/v1/integration/prompts/" + id + "/versions"
	history := "/v1/integration/prompts/" + id + "/deployments"
	e.newVersion(id, `{"content":"{{a}}{{b}}","template_format":"dotprompt","metadata_":{"input":{"schema":{"a":"string","b?":"string"}}},"environments":["production"]}`)
	e.newVersion(id, `{"content":"{{a}}{{b}}","metadata_":{"input":{"schema":{"a":"integer","b?":"string"}}}}`)
	e.newVersion(id, `{"content":"{{a}}{{b}}","metadata_":{"input":{"schema":{"a":"string","b":"string"}}}}`)
	records := len(e.do("GET", history, "").arr(t))

	r := e.do("PUT", env, `{"version_number":2}`)
	is.Equal(r.status, 409)
	is.Equal(r.problem(t)["code"], "variables_changed")
	is.Equal(r.problem(t)["errors"], []any{map[string]any{"field": "variables.a", "detail": "changes type from string to integer"}})
	r = e.do("PUT", env, `{"version_number":3}`)
	is.Equal(r.status, 409)
	is.Equal(r.problem(t)["errors"], []any{map[string]any{"field": "variables.b", "detail": "changes type from string|null to string and becomes required"}})
	r = e.do("POST", versions, `{"content":"{{a}}{{b}}","metadata_":{"input":{"schema":{"a":"boolean","b?":"string"}}},"environments":["production"]}`)
	is.Equal(r.status, 409)                                 // created active: guarded
	is.Equal(len(e.do("GET", versions, "").arr(t)), 3)      // no version stored
	is.Equal(len(e.do("GET", history, "").arr(t)), records) // no record

	is.Equal(e.do("PUT", env, `{"version_number":2,"allow_variable_change":true}`).status, 200)
	r = e.do("POST", env+"/rollback", "")
	is.Equal(r.status, 409) // back to 1 changes a's type again
	is.Equal(r.problem(t)["errors"], []any{map[string]any{"field": "variables.a", "detail": "changes type from integer to string"}})
	is.Equal(e.do("POST", env+"/rollback", `{"allow_variable_change":true}`).status, 200)
	is.Equal(e.do("POST", versions, `{"content":"{{a}}{{b}}","metadata_":{"input":{"schema":{"a":"boolean","b?":"string"}}},"environments":["production"],"allow_variable_change":true}`).status, 200)
}

// The render answer's model, config and output come from the front
// matter, null when absent; text joins the text parts of every message.
func TestRenderFrontMatter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	base := "/v1/integration/prompts/" + id
	e.newVersion(id, `{"content":"{{role \"system\"}}Be brief.{{role \"user\"}}{{q}}{{media url=\"https://x/i.png\"}}!","template_format":"dotprompt",`+
		`"metadata_":{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.30,"stopSequences":["\u2028"]},"output":{"format":"json","schema":{"answer":"string"}},"tools":["search"],"acme.team":"x"},"environments":["production"]}`)
	r := e.do("POST", base+"/render", `{"variables":{"q":"Why?"}}`)
	is.Equal(r.status, 200)
	is.True(strings.Contains(string(r.body), `"config":{"temperature":0.30,`)) // the config as stored: key order, every digit
	got := r.obj(t)
	is.Equal(got["model"], "googleai/gemini-2.5-flash")
	is.Equal(got["config"], map[string]any{"temperature": json.Number("0.30"), "stopSequences": []any{"\u2028"}})
	is.Equal(got["output"], map[string]any{"format": "json", "schema": map[string]any{"answer": "string"}})
	is.Equal(got["text"], "Be brief.Why?!") // the text parts of both messages, joined
	is.Equal(len(got["messages"].([]any)), 2)

	e.newVersion(id, `{"content":"{{q}}","metadata_":{"model":"m"}}`) // a model only
	got = e.do("POST", base+"/render", `{"version_number":2,"variables":{"q":"x"}}`).obj(t)
	is.Equal(got["model"], "m")
	is.Equal(got["config"], nil) // absent: null
	is.Equal(got["output"], nil)

	e.newVersion(id, `{"content":"{{q}}","template_format":"plain","metadata_":{"model":"m","config":{"t":1}}}`)
	got = e.do("POST", base+"/render", `{"version_number":3,"variables":{"q":"x"}}`).obj(t)
	is.Equal(got["model"], nil) // a plain version has no front matter
	is.Equal(got["config"], nil)
	is.Equal(got["output"], nil)
}
