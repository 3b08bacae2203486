package prompts_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// A shared header is a prompt of its own, included with {{> KEY}}; each
// environment renders the header active there.
func ExampleRenderer() {
	ctx := context.Background()
	store := memstore.New()
	proj, _ := store.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	header, _ := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "shared/header", Name: "Header"})
	store.CreateVersion(ctx, prompts.NewVersion{PromptID: header.ID, Content: "You work for Acme.",
		Environments: []prompts.Environment{prompts.Production}})
	store.CreateVersion(ctx, prompts.NewVersion{PromptID: header.ID, Content: "You work for Acme, politely.",
		Environments: []prompts.Environment{prompts.Staging}})

	greeting, _ := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Greeting"})
	v, err := store.CreateVersion(ctx, prompts.NewVersion{PromptID: greeting.ID, TemplateFormat: prompts.FormatDotprompt,
		Content:      `{{role "system"}}{{> shared/header}}{{role "user"}}Hello, {{name}}.`,
		Environments: []prompts.Environment{prompts.Production, prompts.Staging}})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Partials)

	r := prompts.NewRenderer(store)
	for _, env := range prompts.Environments {
		_, out, err := r.Render(ctx, prompts.RenderRequest{PromptID: greeting.ID, Environment: prompts.Some(env),
			Variables: map[string]any{"name": "Ada"}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s | %s\n", env, out.Messages[0].Content[0].Text, out.Messages[1].Content[0].Text)
	}

	// The header cannot go while the greeting includes it.
	_, err = store.Deactivate(ctx, prompts.Deactivation{PromptID: header.ID, Environment: prompts.Staging})
	fmt.Println(errors.Is(err, prompts.ErrPartialInUse))
	// Output:
	// [shared/header]
	// production: You work for Acme. | Hello, Ada.
	// staging: You work for Acme, politely. | Hello, Ada.
	// true
}
