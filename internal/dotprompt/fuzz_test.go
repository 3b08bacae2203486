package dotprompt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// FuzzParseRender checks that no template panics the parser or the
// renderer, and that rendering stays within its bounds.
func FuzzParseRender(f *testing.F) {
	for _, s := range []string{chatTemplate, "{{#each a as |x i|}}{{x}}{{else}}e{{/each}}", `\{{a}} {{!-- c --}}`,
		"{{#if (ifEquals a 1)}}{{~> p x=1~}}{{else if b}}{{/if}}", "{{json this indent=2}}", "{{@root.a.[b c]}}", "{{../../a}}",
		`a{{role "user"}}  {{role "model"}}b`, `a{{media url="u"}} {{b}}`, "x\n  {{> p}}\n", `{{section "s"}} {{b}}{{history}}c`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := dotprompt.Parse(src)
		if err != nil {
			return
		}
		self := dotprompt.PartialMap(map[string]*dotprompt.Template{"p": tpl})
		d := dotprompt.Data{Input: map[string]any{"a": []any{1.0, "x", map[string]any{"b": true}}, "b": "s"}}
		res, err := tpl.Render(context.Background(), d, dotprompt.Options{MaxBytes: 1 << 16, MaxSteps: 1 << 16, Partials: self})
		if err == nil && len(res.Text) > 1<<16 {
			t.Fatalf("output %d bytes passes the limit", len(res.Text))
		}
		if err == nil && res.Text != partsText(res.Messages) {
			t.Fatalf("Text %q, but the text parts joined are %q", res.Text, partsText(res.Messages))
		}
	})
}

// partsText returns the text parts of msgs joined: what Result.Text is.
func partsText(msgs []dotprompt.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Content {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
