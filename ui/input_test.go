package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// stateOf is what any action could change: the prompts of Alpha, and the
// prompt's revision, versions and history.
func stateOf(f *fixture) string {
	ps, _, err := f.store.ListPrompts(context.Background(), prompts.PromptFilter{ProjectIDs: []string{f.alpha.ID}})
	if err != nil {
		f.t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + " ")
	}
	fmt.Fprintf(&b, "revision %d, %d versions, %d records", f.revision(), latest(f), len(f.history()))
	return b.String()
}

// with returns form with the fields of more added (a field of both is
// then given twice).
func with(form url.Values, more url.Values) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	for k, v := range more {
		out[k] = append(out[k], v...)
	}
	return out
}

// Every form and query the interface reads refuses a field given twice,
// and a field (name or value) that is not valid UTF-8, with 400 naming
// it; nothing changes. Taking the first of two values, or storing bytes
// a UTF-8 page cannot show, would act on what nobody saw.
func TestBadFieldsAreRefusedByName(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn(adminKey)
	change := func(page string, fields url.Values) url.Values {
		return with(formOf(b.get(f.url("/"+page))), fields)
	}
	csrf := url.Values{"csrf": {b.csrf}}
	newPrompt := f.prefix + "projects/" + f.alpha.ID + "/prompts"
	for _, tc := range []struct {
		name   string
		method string
		path   string
		form   url.Values
		says   string
	}{
		{"new prompt: key twice", "POST", newPrompt, with(csrf, url.Values{"key": {"a", "b"}, "name": {"N"}}), `The form's field “key” is given more than once`},
		{"new prompt: key not UTF-8", "POST", newPrompt, with(csrf, url.Values{"key": {"k\xff"}, "name": {"N"}}), `The form's field “key” is not valid UTF-8`},
		{"new version: content twice", "POST", f.url("/versions"), with(csrf, url.Values{"content": {"a", "b"}}), `“content” is given more than once`},
		{"new version: content not UTF-8", "POST", f.url("/versions"), with(csrf, url.Values{"content": {"\xfe\xff"}}), `“content” is not valid UTF-8`},
		{"new version: a name not UTF-8", "POST", f.url("/versions"), with(csrf, url.Values{"content": {"a"}, "x\xff": {"1"}}), "“x\uFFFD” has a name that is not valid UTF-8"},
		{"render: a value twice", "POST", f.url("/versions/1/render"), with(csrf, url.Values{"var.name": {"Ada", "Bob"}}), `“var.name” is given more than once`},
		{"render: a value not UTF-8", "POST", f.url("/versions/1/render"), with(csrf, url.Values{"var.name": {"%\xff"}}), `“var.name” is not valid UTF-8`},
		{"promote: version twice", "POST", f.url("/promote"), change("promote", url.Values{"version": {"1", "2"}, "environment": {"staging"}}), `“version” is given more than once`},
		{"promote: environment twice", "POST", f.url("/promote"), change("promote", url.Values{"version": {"2"}, "environment": {"staging", "production"}}), `“environment” is given more than once`},
		{"rollback: reason twice", "POST", f.url("/rollback"), change("rollback", url.Values{"environment": {"production"}, "reason": {"a", "b"}}), `“reason” is given more than once`},
		{"deactivate: reason not UTF-8", "POST", f.url("/deactivate"), change("deactivate", url.Values{"environment": {"production"}, "reason": {"\xc3"}}), `“reason” is not valid UTF-8`},
		{"sign out: csrf twice", "POST", f.prefix + "signout", url.Values{"csrf": {b.csrf, b.csrf}}, `“csrf” is given more than once`},
		{"search: q twice", "GET", f.prefix + "projects/" + f.alpha.ID + "?q=a&q=b", nil, `The address's query parameter “q” is given more than once`},
		{"search: q not UTF-8", "GET", f.prefix + "projects/" + f.alpha.ID + "?q=%ff%fe", nil, `The address's query parameter “q” is not valid UTF-8`},
		{"compare: from twice", "GET", f.url("/compare?from=1&from=2&to=2"), nil, `“from” is given more than once`},
		{"promote form: version not UTF-8", "GET", f.url("/promote?version=%ff"), nil, `“version” is not valid UTF-8`},
		{"an unreadable query", "GET", f.url("/compare?from=%zz"), nil, `The query of the address could not be read`},
		{"index: next twice", "GET", f.prefix + "?next=a&next=b", nil, `“next” is given more than once`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := stateOf(f)
			var p page
			if tc.method == "GET" {
				p = b.get(tc.path)
			} else {
				p = b.post(tc.path, tc.form)
			}
			is.Equal(p.StatusCode, http.StatusBadRequest) // refused
			if !strings.Contains(text(p), tc.says) {
				t.Errorf("the page does not say %q:\n%s", tc.says, text(p))
			}
			is.Equal(stateOf(f), before) // nothing changed
		})
	}
	is := is.New(t)
	is.True(b.sessionCookie() != nil)
	is.Equal(b.get(f.prefix).StatusCode, 200)
	is.True(hasButton(b.get(f.prefix), "Sign out")) // still signed in

	// Signing in with a key given twice is refused too, signing nobody in.
	o := f.browser()
	o.get(f.prefix)
	p := o.post(f.prefix+"signin", url.Values{"key": {readKey, adminKey}})
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), `The form's field “key” is given more than once`))
	is.True(o.sessionCookie() == nil)
}
