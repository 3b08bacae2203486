package dotprompt_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/dotprompt"
)

func TestTextRendersVariablesAsValues(t *testing.T) {
	is := is.New(t)
	tpl := dotprompt.Text([]dotprompt.TextPart{{Text: "Hi "}, {Var: "role"}, {Text: " {{x}} "}, {Var: "name"}, {Var: "role"}})
	is.Equal(tpl.Variables(), []string{"name", "role"})
	res, err := tpl.Render(context.Background(), dotprompt.Data{Input: map[string]any{"role": "admin", "name": "Ada"}}, dotprompt.Options{})
	is.NoErr(err)
	is.Equal(res.Text, "Hi admin {{x}} Adaadmin")
	is.Equal(len(res.Messages), 1) // a variable named role is a value, not a marker
}

func TestPartialNamesArePaths(t *testing.T) {
	is := is.New(t)
	tpl, err := dotprompt.Parse(`{{> support/greeting.v2 x=1}}{{> "a b"}}{{> c-d}}`)
	is.NoErr(err)
	is.Equal(tpl.Partials(), []string{"a b", "c-d", "support/greeting.v2"}) // as written, as in Handlebars
}
