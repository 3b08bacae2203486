package httpapi_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// problemDetail returns the detail of the problem's errors entry for field.
func problemDetail(t *testing.T, r resp, field string) string {
	t.Helper()
	errs, _ := r.problem(t)["errors"].([]any)
	for _, e := range errs {
		if m := e.(map[string]any); m["field"] == field {
			return m["detail"].(string)
		}
	}
	return ""
}

func TestTemplateFormat(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	base := "/v1/integration/prompts/" + id
	v1 := e.newVersion(id, `{"content":"Hi {{name}}"}`)
	is.Equal(keysOf(v1), versionFields) // the create answer keeps part A's fields
	v2 := e.newVersion(id, `{"content":"{{#if on}}{{user.name}}{{/if}}","template_format":"dotprompt"}`)
	is.Equal(keysOf(v2), versionFields)
	bad := e.do("POST", base+"/versions", `{"content":"x","template_format":""}`)
	is.Equal(bad.status, 400) // "" is no format, not absent
	is.Equal(fieldsOf(t, bad), []string{"template_format"})
	r0 := e.do("POST", base+"/versions", `{"content":"{{#each xs}}{{this}}{{/each}}","template_format":null}`) // null: the latest's
	is.Equal(r0.status, 200)
	is.Equal(r0.header.Get("Template-Format"), "dotprompt") // the format, in a header

	list := e.do("GET", base+"/versions", "").arr(t)
	is.Equal(len(list), 3)
	is.Equal(list[0]["template_format"], "dotprompt") // taken from the latest
	is.Equal(list[0]["variables"], []any{"xs"})
	is.Equal(list[1]["template_format"], "dotprompt")
	is.Equal(list[1]["variables"], []any{"on", "user"})
	is.Equal(list[2]["template_format"], "plain") // the first is plain
	got := e.do("GET", base+"/versions/2", "").obj(t)
	is.Equal(keysOf(got), versionDetailFields)
	is.Equal(got["template_format"], "dotprompt")

	e.do("PUT", base+"/environments/production", `{"version_number":2}`)
	read := e.do("GET", base, "").obj(t)
	is.Equal(keysOf(read["active_version"].(map[string]any)), versionFields) // read 3 unchanged

	r := e.do("POST", base+"/versions", `{"content":"line one\n  {{#if x}}","template_format":"dotprompt"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"content"})
	is.True(strings.Contains(problemDetail(t, r, "content"), "line 2, column 3")) // where it went wrong
	r = e.do("POST", base+"/versions", `{"content":"{{/each}}"}`)
	is.Equal(r.status, 400) // the latest's format, dotprompt
	r = e.do("POST", base+"/versions", `{"content":"{{> _header}}"}`)
	is.Equal(r.status, 400)
	is.True(strings.Contains(problemDetail(t, r, "content"), "not a prompt key")) // a partial is a key
	r = e.do("POST", base+"/versions", `{"content":"x","template_format":"jinja"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"template_format"})
	is.True(strings.Contains(problemDetail(t, r, "template_format"), `"jinja"`)) // naming it
	r = e.do("POST", base+"/versions", `{"content":"x","template_format":1}`)
	is.Equal(r.status, 400)
	is.Equal(len(e.do("GET", base+"/versions", "").arr(t)), 3) // nothing stored
}

func TestRenderDotprompt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)
	base := "/v1/integration/prompts/" + id
	e.newVersion(id, `{"content":"{{role \"system\"}}You help {{user.name}}.{{history}}{{role \"user\"}}{{#each qs}}{{this}};{{/each}}{{media url=img contentType=\"image/png\"}}{{@state.n}}{{absent}}","template_format":"dotprompt","environments":["production"]}`)
	r := e.do("POST", base+"/render", `{"variables":{"user":{"name":"Ada"},"qs":["a",2],"img":"https://x/i.png"},`+
		`"history":[{"role":"model","content":[{"text":"before"}]}],"context":{"state":{"n":"!"}}}`)
	is.Equal(r.status, 200)
	got := r.obj(t)
	is.Equal(keysOf(got), sortedFields("prompt_id", "version_id", "version_number", "template_format", "messages", "model", "config", "output", "text"))
	is.Equal(got["template_format"], "dotprompt")
	is.Equal(got["model"], nil) // no front matter
	is.Equal(got["config"], nil)
	is.Equal(got["output"], nil)
	is.Equal(got["messages"], []any{
		map[string]any{"role": "system", "content": []any{map[string]any{"text": "You help Ada."}}},
		map[string]any{"role": "model", "content": []any{map[string]any{"text": "before"}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"text": "a;2;"}, map[string]any{"media": map[string]any{"url": "https://x/i.png", "contentType": "image/png"}}, map[string]any{"text": "!"}}},
	})
	is.Equal(got["text"], "You help Ada.beforea;2;!") // the text parts joined

	r = e.do("POST", base+"/render", `{"variables":{"img":"u","nope":1,"also":"x"}}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"variables.also", "variables.nope"}) // never read
	r = e.do("POST", base+"/render", `{"variables":{"img":"u","nope":1},"allow_unused":true}`)
	is.Equal(r.status, 200) // allowed
	r = e.do("POST", base+"/render", `{"variables":{"img":"u"},"history":[{"role":"bot","content":[]}]}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"history[0].role"})
	r = e.do("POST", base+"/render", `{"variables":{},"history":[{"role":"user","content":[{"image":"x"}]}]}`)
	is.Equal(r.status, 400) // the shape of a message
	r = e.do("POST", base+"/render", `{"variables":{"img":"u"},"history":[{"role":"user","content":[{"text":"a","media":{"url":"u"}},{"media":{}}]}]}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"history[0].content[0]", "history[0].content[1].media.url"}) // each named by its path
	r = e.do("POST", base+"/render", `{"variables":{"img":"u"},"history":[{"role":"user","metadata":{"a":1},"content":[{"text":"a"}]}]}`)
	is.Equal(r.status, 200) // Dotprompt's message metadata: ignored

	// Bounded: a loop that would pass 4 MiB is refused, not built.
	e.newVersion(id, `{"content":"{{#each xs}}{{#each @root.xs}}{{#each @root.xs}}{{@root.big}}{{/each}}{{/each}}{{/each}}"}`)
	r = e.do("POST", base+"/render", `{"version_number":2,"variables":{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],"big":"`+strings.Repeat("x", 1024)+`"}}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"variables"})
	is.True(strings.Contains(problemDetail(t, r, "variables"), "4194304"))

	// A plain version: strings only, one user message.
	p2 := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(p2, `{"content":"Hi {{name}}","environments":["production"]}`)
	r = e.do("POST", "/v1/integration/prompts/"+p2+"/render", `{"variables":{"name":1}}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"variables.name"})
	r = e.do("POST", "/v1/integration/prompts/"+p2+"/render", `{"variables":{"name":"Bo","x":"y"},"allow_unused":true}`)
	is.Equal(r.status, 200)
	got = r.obj(t)
	is.Equal(got["template_format"], "plain")
	is.Equal(got["messages"], []any{map[string]any{"role": "user", "content": []any{map[string]any{"text": "Hi Bo"}}}})
	is.Equal(got["text"], "Hi Bo")
}
