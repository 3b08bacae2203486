package prompts_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// A Renderer reads which version of each partial is active at every
// render, nested partials too, in every environment: a render after a
// change includes what the change made active, though the render before
// it resolved the same template.
func TestRendererSeesPartialChanges(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	prompt := func(key string) string {
		p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: key, Name: key})
		is.NoErr(err) // created
		return p.ID
	}
	version := func(id, content string, envs ...prompts.Environment) {
		_, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: id, TemplateFormat: prompts.FormatDotprompt, Content: content,
			Environments: envs, AllowMissingPartials: true, AllowVariableChange: true})
		is.NoErr(err) // made active
	}
	header, footer, other, main := prompt("header"), prompt("footer"), prompt("other"), prompt("main")
	version(footer, "(footer 1)", prompts.Production, prompts.Staging)
	version(header, "header 1 {{> footer}}", prompts.Production, prompts.Staging)
	version(other, "other {{who}}", prompts.Production)
	version(main, "{{> header}}|{{q}}", prompts.Production, prompts.Staging)

	r := prompts.NewRenderer(store)
	render := func(env prompts.Environment, values map[string]any) (string, error) {
		_, out, err := r.Render(ctx, prompts.RenderRequest{PromptID: main, Environment: prompts.Some(env), Variables: values})
		return out.Text, err
	}
	q, who := map[string]any{"q": "?"}, map[string]any{"q": "?", "who": "Ada"}
	text, err := render(prompts.Production, q)
	is.NoErr(err)
	is.Equal(text, "header 1 (footer 1)|?")
	_, err = render(prompts.Production, who)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInvalid) // who is not used, by the version or its partials

	version(header, "header 2 {{> other}}", prompts.Production) // production's header changes, and includes another partial
	text, err = render(prompts.Production, who)
	is.NoErr(err)                          // who is the new partial's partial's variable now
	is.Equal(text, "header 2 other Ada|?") // the header active now, and its partial
	text, err = render(prompts.Staging, q)
	is.NoErr(err)
	is.Equal(text, "header 1 (footer 1)|?")        // staging kept its header
	version(footer, "(footer 2)", prompts.Staging) // a nested partial changes
	text, err = render(prompts.Staging, q)
	is.NoErr(err)
	is.Equal(text, "header 1 (footer 2)|?") // its version active now
	text, err = render(prompts.Production, who)
	is.NoErr(err)
	is.Equal(text, "header 2 other Ada|?") // production's set, kept beside staging's

	_, err = store.Deactivate(ctx, prompts.Deactivation{PromptID: other, Environment: prompts.Production, Force: true})
	is.NoErr(err)
	_, err = render(prompts.Production, who)
	is.Equal(prompts.ErrorCode(err), prompts.CodePartialUnavailable) // the partial has no version active now
	is.True(strings.Contains(err.Error(), `"other"`))                // named

	version(footer, "{{> main}}", prompts.Staging) // the chain comes back to the prompt rendered
	_, err = render(prompts.Staging, q)
	is.Equal(prompts.ErrorCode(err), prompts.CodePartialUnavailable)
	is.True(strings.Contains(err.Error(), "main → header → footer → main")) // the cycle, named
}

// Renders of one template in several environments at once each include
// their environment's partials (go test -race checks the sets they
// share).
func TestRendererConcurrentEnvironments(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	header, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "header", Name: "header"})
	is.NoErr(err)
	main, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "main", Name: "main"})
	is.NoErr(err)
	for _, env := range prompts.Environments {
		_, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: header.ID, Content: string(env), Environments: []prompts.Environment{env}})
		is.NoErr(err)
	}
	_, err = store.CreateVersion(ctx, prompts.NewVersion{PromptID: main.ID, TemplateFormat: prompts.FormatDotprompt, Content: "{{> header}}",
		Environments: prompts.Environments})
	is.NoErr(err)
	r := prompts.NewRenderer(store)
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(prompts.Environments))
	for range 8 {
		for _, env := range prompts.Environments {
			wg.Go(func() {
				for range 50 {
					_, out, err := r.Render(ctx, prompts.RenderRequest{PromptID: main.ID, Environment: prompts.Some(env), Variables: map[string]any{}})
					if err == nil && out.Text != string(env) {
						err = errors.New(string(env) + " rendered " + out.Text)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // each environment's header
	}
}

// The version a render returns is the caller's: changing it changes
// neither the store's nor the next render's.
func TestRendererReturnsACopy(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store, r, in := copyFixture(t)
	v, _, err := r.Render(ctx, in)
	is.NoErr(err)
	v.Variables[0], *v.ChangeSummary = "changed", "changed"
	v.Partials = append(v.Partials, "changed")
	again, _, err := r.Render(ctx, in)
	is.NoErr(err)
	is.Equal(again.Variables, []string{"a", "b"}) // the store's, untouched
	is.Equal(*again.ChangeSummary, "first")
	is.Equal(again.Partials, []string{})
	a, err := store.GetActive(ctx, in.PromptID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Variables, []string{"a", "b"})
}

// copyFixture is a store with one dotprompt version active in
// production, "{{a}}{{b}}" with a change summary, a Renderer over it, and
// a request that renders it.
func copyFixture(t *testing.T) (*memstore.Store, *prompts.Renderer, prompts.RenderRequest) {
	is := is.New(t)
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "k"})
	is.NoErr(err)
	summary := "first"
	_, err = store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt, Content: "{{a}}{{b}}",
		ChangeSummary: &summary, Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	return store, prompts.NewRenderer(store), prompts.RenderRequest{PromptID: p.ID, Variables: map[string]any{"a": "1", "b": "2"}}
}

// With Shared, a render returns the version the store shares rather than
// a copy: the same version and output, one allocation fewer.
func TestRendererShared(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	store, r, in := copyFixture(t)
	shared := in
	shared.Shared = true
	v, out, err := r.Render(ctx, in)
	is.NoErr(err)
	sv, sout, err := r.Render(ctx, shared)
	is.NoErr(err)
	is.Equal(sv, v)     // the same version
	is.Equal(sout, out) // and output
	a, _, err := store.ReadActive(ctx, prompts.ActiveQuery{PromptID: in.PromptID, Environment: prompts.Production, Shared: true})
	is.NoErr(err)
	is.True(&sv.Variables[0] == &a.ActiveVersion.Variables[0]) // the store's own
	is.True(&v.Variables[0] != &a.ActiveVersion.Variables[0])  // a copy without Shared
	copied := testing.AllocsPerRun(100, func() { _, _, _ = r.Render(ctx, in) })
	saved := testing.AllocsPerRun(100, func() { _, _, _ = r.Render(ctx, shared) })
	is.Equal(saved, copied-1) // the copy, and only it, saved
}
