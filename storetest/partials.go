package storetest

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// dp creates a dotprompt version of the prompt, active in envs.
func (s *fixture) dp(promptID, content string, envs ...prompts.Environment) prompts.PromptVersion {
	is := is.New(s.t)
	is.Helper()
	v, err := s.CreateVersion(s.t.Context(), prompts.NewVersion{PromptID: promptID, Content: content,
		TemplateFormat: prompts.FormatDotprompt, Environments: envs, AllowMissingPartials: true})
	is.NoErr(err) // create a dotprompt version
	return v
}

// activate activates version n of the prompt in env with the change's
// options (AllowMissingPartials, …).
func (s *fixture) activate(promptID string, n int, env prompts.Environment, c prompts.Change) error {
	_, err := s.Activate(s.t.Context(), prompts.Activation{PromptID: promptID, Environment: env, VersionNumber: prompts.Some(n), Change: c})
	return err
}

// render renders the prompt with a Renderer over the store.
func (s *fixture) render(in prompts.RenderRequest) (prompts.Rendered, error) {
	if in.Variables == nil {
		in.Variables = map[string]any{}
	}
	_, out, err := prompts.NewRenderer(s.Store).Render(s.t.Context(), in)
	return out, err
}

// namesIn checks that err has code c and that its message names each of
// names.
func namesIn(t *testing.T, err error, c prompts.Code, names ...string) {
	t.Helper()
	if prompts.ErrorCode(err) != c {
		t.Fatalf("got %v, want the code %s", err, c)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("%q does not name %s", err.Error(), n)
		}
	}
}

var partialTests = []test{
	{"a version records the keys of the partials it includes, sorted, each once", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "main")
		plain := s.version(p.ID, "{{> header}} is text in a plain version")
		is.Equal(plain.Partials, []string{}) // never nil
		v := s.dp(p.ID, `{{> header}}{{#if x}}{{> support/footer.v2 n=1}}{{/if}}{{> header}}`)
		is.Equal(v.Partials, []string{"header", "support/footer.v2"})
		got, err := s.GetVersion(ctx, p.ID, 2)
		is.NoErr(err)
		is.Equal(got.Partials, v.Partials)
		list, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(list[0].Partials, v.Partials)
		is.Equal(list[1].Partials, []string{})
		v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> b}}{{> a}}"}) // the latest's format
		is.NoErr(err)
		is.Equal(v3.Partials, []string{"a", "b"})
		is.NoErr(s.activate(p.ID, 3, prompts.Staging, prompts.Change{AllowMissingPartials: true}))
		a, err := s.GetActive(ctx, p.ID, prompts.Staging)
		is.NoErr(err)
		is.Equal(a.ActiveVersion.Partials, []string{"a", "b"})
		a.ActiveVersion.Partials[0] = "changed" // a copy
		is.Equal(s.readVersion(p.ID, 3).Partials, []string{"a", "b"})
	}},
	{"a partial that is not a prompt key is invalid content, and nothing is stored", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "main")
		for _, content := range []string{`{{> _header}}`, `{{> "a b"}}`, `{{> "` + strings.Repeat("x", 129) + `"}}`} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: content, TemplateFormat: prompts.FormatDotprompt})
			s.invalid(err, "content")
		}
		is.Equal(s.countVersions(p.ID), 0)
	}},
	{"activating a version whose partials have nothing active there is refused unless allowed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.version(header.ID, "Hello", prompts.Production)
		other := s.prompt(s.project().ID, "footer") // a key of another project is not a partial of this one
		s.version(other.ID, "Bye", prompts.Production, prompts.Staging)
		main := s.prompt(proj.ID, "main")
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: main.ID, Content: "{{> header}} {{> footer}}",
			TemplateFormat: prompts.FormatDotprompt, Environments: []prompts.Environment{prompts.Production}})
		namesIn(t, err, prompts.CodePartialUnavailable, `"footer"`)
		is.True(errors.Is(err, prompts.ErrPartialUnavailable))
		is.True(!strings.Contains(err.Error(), `"header"`)) // only the missing
		is.Equal(s.countVersions(main.ID), 0)               // the version is not stored either
		v = s.dp(main.ID, "{{> header}}")
		is.Equal(v.VersionNumber, 1)
		before := s.snapshot()
		err = s.activate(main.ID, 1, prompts.Staging, prompts.Change{})
		namesIn(t, err, prompts.CodePartialUnavailable, `"header"`, "staging")
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: main.ID, Content: "{{> header}}", Environments: []prompts.Environment{prompts.Production, prompts.Staging}})
		namesIn(t, err, prompts.CodePartialUnavailable, `"header"`, "staging")
		is.Equal(s.snapshot(), before) // nothing changed
		is.Equal(len(s.deployments(main.ID, "")), 0)

		is.NoErr(s.activate(main.ID, 1, prompts.Production, prompts.Change{})) // active there
		is.NoErr(s.activate(main.ID, 1, prompts.Staging, prompts.Change{AllowMissingPartials: true}))
		is.Equal(s.active(main.ID, prompts.Staging), v.ID)
		v2, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: main.ID, Content: "{{> header}}!", Environments: []prompts.Environment{prompts.Staging}, AllowMissingPartials: true})
		is.NoErr(err)
		is.Equal(s.active(main.ID, prompts.Staging), v2.ID)
	}},
	{"a rollback to a version whose partials have nothing active there is refused unless allowed", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.version(header.ID, "Hello", prompts.Staging)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "{{> header}}", prompts.Staging)
		v2 := s.dp(main.ID, "no partial", prompts.Staging)
		is.NoErr(s.deactivate(t.Context(), header.ID, prompts.Staging)) // nothing active includes it now
		before := s.snapshot()
		_, err := s.Rollback(t.Context(), prompts.Rollback{PromptID: main.ID, Environment: prompts.Staging})
		namesIn(t, err, prompts.CodePartialUnavailable, `"header"`)
		is.Equal(s.snapshot(), before)
		is.Equal(s.active(main.ID, prompts.Staging), v2.ID)
		_, err = s.Rollback(t.Context(), prompts.Rollback{PromptID: main.ID, Environment: prompts.Staging, Change: prompts.Change{AllowMissingPartials: true}})
		is.NoErr(err)
		is.Equal(s.active(main.ID, prompts.Staging), s.versionID(main.ID, 1))
	}},
	{"deactivating a prompt that a version active there includes is refused unless forced", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.version(header.ID, "Hello", prompts.Production, prompts.Staging)
		a := s.prompt(proj.ID, "a")
		s.dp(a.ID, "{{> header}} a", prompts.Production)
		b := s.prompt(proj.ID, "b")
		s.dp(b.ID, "{{> header}} b", prompts.Production)
		s.dp(b.ID, "b without it", prompts.Staging) // includes nothing in staging
		c := s.prompt(proj.ID, "c")
		s.dp(c.ID, "{{> header}} c") // active nowhere
		elsewhere := s.prompt(s.project().ID, "d")
		s.dp(elsewhere.ID, "{{> header}} d", prompts.Production) // another project's header

		before := s.snapshot()
		_, err := s.Deactivate(ctx, prompts.Deactivation{PromptID: header.ID, Environment: prompts.Production})
		namesIn(t, err, prompts.CodePartialInUse, `"a", "b"`, `"header"`, "production")
		is.True(errors.Is(err, prompts.ErrPartialInUse))
		is.True(!strings.Contains(err.Error(), `"c"`) && !strings.Contains(err.Error(), `"d"`))
		is.Equal(s.snapshot(), before) // nothing changed, no record
		is.Equal(len(s.deployments(header.ID, prompts.Production)), 1)

		is.NoErr(s.deactivate(ctx, header.ID, prompts.Staging)) // nothing active in staging includes it
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: header.ID, Environment: prompts.Production, Force: true})
		is.NoErr(err)
		is.Equal(s.active(header.ID, prompts.Production), "")
		is.Equal(len(s.deployments(header.ID, prompts.Production)), 2) // the forced change is recorded
		is.NoErr(s.deactivate(ctx, header.ID, prompts.Production))     // nothing active: nothing to guard
	}},
	{"a version that includes its own prompt is guarded as any other", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "self")
		s.dp(p.ID, "{{> self}}")
		err := s.activate(p.ID, 1, prompts.Production, prompts.Change{})
		namesIn(t, err, prompts.CodePartialUnavailable, `"self"`) // nothing of it is active yet
		is.NoErr(s.activate(p.ID, 1, prompts.Production, prompts.Change{AllowMissingPartials: true}))
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // its own inclusion goes with it
	}},
	{"a render includes each partial's version active in the environment rendered", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		header := s.prompt(proj.ID, "support/header")
		s.dp(header.ID, "Hello {{name}}", prompts.Production)
		s.dp(header.ID, "{{#if vip}}Dear {{/if}}{{name}}", prompts.Staging)
		plain := s.prompt(proj.ID, "sig")
		_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: plain.ID, Content: "-- {{ who }} {{#if}} {{role}}",
			Environments: []prompts.Environment{prompts.Production, prompts.Staging}})
		is.NoErr(err)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "{{> support/header}}! {{x}}\n{{> sig who=x}}", prompts.Production, prompts.Staging)
		vars := map[string]any{"name": "Ada", "x": "1", "role": "admin"}
		out, err := s.render(prompts.RenderRequest{PromptID: main.ID, Variables: vars})
		is.NoErr(err)                                          // name and role are read by partials only: not unused
		is.Equal(out.Text, "Hello Ada! 1\n-- 1 {{#if}} admin") // a plain partial as a plain version renders
		_, err = s.render(prompts.RenderRequest{PromptID: main.ID, Variables: map[string]any{"vip": true, "x": "1"}})
		s.invalid(err, "variables.vip") // only staging's header reads it
		vars["vip"] = true
		out, err = s.render(prompts.RenderRequest{PromptID: main.ID, Environment: prompts.Some(prompts.Staging), Variables: vars})
		is.NoErr(err)
		is.Equal(out.Text, "Dear Ada! 1\n-- 1 {{#if}} admin")
		delete(vars, "vip")
		out, err = s.render(prompts.RenderRequest{PromptID: main.ID, VersionNumber: prompts.Some(1), Variables: vars})
		is.NoErr(err)
		is.Equal(out.Text, "Hello Ada! 1\n-- 1 {{#if}} admin") // by number: production's partials
		_, err = s.render(prompts.RenderRequest{PromptID: main.ID, Variables: map[string]any{"nobody": "reads it"}})
		s.invalid(err, "variables.nobody")
	}},
	{"a render whose partial is missing or inactive is refused naming it", func(t *testing.T, s *fixture) {
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.dp(header.ID, "{{> footer}}", prompts.Staging)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "{{> header}}", prompts.Production, prompts.Staging)
		_, err := s.render(prompts.RenderRequest{PromptID: main.ID})
		namesIn(t, err, prompts.CodePartialUnavailable, `"header"`, "production")
		_, err = s.render(prompts.RenderRequest{PromptID: main.ID, Environment: prompts.Some(prompts.Staging)})
		namesIn(t, err, prompts.CodePartialUnavailable, `"footer"`) // no such prompt
		footer := s.prompt(proj.ID, "footer")
		s.dp(footer.ID, "{{#if never}}{{> gone}}{{/if}}", prompts.Staging)
		_, err = s.render(prompts.RenderRequest{PromptID: main.ID, Environment: prompts.Some(prompts.Staging)})
		namesIn(t, err, prompts.CodePartialUnavailable, `"gone"`) // resolved before rendering, every branch
	}},
	{"a render refuses a cycle of partials naming the chain", func(t *testing.T, s *fixture) {
		proj := s.project()
		a, b, c := s.prompt(proj.ID, "a"), s.prompt(proj.ID, "b"), s.prompt(proj.ID, "c")
		s.dp(a.ID, "{{> b}}", prompts.Production)
		s.dp(b.ID, "{{> a}}", prompts.Production)
		_, err := s.render(prompts.RenderRequest{PromptID: a.ID})
		namesIn(t, err, prompts.CodePartialUnavailable, "a → b → a")
		s.dp(c.ID, "{{> c}}", prompts.Production)
		_, err = s.render(prompts.RenderRequest{PromptID: c.ID})
		namesIn(t, err, prompts.CodePartialUnavailable, "c → c")
		s.dp(c.ID, "x", prompts.Staging)
		_, err = s.render(prompts.RenderRequest{PromptID: c.ID, VersionNumber: prompts.Some(1)})
		namesIn(t, err, prompts.CodePartialUnavailable, "c → c") // by number too
	}},
	{"partials nest at most 16 deep", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		ids := make([]string, 18) // k0 includes k1 … k16 includes k17
		for i := range ids {
			ids[i] = s.prompt(proj.ID, "k"+strconv.Itoa(i)).ID
		}
		for i := len(ids) - 1; i >= 0; i-- {
			content := "end"
			if i < len(ids)-1 {
				content = "{{> k" + strconv.Itoa(i+1) + "}}"
			}
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: ids[i], Content: content,
				TemplateFormat: prompts.FormatDotprompt, Environments: []prompts.Environment{prompts.Production}})
			is.NoErr(err) // its partial is active: the guard lets it
		}
		out, err := s.render(prompts.RenderRequest{PromptID: ids[1]}) // 16 partials below k1
		is.NoErr(err)
		is.Equal(out.Text, "end")
		_, err = s.render(prompts.RenderRequest{PromptID: ids[0]}) // 17 below k0
		namesIn(t, err, prompts.CodePartialUnavailable, "16", "k0 → k1 → k2", "k16 → k17")
	}},
	{"the render size bound holds across partials and their loops", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		header := s.prompt(proj.ID, "header")
		s.dp(header.ID, "{{#each items}}{{../big}}{{/each}}", prompts.Production)
		main := s.prompt(proj.ID, "main")
		s.dp(main.ID, "{{> header}}{{> header}}", prompts.Production)
		big := strings.Repeat("x", prompts.MaxRenderSize/8)
		_, err := s.render(prompts.RenderRequest{PromptID: main.ID, Variables: map[string]any{"big": big, "items": []any{1, 2, 3, 4, 5}}})
		s.invalid(err, "variables") // 10 × 512 KiB
		out, err := s.render(prompts.RenderRequest{PromptID: main.ID, Variables: map[string]any{"big": big, "items": []any{1, 2, 3}}})
		is.NoErr(err)
		is.Equal(len(out.Text), 6*len(big))
	}},
	{"a deactivation racing an activation that needs it never leaves a missing partial", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		for round := range 40 {
			r := strconv.Itoa(round)
			header := s.prompt(proj.ID, "header"+r)
			s.version(header.ID, "Hello", prompts.Staging)
			main := s.prompt(proj.ID, "main"+r)
			s.dp(main.ID, "{{> header"+r+"}}")
			var wg sync.WaitGroup
			var activateErr, deactivateErr error
			wg.Go(func() { activateErr = s.activate(main.ID, 1, prompts.Staging, prompts.Change{}) })
			wg.Go(func() { deactivateErr = s.deactivate(ctx, header.ID, prompts.Staging) })
			wg.Wait()
			mainActive, headerActive := s.active(main.ID, prompts.Staging) != "", s.active(header.ID, prompts.Staging) != ""
			is.True(!mainActive || headerActive) // never an active version with a missing partial
			switch {
			case activateErr == nil:
				namesIn(t, deactivateErr, prompts.CodePartialInUse, `"main`+r+`"`)
			case deactivateErr == nil:
				namesIn(t, activateErr, prompts.CodePartialUnavailable, `"header`+r+`"`)
			default:
				t.Fatalf("both failed: %v; %v", activateErr, deactivateErr)
			}
		}
	}},
	{"activations of prompts that include each other do not deadlock", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		for round := range 40 {
			r := strconv.Itoa(round)
			a, b := s.prompt(proj.ID, "a"+r), s.prompt(proj.ID, "b"+r)
			s.dp(a.ID, "a", prompts.Staging)
			s.dp(b.ID, "b", prompts.Staging)
			s.dp(a.ID, "{{> b"+r+"}}")
			s.dp(b.ID, "{{> a"+r+"}}")
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, id := range []string{a.ID, b.ID} {
				wg.Go(func() { errs[i] = s.activate(id, 2, prompts.Staging, prompts.Change{}) })
			}
			wg.Wait()
			is.NoErr(errs[0]) // each partial is active: both succeed, in some order
			is.NoErr(errs[1])
		}
	}},
}
