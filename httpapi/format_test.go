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
	r = e.do("POST", base+"/versions", `{"content":"{{> header}}"}`)
	is.Equal(r.status, 400)
	is.True(strings.Contains(problemDetail(t, r, "content"), "partials")) // not supported yet
	r = e.do("POST", base+"/versions", `{"content":"x","template_format":"jinja"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"template_format"})
	is.True(strings.Contains(problemDetail(t, r, "template_format"), `"jinja"`)) // naming it
	r = e.do("POST", base+"/versions", `{"content":"x","template_format":1}`)
	is.Equal(r.status, 400)
	is.Equal(len(e.do("GET", base+"/versions", "").arr(t)), 3) // nothing stored
}
