package prompts

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// A Renderer parses a version's template once, on its first render, and
// its cache of parsed templates is bounded and safe for concurrent use.
func TestRendererParsesOnce(t *testing.T) {
	is := is.New(t)
	r := NewRenderer(nil)
	v := PromptVersion{ID: "v1", TemplateFormat: FormatDotprompt, Content: "{{#if x}}{{y}}{{> p}}{{/if}}"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := r.parse(v)
			is.NoErr(err)
		})
	}
	wg.Wait()
	a, err := r.parse(v)
	is.NoErr(err)
	b, err := r.parse(v)
	is.NoErr(err)
	is.True(a == b) // parsed once, then the same template
	is.Equal(a.partials, []string{"p"})
	for i := range maxTemplates + 10 {
		_, err := r.parse(PromptVersion{ID: strconv.Itoa(i), Content: "x"})
		is.NoErr(err)
	}
	is.True(len(r.cache) <= maxTemplates) // bounded
	_, err = r.parse(PromptVersion{ID: "bad", TemplateFormat: FormatDotprompt, Content: "{{/if}}"})
	is.True(err != nil)
	_, cached := r.cache["bad"]
	is.True(!cached)
}

// A template rendered on its own, without a Renderer, has no partials to
// include: its partial is unavailable, named, never an internal error.
func TestTemplateAloneRefusesPartials(t *testing.T) {
	is := is.New(t)
	tp, err := ParseTemplate(PromptVersion{TemplateFormat: FormatDotprompt, Content: "a {{> header}}"})
	is.NoErr(err)
	_, err = tp.Render(t.Context(), RenderInput{})
	is.Equal(ErrorCode(err), CodePartialUnavailable)
	is.True(strings.Contains(err.Error(), `"header"`))
}

// A partial names a prompt key; anything else is invalid content.
func TestTemplatePartials(t *testing.T) {
	is := is.New(t)
	ps, err := TemplatePartials(FormatDotprompt, `{{> b}}{{#if x}}{{> a/c.d k=1}}{{/if}}{{> b}}`)
	is.NoErr(err)
	is.Equal(ps, []string{"a/c.d", "b"})
	ps, err = TemplatePartials(FormatPlain, `{{> b}}`)
	is.NoErr(err)
	is.Equal(ps, []string{}) // plain: text
	ps, err = TemplatePartials(FormatDotprompt, `none`)
	is.NoErr(err)
	is.Equal(ps, []string{}) // never nil
	_, err = TemplatePartials(FormatDotprompt, `{{> _x}}`)
	is.Equal(ErrorCode(err), CodeInvalid)
	_, err = TemplatePartials(FormatDotprompt, `{{> (dyn)}}`)
	is.Equal(ErrorCode(err), CodeInvalid)
}
