package httpapi

import (
	"strconv"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A version's template is parsed once, on its first render, and the
// cache of parsed templates is bounded and safe for concurrent use.
func TestTemplateCacheParsesOnce(t *testing.T) {
	is := is.New(t)
	var c templateCache
	v := prompts.PromptVersion{ID: "v1", TemplateFormat: prompts.FormatDotprompt, Content: "{{#if x}}{{y}}{{/if}}"}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.get(v)
			is.NoErr(err)
		}()
	}
	wg.Wait()
	a, err := c.get(v)
	is.NoErr(err)
	b, err := c.get(v)
	is.NoErr(err)
	is.True(a == b) // parsed once, then the same template
	for i := range maxTemplates + 10 {
		_, err := c.get(prompts.PromptVersion{ID: strconv.Itoa(i), Content: "x"})
		is.NoErr(err)
	}
	is.True(len(c.m) <= maxTemplates) // bounded
	_, err = c.get(prompts.PromptVersion{ID: "bad", TemplateFormat: prompts.FormatDotprompt, Content: "{{/if}}"})
	is.True(err != nil)
	_, cached := c.m["bad"]
	is.True(!cached)
}
