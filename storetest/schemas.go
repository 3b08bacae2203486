package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// schemaFM is front matter with an input schema: name required, age
// optional (and so also null), a default for age.
const schemaFM = `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.5},` +
	`"input":{"default":{"age":30},"schema":{"name":"string, who","age?":"integer"}},"ns.key":{"any":"thing"}}`

var schemaTests = []test{
	{"a dotprompt version whose front matter has the wrong shape is refused, and nothing changes", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{name}}", TemplateFormat: prompts.FormatDotprompt,
			Metadata: schemaFM, Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err) // the right shapes, and an extension key
		before, rev := s.snapshot(), s.revision(p.ID)
		for _, in := range []prompts.NewVersion{
			{Metadata: `{"config":"hot"}`, TemplateFormat: prompts.FormatDotprompt},
			{Metadata: `{"config":"hot"}`}, // the format the latest version has
			{Metadata: `{"config":"hot"}`, Environments: []prompts.Environment{prompts.Staging}},
			{Metadata: `{"config":"hot"}`, Idempotency: prompts.Idempotency{Key: "k", Scope: "ci", Request: "r"}},
		} {
			in.PromptID, in.Content = p.ID, "{{name}}"
			_, err := s.CreateVersion(ctx, in)
			s.invalid(err, "metadata_.config")
			is.Equal(detailOf(err, "metadata_.config"), "must be an object")
		}
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{/if}}",
			Metadata: `{"model":7,"input":{"schema":{"a":"strin"}},"output":{"schema":{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}}}`})
		s.invalid(err, "content", "metadata_.model", "metadata_.output.schema", "metadata_.input.schema") // every one at once
		is.True(strings.HasPrefix(detailOf(err, "metadata_.input.schema"), "does not compile: "))
		is.True(strings.Contains(detailOf(err, "metadata_.output.schema"), "nothing is loaded")) // no remote schema
		is.Equal(s.snapshot(), before)                                                           // nothing stored, nothing activated
		is.Equal(s.revision(p.ID), rev)                                                          // no revision
		is.Equal(s.countVersions(p.ID), 1)

		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{name}}", TemplateFormat: prompts.FormatPlain, Metadata: `{"config":"hot"}`})
		is.NoErr(err) // a plain version's metadata_ is free-form
		is.Equal(v.Variables, []string{"name"})
	}},
	{"a dotprompt version's variables are its input schema's properties, however it is read", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}{{#if extra}}!{{/if}}", TemplateFormat: prompts.FormatDotprompt,
			Metadata: schemaFM, Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		want := []string{"age", "name"} // not extra, which the template reads
		is.Equal(v.Variables, want)     // CreateVersion
		got, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)
		is.Equal(got.Variables, want) // GetVersion
		list, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(list[0].Variables, want) // ListVersions
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.Equal(a.ActiveVersion.Variables, want) // GetActive

		// A stored version renders under its schema, and with its front matter.
		out, err := a.ActiveVersion.RenderMessages(ctx, prompts.RenderInput{Values: map[string]any{"name": "Ada"}})
		is.NoErr(err)
		is.Equal(out.Text, "Hi Ada")
		is.Equal(out.Model, "googleai/gemini-2.5-flash")
		is.Equal(out.Config, `{"temperature":0.5}`)
		_, err = got.RenderMessages(ctx, prompts.RenderInput{Values: map[string]any{"age": "x", "extra": true}})
		s.invalid(err, "variables.age", "variables.extra", "variables.name") // wrong type, not named, missing: in name order

		v, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}{{#if extra}}!{{/if}}"})
		is.NoErr(err) // no schema: the names the template reads
		is.Equal(v.Variables, []string{"extra", "name"})
	}},
	{"the promotion guard refuses a change of a variable's type or of what is required, atomically, unless allowed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		create := func(schema string, envs ...prompts.Environment) {
			t.Helper()
			md := prompts.Metadata("")
			if schema != "" {
				md = prompts.Metadata(`{"input":{"schema":` + schema + `}}`)
			}
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}{{b}}", TemplateFormat: prompts.FormatDotprompt, Metadata: md, Environments: envs})
			is.NoErr(err)
		}
		create(`{"a":"string","b?":"string"}`, prompts.Production)                                                       // 1, active
		create(`{"b?":"string, described","a":"string, described"}`)                                                     // 2: the same inputs
		create(`{"a":"integer","b?":"string"}`)                                                                          // 3: a's type
		create(`{"a":"string","b":"string"}`)                                                                            // 4: b required (and no longer null)
		create(`{"a?":"string","b?":"string"}`)                                                                          // 5: a no longer required
		create(``)                                                                                                       // 6: no schema
		create(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":["string","null"]}},"required":["a"]}`) // 7: 1 in JSON Schema
		before, rev := s.snapshot(), s.revision(p.ID)
		records := len(s.deployments(p.ID, ""))
		activate := func(n int, allow bool) error {
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n),
				Change: prompts.Change{AllowVariableChange: allow}})
			return err
		}
		for n, want := range map[int]string{
			3: "changes type from string to integer",
			4: "changes type from string|null to string and becomes required",
			5: "changes type from string to string|null and is no longer required",
			6: "is no longer typed by an input schema (it was string)",
		} {
			err := activate(n, false)
			is.True(errors.Is(err, prompts.ErrVariablesChanged)) // refused
			field := "variables.a"
			if n == 4 {
				field = "variables.b"
			}
			is.Equal(detailOf(err, field), want) // naming the variable and the change
		}
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}{{b}}", Metadata: `{"input":{"schema":{"a":"number","b?":"string"}}}`,
			Environments: []prompts.Environment{prompts.Production}})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // a version created active is guarded too
		is.Equal(detailOf(err, "variables.a"), "changes type from string to number")
		is.Equal(s.snapshot(), before)                  // nothing changed
		is.Equal(s.revision(p.ID), rev)                 // no revision
		is.Equal(len(s.deployments(p.ID, "")), records) // no record

		is.NoErr(activate(2, false)) // the same types and requirements pass
		is.NoErr(activate(7, false)) // in JSON Schema too
		is.NoErr(activate(3, true))  // a change, when allowed
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // a rollback is guarded
		is.Equal(detailOf(err, "variables.a"), "changes type from integer to string")
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{AllowVariableChange: true}})
		is.NoErr(err) // unless allowed
		is.Equal(s.active(p.ID, prompts.Production), s.versionID(p.ID, 7))
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}{{b}}", Metadata: `{"input":{"schema":{"a":"boolean"}}}`,
			Environments: []prompts.Environment{prompts.Production}, AllowVariableChange: true})
		is.NoErr(err) // created active, allowed
		is.Equal(s.active(p.ID, prompts.Production), v.ID)
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(3)})
		is.NoErr(err) // nothing active in staging: nothing to guard
		err = activate(6, false)
		is.Equal(detailOf(err, "variables.a"), "is no longer typed by an input schema (it was boolean)")
		is.Equal(detailOf(err, "variables.b"), "is added")
	}},
	{"the promotion guard compares each variable's whole schema, not only its type", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		create := func(schema string, envs ...prompts.Environment) {
			t.Helper()
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{tags}}{{o}}{{e}}", TemplateFormat: prompts.FormatDotprompt,
				Metadata: prompts.Metadata(`{"input":{"schema":` + schema + `}}`), Environments: envs})
			is.NoErr(err)
		}
		create(`{"tags(array)":"string","o(object)":{"a":"string"},"e(enum)":["x","y"]}`, prompts.Production)   // 1, active
		create(`{"tags(array)":"integer","o(object)":{"a":"string"},"e(enum)":["x","y"]}`)                      // 2: tags' items
		create(`{"tags(array)":"string","o(object)":{"a":"integer"},"e(enum)":["x","y"]}`)                      // 3: o.a's type
		create(`{"tags(array)":"string","o(object)":{"a?":"string"},"e(enum)":["x","y"]}`)                      // 4: o.a optional
		create(`{"tags(array)":"string","o(object)":{"a":"string"},"e(enum)":["x","z"]}`)                       // 5: the enum's values
		create(`{"tags(array, labels)":"string","o(object)":{"a":"string, an a"},"e(enum, a mood)":["x","y"]}`) // 6: descriptions only
		before := s.snapshot()
		for n, field := range map[int]string{2: "variables.tags", 3: "variables.o", 4: "variables.o", 5: "variables.e"} {
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n)})
			is.True(errors.Is(err, prompts.ErrVariablesChanged))                          // refused
			is.True(strings.HasPrefix(detailOf(err, field), "changes its schema from {")) // naming the variable and the change
		}
		is.Equal(s.snapshot(), before) // nothing changed
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(6)})
		is.NoErr(err) // descriptions change nothing a variable accepts
	}},
}
