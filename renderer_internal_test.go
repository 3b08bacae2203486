package prompts

import (
	"strconv"
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
