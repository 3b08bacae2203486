package promptfile_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/promptfile"
)

// seedFS makes a project of prompts: dotprompt and plain, in directories,
// active in production or not.
func seedFS(t *testing.T) (prompts.Store, prompts.Project) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	s := memstore.New()
	p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Shop"})
	is.NoErr(err)
	add := func(key, name string, format prompts.TemplateFormat, meta prompts.Metadata, content string, envs ...prompts.Environment) {
		t.Helper()
		pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: key, Name: name})
		is.NoErr(err)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: content, Metadata: meta, TemplateFormat: format, Environments: envs})
		is.NoErr(err)
	}
	prod := prompts.Production
	add("support/greeting", "support/greeting", prompts.FormatDotprompt, `{"model":"googleai/gemini-2.5-flash","input":{"schema":{"name":"string"}}}`, "{{role \"system\"}}Be kind.\n{{role \"user\"}}Hi, I am {{name}}.\n", prod)
	add("support/faq/refunds", "Refunds", prompts.FormatPlain, `{"model":"gpt-5"}`, "Refunds take {{days}} days.", prod)
	add("welcome", "Welcome", prompts.FormatDotprompt, "", "Welcome {{name}}!", prod)
	add("draft", "Draft", prompts.FormatDotprompt, "", "Not active", prompts.Staging)
	add("a.prompt/b", "clash", prompts.FormatDotprompt, "", "x", prod) // after "a" in no order: one of them is left out
	return s, p
}

// An FS passes testing/fstest, holds a file per prompt active in the
// environment, each as Format writes it, and reads back through ReadDir.
func TestFS(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p := seedFS(t)
	fsys, err := promptfile.NewFS(ctx, s, p.ID, prompts.Production)
	is.NoErr(err)
	is.NoErr(fstest.TestFS(fsys, "support/greeting.prompt", "support/faq/refunds.prompt", "welcome.prompt", "a.prompt/b.prompt"))

	_, err = fs.Stat(fsys, "draft.prompt")
	is.True(errors.Is(err, fs.ErrNotExist)) // not active in production
	b, err := fs.ReadFile(fsys, "support/greeting.prompt")
	is.NoErr(err)
	is.Equal(string(b), "---\nmodel: googleai/gemini-2.5-flash\ninput:\n  schema:\n    name: string\n---\n{{role \"system\"}}Be kind.\n{{role \"user\"}}Hi, I am {{name}}.\n")
	b, err = fs.ReadFile(fsys, "support/faq/refunds.prompt")
	is.NoErr(err)
	is.Equal(string(b), "---\nname: Refunds\nprompts.format: plain\nmetadata:\n  model: gpt-5\n---\nRefunds take {{days}} days.")

	ps, err := promptfile.ReadDir(fsys)
	is.NoErr(err) // the files read as prompt files
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	is.Equal(keys, []string{"a.prompt/b", "support/faq/refunds", "support/greeting", "welcome"})

	staging, err := promptfile.NewFS(ctx, s, p.ID, prompts.Staging)
	is.NoErr(err)
	is.NoErr(fstest.TestFS(staging, "draft.prompt")) // another environment, other files
	_, err = staging.Open("../x")
	is.True(errors.Is(err, fs.ErrInvalid))
	_, err = staging.ReadDir("draft.prompt")
	is.True(err != nil) // not a directory
}

// A key whose file would be a directory of another key's is left out.
func TestFSClash(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p := seedFS(t)
	pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "a", Name: "a"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: "file a", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	fsys, err := promptfile.NewFS(ctx, s, p.ID, prompts.Production)
	is.NoErr(err)
	is.NoErr(fstest.TestFS(fsys, "welcome.prompt"))
	st, err := fs.Stat(fsys, "a.prompt")
	is.NoErr(err)
	is.True(st.IsDir()) // the first key listed keeps its path
}

// A prompt that an active version includes as a partial is also a
// partial file, _KEY.prompt, holding the template the server includes,
// when its key has no '/'; Partials has them all.
func TestFSPartials(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := memstore.New()
	p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Shop"})
	is.NoErr(err)
	add := func(key string, format prompts.TemplateFormat, meta prompts.Metadata, content string, envs ...prompts.Environment) {
		t.Helper()
		pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: key, Name: key})
		is.NoErr(err)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: content, Metadata: meta, TemplateFormat: format,
			Environments: envs, AllowMissingPartials: true})
		is.NoErr(err)
	}
	prod := prompts.Production
	add("header", prompts.FormatDotprompt, `{"model":"m"}`, "\n  Acme, {{name}}.{{> footer}}\n", prod) // front matter: trimmed
	add("footer", prompts.FormatPlain, "", " Bye {{name}}\n", prod)
	add("shared/sig", prompts.FormatDotprompt, "", "-- Acme", prod)
	add("draft", prompts.FormatDotprompt, "", "draft", prompts.Staging) // included, but not active in production
	add("lonely", prompts.FormatDotprompt, "", "not included", prod)
	add("answer", prompts.FormatDotprompt, "", "{{> header}} {{> shared/sig}} {{> draft}}", prod)

	fsys, err := promptfile.NewFS(ctx, s, p.ID, prod)
	is.NoErr(err)
	is.NoErr(fstest.TestFS(fsys, "_header.prompt", "_footer.prompt", "answer.prompt", "shared/sig.prompt"))
	b, err := fs.ReadFile(fsys, "_header.prompt")
	is.NoErr(err)
	is.Equal(string(b), "Acme, {{name}}.{{> footer}}") // the template alone, trimmed as the server includes it
	b, err = fs.ReadFile(fsys, "_footer.prompt")
	is.NoErr(err)
	is.Equal(string(b), " Bye {{name}}\n") // a partial of a partial; plain: as it is
	for _, name := range []string{"_lonely.prompt", "_draft.prompt", "_answer.prompt", "shared/_sig.prompt", "_shared/sig.prompt"} {
		_, err = fs.Stat(fsys, name)
		is.True(errors.Is(err, fs.ErrNotExist)) // not included, not active, or a key with a '/'
	}
	is.Equal(fsys.Partials(), map[string]string{"header": "Acme, {{name}}.{{> footer}}", "footer": " Bye {{name}}\n", "shared/sig": "-- Acme"})
}

// A file cannot express a split: of an environment that holds one, the
// file is the split's first entry's version, as a read without a subject
// answers.
func TestFSSplitServesFirstEntry(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := memstore.New()
	p, err := s.CreateProject(ctx, prompts.NewProject{Name: "Shop"})
	is.NoErr(err)
	pr, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "greeting", Name: "Greeting"})
	is.NoErr(err)
	for _, c := range []string{"One {{name}}", "Two {{name}}"} {
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: c, TemplateFormat: prompts.FormatDotprompt})
		is.NoErr(err)
	}
	_, err = s.Activate(ctx, prompts.Activation{PromptID: pr.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 2, Weight: 1}, {VersionNumber: 1, Weight: 99}}})
	is.NoErr(err)
	fsys, err := promptfile.NewFS(ctx, s, p.ID, prompts.Production)
	is.NoErr(err)
	b, err := fs.ReadFile(fsys, "greeting.prompt")
	is.NoErr(err)
	is.True(strings.HasSuffix(string(b), "\n---\nTwo {{name}}")) // the first entry's, however small its share
}
