package httpapi_test

import (
	"testing"

	"github.com/matryer/is"
)

// A NUL character is a broken field wherever it stands, even in a string
// that refers to something by id: 400, not 404.
func TestNULInReferencesIsInvalid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.newPrompt(e.project.ID)["id"].(string)

	r := e.do("POST", "/v1/integration/prompts", `{"project_id":"\u0000","key":"k","name":"N"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"project_id"})

	r = e.do("PUT", "/v1/integration/prompts/"+id+"/environments/staging", `{"version_id":"\u0000"}`)
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"version_id"})

	r = e.do("GET", "/v1/integration/prompts?project_id=%00", "")
	is.Equal(r.status, 400)
	is.Equal(fieldsOf(t, r), []string{"project_id"})
}

// Field rules come before existence for a key that sees only some
// projects too: a prompt the key may not see is answered 400 for a broken
// request, and 404 only once the request is valid.
func TestFieldRulesBeforeVisibility(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	hidden := e.newPrompt(e.project.ID)["id"].(string) // otherKey may not see it
	base := "/v1/integration/prompts/" + hidden
	cases := []struct {
		method, path, bad, good string
	}{
		{"PATCH", base, `{"key":null}`, `{"name":"N"}`},
		{"POST", base + "/versions", `{"content":""}`, `{"content":"c"}`},
		{"PUT", base + "/environments/production", `{}`, `{"version_number":1}`},
		{"PUT", base + "/environments/Dev", `{"version_number":1}`, ""}, // a malformed name: a project's list is not told to a key that cannot see it
		{"DELETE", base + "/environments/Dev", "", ""},
		{"GET", base + "?environment=Dev", "", ""},
		{"GET", base + "/versions?limit=0", "", ""},
	}
	for _, c := range cases {
		r := e.call(e.otherKey, c.method, c.path, c.bad)
		is.Equal(r.status, 400) // the broken request is refused first
		if c.good != "" {
			is.Equal(e.call(e.otherKey, c.method, c.path, c.good).status, 404) // a valid one finds nothing
		}
	}
	// The same requests with the key that sees the prompt: the same 400s.
	for _, c := range cases {
		is.Equal(e.call(e.ownKey, c.method, c.path, c.bad).status, 400)
	}
}
