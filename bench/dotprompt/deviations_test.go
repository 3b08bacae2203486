package dotpromptbench

import (
	"context"
	"strings"
	"testing"
)

// theirDeviations are the inputs on which google/dotprompt/go renders
// other than Dotprompt's reference implementation (the npm package, on
// Handlebars.js 4.7), with what the reference renders; README.md gives
// the reasons. The first three occur in TestDifferential's templates;
// the grammar leaves the others out.
var theirDeviations = []struct {
	name  string
	src   string
	input map[string]any
	want  string // the reference's text, one user message
}{
	{"a name missing from the context is looked up in the enclosing ones",
		"{{#each objs}}[{{s1}}]{{/each}}", map[string]any{"objs": []any{map[string]any{"name": "a"}}, "s1": "S"}, "[]"},
	{"@key in #each over a list",
		"{{#each arr}}{{@key}}{{/each}}", map[string]any{"arr": []any{"a", "b"}}, "01"},
	{"white space around block tags",
		"0{{#if z}}a\n{{/if}} {{#unless n~}} {{!-- c --}} {{/unless}}\n", map[string]any{"n": 1.0}, "0 \n"},
	{"an empty object is true",
		"{{#if obj}}y{{else}}n{{/if}}{{#with obj}}w{{/with}}", map[string]any{"obj": map[string]any{}}, "yw"},
	{"a list prints as JavaScript joins it",
		"{{arr}}", map[string]any{"arr": []any{1.0, "b"}}, "1,b"},
	{"an object prints as JavaScript prints it",
		"{{obj}}", map[string]any{"obj": map[string]any{"a": 1.0}}, "[object Object]"},
	{"json escapes < > & as Go's encoding/json does",
		"{{json s}}", map[string]any{"s": "<a&b>"}, `"<a&b>"`},
	{"ifEquals: a number literal never equals a number from JSON",
		"{{#ifEquals n 1}}y{{else}}n{{/ifEquals}}", map[string]any{"n": 1.0}, "y"},
	{"ifEquals on an object panics",
		"{{#ifEquals obj obj}}y{{else}}n{{/ifEquals}}", map[string]any{"obj": map[string]any{"a": 1.0}}, "y"},
}

// TestTheirDeviations checks each deviation that README.md lists: ours
// renders what the reference renders, theirs does not.
func TestTheirDeviations(t *testing.T) {
	for _, d := range theirDeviations {
		t.Run(d.name, func(t *testing.T) {
			o, th := prepare(t, specCase{name: d.name, body: d.src, source: d.src, input: d.input})
			ours, err := o.messages(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := text(ours); got != d.want {
				t.Errorf("ours renders %q, the reference %q", got, d.want)
			}
			theirs, err := th.messages()
			if err == nil && text(theirs) == d.want {
				t.Errorf("theirs renders %q as the reference does: no longer a deviation, take it out of README.md", d.want)
			}
		})
	}
}

func text(ms []msg) string {
	var b strings.Builder
	for _, m := range ms {
		for _, p := range m.Content {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
