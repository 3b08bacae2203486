package prompts_test

import (
	"context"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// benchChat is the chat prompt of httpapi's BenchmarkRenderPartial: a
// system and a user message and one partial.
const benchChat = `{{role "system"}}
You are the support assistant of {{company}}. {{> support/tone}}
Ask one question that helps you understand the problem; never ask for
passwords, card numbers or other secrets. If the customer mentions an
order, ask for the order number and repeat it back before looking it up.
Keep every answer under 80 words. When you cannot help, say so and offer
a human agent: {{handoff_url}}. Sign off with the name {{agent_name}}.
{{role "user"}}
Hello, I am {{customer_name}}.`

// BenchmarkRendererRender renders benchChat (front matter with a model,
// config and an input schema of four strings) with its partial over
// memstore: the Renderer's part of a render over HTTP (BENCHMARKS.md,
// "Render over HTTP").
func BenchmarkRendererRender(b *testing.B) {
	ctx := context.Background()
	store := memstore.New()
	proj, err := store.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	tone, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/tone", Name: "Tone"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: tone.ID, TemplateFormat: prompts.FormatDotprompt,
		Content:      "Greet the customer by name, warmly and briefly, in the language of their last message.",
		Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	chat, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/chat", Name: "Chat"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: chat.ID, TemplateFormat: prompts.FormatDotprompt,
		Content: benchChat,
		Metadata: `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2,"maxOutputTokens":512},` +
			`"input":{"schema":{"company":"string","handoff_url":"string","agent_name":"string","customer_name":"string"}}}`,
		Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	r := prompts.NewRenderer(store)
	in := prompts.RenderRequest{PromptID: chat.ID, Environment: prompts.Some(prompts.Production),
		Variables: map[string]any{"company": "Acme", "handoff_url": "https://acme.example/help", "agent_name": "Sam", "customer_name": "Ada"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Render(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
