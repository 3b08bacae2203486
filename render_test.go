package prompts_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

func fieldsOf(err error) []string {
	var e *prompts.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestRenderDotprompt(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt,
		Content: `{{role "system"}}You are {{persona.name}}.{{history}}{{role "user"}}{{#each items}}[{{this}}]{{/each}} {{media url=img}} {{missing}}{{@state.n}}`}
	tmpl, err := prompts.ParseTemplate(v)
	is.NoErr(err)
	out, err := tmpl.Render(ctx, prompts.RenderInput{
		Values:  map[string]any{"persona": map[string]any{"name": "Ada"}, "items": []any{"a", json.Number("2")}, "img": "https://x/y.png"},
		Context: map[string]any{"state": map[string]any{"n": "!"}},
		History: []prompts.Message{{Role: "model", Content: []prompts.Part{{Text: "earlier"}}}},
	})
	is.NoErr(err)
	var roles []string
	for _, m := range out.Messages {
		roles = append(roles, m.Role)
	}
	is.Equal(roles, []string{"system", "model", "user"}) // role markers and the history
	is.Equal(out.Messages[0].Content[0].Text, "You are Ada.")
	is.Equal(out.Messages[1].Content[0].Text, "earlier")
	is.Equal(out.Messages[2].Content[0].Text, "[a][2] ")
	is.Equal(out.Messages[2].Content[1].Media.URL, "https://x/y.png") // a media part
	is.Equal(out.Messages[2].Content[2].Text, " !")                   // a value not given renders empty; the context
	is.True(strings.Contains(out.Text, "You are Ada.") && strings.Contains(out.Text, "[a][2]"))

	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"persona": "x", "zz": 1, "aa": 2}})
	is.True(errors.Is(err, prompts.ErrInvalid))
	is.Equal(fieldsOf(err), []string{"variables.aa", "variables.zz"}) // unused, one entry each, in order
	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"zz": 1, "img": "u"}, AllowUnused: true})
	is.NoErr(err) // allowed
	_, err = tmpl.Render(ctx, prompts.RenderInput{Values: map[string]any{"img": "u"}, History: []prompts.Message{{Role: "assistant"}}})
	is.Equal(fieldsOf(err), []string{"history[0].role"})
}

func TestRenderDotpromptBounded(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: `{{#each xs}}{{../big}}{{/each}}`}
	xs := make([]any, 5000)
	_, err := v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"xs": xs, "big": strings.Repeat("x", 1<<10)}})
	is.True(errors.Is(err, prompts.ErrInvalid))
	is.Equal(fieldsOf(err), []string{"variables"}) // 5 MB from a loop: refused
	is.True(strings.Contains(err.(*prompts.Error).Fields[0].Detail, "4194304"))
	deep := strings.Repeat("{{#if x}}", 65) + strings.Repeat("{{/if}}", 65)
	_, err = prompts.ParseTemplate(prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: deep})
	is.Equal(fieldsOf(err), []string{"content"}) // nesting at most 64
	_, err = prompts.TemplateVariables(prompts.FormatDotprompt, deep)
	is.Equal(fieldsOf(err), []string{"content"})
}

func TestRenderPlainMessages(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{Content: "Hi {{name}}"} // no format: plain
	out, err := v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "Bo"}})
	is.NoErr(err)
	is.Equal(out, prompts.Rendered{Text: "Hi Bo", Messages: []prompts.Message{{Role: "user", Content: []prompts.Part{{Text: "Hi Bo"}}}}})
	_, err = v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": 1}})
	is.Equal(fieldsOf(err), []string{"variables.name"}) // strings only
	_, err = v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "x", "other": "y"}})
	is.Equal(fieldsOf(err), []string{"variables.other"}) // strict
	_, err = v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "x", "other": "y"}, AllowUnused: true})
	is.NoErr(err)
	_, err = v.RenderMessages(t.Context(), prompts.RenderInput{})
	is.Equal(fieldsOf(err), []string{"variables.name"}) // missing
}

func TestRenderHelperError(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: `{{media url=img}}`}
	_, err := v.RenderMessages(t.Context(), prompts.RenderInput{})
	is.Equal(fieldsOf(err), []string{"variables"}) // a helper given what it cannot use: 400, not 500
}

func TestRenderTextOfDotprompt(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: `{{role "system"}}{{#if a}}A{{/if}}{{role "user"}}{{b}}`}
	text, err := v.Render(map[string]string{"a": "yes", "b": "B"})
	is.NoErr(err)
	is.Equal(text, "AB") // the text parts, not the template filled as plain
	_, err = v.Render(map[string]string{"c": "x"})
	is.Equal(fieldsOf(err), []string{"variables.c"})
}

// A dotprompt version renders as Dotprompt renders the source it came
// from: a version with front matter (metadata_) as the body of a .prompt
// file, without its surrounding white space; one without, as a source
// without front matter, every byte. The content keeps it all, and a
// plain version renders every byte.
func TestRenderDotpromptTrimsTheBody(t *testing.T) {
	is := is.New(t)
	content := "\n\n  Hello {{name}}.\n\n"
	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: content, Metadata: `{"model":"m"}`}
	out, err := v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "Bo"}})
	is.NoErr(err)
	is.Equal(out.Text, "Hello Bo.") // with front matter: trimmed
	is.Equal(v.Content, content)    // the content as it was
	v.Metadata = ""
	out, err = v.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "Bo"}})
	is.NoErr(err)
	is.Equal(out.Text, "\n\n  Hello Bo.\n\n") // without: every byte
	plain := prompts.PromptVersion{Content: content}
	out, err = plain.RenderMessages(t.Context(), prompts.RenderInput{Values: map[string]any{"name": "Bo"}})
	is.NoErr(err)
	is.Equal(out.Text, "\n\n  Hello Bo.\n\n")
}
