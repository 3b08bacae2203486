package ui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A chat prompt as Dotprompt writes it: a system and a user message, a
// media part, and front matter with a model, config, an input schema
// with defaults, an output schema and tools.
const (
	chatTemplate = `{{role "system"}}
You are a {{tone}} assistant.
{{role "user"}}
Summarize {{#each topics}}{{this}}{{#unless @last}}, {{/unless}}{{/each}} for {{name}}.
{{media url=image}}`
	chatMeta = `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.4,"maxOutputTokens":800},` +
		`"input":{"schema":{"name":"string, who asks","tone?":"string","topics(array)":"string","image?":"string"},` +
		`"default":{"tone":"friendly","image":"https://example.com/cat.png"}},` +
		`"output":{"format":"json","schema":{"summary":"string"}},"tools":["search"],"acme.owner":"team-a"}`
)

// newChatFixture adds the prompt support/chat with one dotprompt
// version, version 1, as chatTemplate and chatMeta say.
func newChatFixture(t *testing.T) *fixture {
	t.Helper()
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "support/chat", Name: "Chat"})
	is.NoErr(err)
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: chatTemplate, Metadata: prompts.Metadata(chatMeta), TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err)
	return &fixture{env: e, prompt: p}
}

func TestChatVersionPage(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	b := f.browser()
	b.signIn(readKey)
	p := b.get(f.url("/versions/1"))
	is.Equal(p.StatusCode, 200)
	tx := text(p)
	t.Log(tx)
	is.True(strings.Contains(tx, "Template format dotprompt"))
}
