package dotprompt_test

import (
	"context"
	"testing"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// chatTemplate is a typical chat prompt: roles, a conditional list,
// history and a loop over documents.
const chatTemplate = `{{role "system"}}You are a helpful assistant for {{company}}. Answer in {{language}}.
{{#if rules}}Rules:
{{#each rules}}- {{this}}
{{/each}}{{/if}}
{{history}}
{{role "user"}}{{question}}
{{#each docs}}Document {{@index}} ({{title}}): {{body}}
{{/each}}`

func chatData() dotprompt.Data {
	return dotprompt.Data{
		Input: map[string]any{"company": "Acme", "language": "English", "question": "How do I reset my password?",
			"rules": []any{"Be brief.", "Cite documents.", "Never guess."},
			"docs": []any{map[string]any{"title": "Reset", "body": "Go to settings and click reset."},
				map[string]any{"title": "Login", "body": "Use your email address."}}},
		History: []dotprompt.Message{{Role: "user", Content: []dotprompt.Part{{Text: "Hi"}}}},
	}
}

func BenchmarkRenderChat(b *testing.B) {
	tpl, err := dotprompt.Parse(chatTemplate)
	if err != nil {
		b.Fatal(err)
	}
	d := chatData()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(ctx, d, dotprompt.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseChat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dotprompt.Parse(chatTemplate); err != nil {
			b.Fatal(err)
		}
	}
}
