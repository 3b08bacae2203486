package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// detailOf returns the detail of err's entry for field.
func detailOf(err error, field string) string {
	var e *prompts.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			if f.Field == field {
				return f.Detail
			}
		}
	}
	return ""
}

var formatTests = []test{
	{"a version without a template format takes its prompt's latest version's, plain for the first", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		create := func(in prompts.NewVersion) prompts.PromptVersion {
			t.Helper()
			in.PromptID = p.ID
			v, err := s.CreateVersion(ctx, in)
			is.NoErr(err)
			return v
		}
		const tmpl = "{{role \"system\"}}Be {{tone}}.{{#each items}}{{this}}{{/each}} {{{plain}}}"
		v1 := create(prompts.NewVersion{Content: tmpl})
		is.Equal(v1.TemplateFormat, prompts.FormatPlain)          // the first is plain
		is.Equal(v1.Variables, []string{"plain", "this", "tone"}) // {{name}} only
		v2 := create(prompts.NewVersion{Content: tmpl, TemplateFormat: prompts.FormatDotprompt})
		is.Equal(v2.TemplateFormat, prompts.FormatDotprompt)
		is.Equal(v2.Variables, []string{"items", "plain", "tone"}) // the names the template reads
		v3 := create(prompts.NewVersion{Content: "{{#if x}}{{y.z}}{{/if}}"})
		is.Equal(v3.TemplateFormat, prompts.FormatDotprompt) // the latest's
		is.Equal(v3.Variables, []string{"x", "y"})
		v4 := create(prompts.NewVersion{Content: "{{x}}", Environments: []prompts.Environment{prompts.Staging}})
		is.Equal(v4.TemplateFormat, prompts.FormatDotprompt) // created active too
		v5 := create(prompts.NewVersion{Content: "{{x}}", Idempotency: prompts.Idempotency{Key: "k5", Scope: "ci", Request: "r5"}})
		is.Equal(v5.TemplateFormat, prompts.FormatDotprompt) // and with an idempotency key
		again := create(prompts.NewVersion{Content: "{{x}}", Idempotency: prompts.Idempotency{Key: "k5", Scope: "ci", Request: "r5"}})
		is.Equal(again.TemplateFormat, prompts.FormatDotprompt) // replayed
		is.Equal(again.VersionNumber, 5)
		v6 := create(prompts.NewVersion{Content: "{{#if x}}", TemplateFormat: prompts.FormatPlain})
		is.Equal(v6.TemplateFormat, prompts.FormatPlain) // back to plain: any text is a plain template
		v7 := create(prompts.NewVersion{Content: "{{#if x}}"})
		is.Equal(v7.TemplateFormat, prompts.FormatPlain)
		is.Equal(v7.Variables, []string{})

		want := []prompts.TemplateFormat{"", prompts.FormatPlain, prompts.FormatDotprompt, prompts.FormatDotprompt, prompts.FormatDotprompt, prompts.FormatDotprompt, prompts.FormatPlain, prompts.FormatPlain}
		for n := 1; n <= 7; n++ {
			v, err := s.GetVersion(ctx, p.ID, n)
			is.NoErr(err)
			is.Equal(v.TemplateFormat, want[n]) // GetVersion
		}
		list, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		for _, v := range list {
			is.Equal(v.TemplateFormat, want[v.VersionNumber]) // ListVersions
		}
		a, err := s.GetActive(ctx, p.ID, prompts.Staging)
		is.NoErr(err)
		is.Equal(a.ActiveVersion.TemplateFormat, prompts.FormatDotprompt) // GetActive
		is.Equal(a.ActiveVersion.Variables, []string{"x"})
	}},
	{"a dotprompt template that does not parse is refused, naming its line and column", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi\n  {{#if x}}open", TemplateFormat: prompts.FormatDotprompt})
		s.invalid(err, "content")
		d := detailOf(err, "content")
		is.True(strings.Contains(d, "line ")) // the line and column
		is.True(strings.Contains(d, "column "))
		is.Equal(s.countVersions(p.ID), 0) // nothing stored
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "ok", TemplateFormat: prompts.FormatDotprompt})
		is.NoErr(err)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "x\n{{/if}}"})
		s.invalid(err, "content") // the latest's format, dotprompt, applies
		is.True(strings.Contains(detailOf(err, "content"), "line 2, column 1"))
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{/if}}", Environments: []prompts.Environment{prompts.Production}})
		s.invalid(err, "content") // created active too
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> _other}}"})
		s.invalid(err, "content") // a partial names a prompt key
		is.True(strings.Contains(detailOf(err, "content"), `"_other"`))
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "x", TemplateFormat: "jinja"})
		s.invalid(err, "template_format")
		is.True(strings.Contains(detailOf(err, "template_format"), `"jinja"`)) // naming it
		is.Equal(s.countVersions(p.ID), 1)
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.True(a.ActiveVersion == nil) // nothing activated
	}},
	{"a stored dotprompt version renders to messages, however it is read", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt,
			Content: "{{role \"system\"}}Be {{tone}}.\n{{role \"user\"}}{{q}}", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		got, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		for _, v := range []prompts.PromptVersion{got, *a.ActiveVersion} {
			out, err := v.RenderMessages(ctx, prompts.RenderInput{Values: map[string]any{"tone": "brief", "q": "Why?"}})
			is.NoErr(err)
			is.Equal(out.Messages, []prompts.Message{
				{Role: "system", Content: []prompts.Part{{Text: "Be brief.\n"}}},
				{Role: "user", Content: []prompts.Part{{Text: "Why?"}}},
			})
		}
	}},
}
