package prompts_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/memstore"
)

// The whole flow on the in-memory Store: a project, a prompt, two versions;
// promote version 1 to production, read it the way an application does,
// promote version 2, then roll back to 1.
func Example() {
	ctx := context.Background()
	store := memstore.New()

	project, err := store.CreateProject(ctx, prompts.NewProject{Name: "Support Bot"})
	if err != nil {
		log.Fatal(err)
	}
	prompt, err := store.CreatePrompt(ctx, prompts.NewPrompt{
		ProjectID: project.ID,
		Key:       "support/greeting",
		Name:      "Greeting",
	})
	if err != nil {
		log.Fatal(err)
	}
	v1, err := store.CreateVersion(ctx, prompts.NewVersion{
		PromptID: prompt.ID,
		Content:  "Hello! How can I help?",
		Metadata: `{"model":"gpt-5","temperature":0.2}`,
	})
	if err != nil {
		log.Fatal(err)
	}
	summary := "greet by name"
	v2, err := store.CreateVersion(ctx, prompts.NewVersion{
		PromptID:      prompt.ID,
		Content:       "Hi {{name}}, what can I do for you today?",
		ChangeSummary: &summary,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("project:", project.Slug)
	fmt.Println("versions:", v1.VersionNumber, v2.VersionNumber)

	// What an application runs: read by project and key, in its environment.
	read := func() {
		a, err := store.GetActiveByKey(ctx, project.ID, "support/greeting", prompts.Production)
		if err != nil {
			log.Fatal(err)
		}
		if a.ActiveVersion == nil {
			fmt.Println("production: nothing active")
			return
		}
		fmt.Printf("production: v%d %q\n", a.ActiveVersion.VersionNumber, a.ActiveVersion.Content)
	}
	read()

	// Promote version 1, by number.
	if _, err := store.Activate(ctx, prompts.Activation{PromptID: prompt.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)}); err != nil {
		log.Fatal(err)
	}
	read()

	// Promote version 2, by id. It uses a variable version 1 does not: the
	// promotion guard refuses it until the change is allowed.
	_, err = store.Activate(ctx, prompts.Activation{PromptID: prompt.ID, Environment: prompts.Production, VersionID: prompts.Some(v2.ID)})
	fmt.Println("refused:", errors.Is(err, prompts.ErrVariablesChanged))
	if _, err := store.Activate(ctx, prompts.Activation{PromptID: prompt.ID, Environment: prompts.Production, VersionID: prompts.Some(v2.ID),
		Change: prompts.Change{AllowVariableChange: true}}); err != nil {
		log.Fatal(err)
	}
	read()

	// What the application sends to the model.
	a, err := store.GetActive(ctx, prompt.ID, prompts.Production)
	if err != nil {
		log.Fatal(err)
	}
	text, err := a.ActiveVersion.Render(map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rendered:", text)

	// Roll back the latest change, saying who and why.
	if _, err := store.Rollback(ctx, prompts.Rollback{PromptID: prompt.ID, Environment: prompts.Production,
		Change: prompts.Change{Actor: "alice", Reason: "v2 answers too briefly", AllowVariableChange: true}}); err != nil {
		log.Fatal(err)
	}
	read()

	// Who changed production, newest first.
	history, _, err := store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: prompt.ID, Environment: prompts.Production})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range history {
		actor := "someone"
		if d.Actor != nil {
			actor = *d.Actor
		}
		fmt.Printf("%s: %s to v%d by %s\n", d.Environment, d.Action, *d.VersionNumber, actor)
	}

	// Compare-and-swap: a change that expects a revision the prompt has
	// moved past changes nothing.
	a, err = store.GetActive(ctx, prompt.ID, prompts.Production)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Deactivate(ctx, prompts.Deactivation{PromptID: prompt.ID, Environment: prompts.Production,
		Change: prompts.Change{IfRevision: a.Revision - 1}}); errors.Is(err, prompts.ErrPreconditionFailed) {
		fmt.Println("deactivate: refused, production changed since")
	}
	read()

	// Output:
	// project: support-bot
	// versions: 1 2
	// production: nothing active
	// production: v1 "Hello! How can I help?"
	// refused: true
	// production: v2 "Hi {{name}}, what can I do for you today?"
	// rendered: Hi Ada, what can I do for you today?
	// production: v1 "Hello! How can I help?"
	// production: rollback to v1 by alice
	// production: activate to v2 by someone
	// production: activate to v1 by someone
	// deactivate: refused, production changed since
	// production: v1 "Hello! How can I help?"
}

// An update tells a field left out (unchanged) from a field set to null
// (cleared, where null is allowed) from a field given a value. Decoding a
// PATCH body into a PromptUpdate keeps the three apart.
func ExamplePromptUpdate() {
	ctx := context.Background()
	store := memstore.New()
	project, _ := store.CreateProject(ctx, prompts.NewProject{Name: "Docs"})
	description := "one paragraph"
	p, _ := store.CreatePrompt(ctx, prompts.NewPrompt{
		ProjectID:   project.ID,
		Key:         "summarise",
		Name:        "Summarise",
		Description: &description,
	})

	// "key" is absent: unchanged. "name" has a value. "description" is null: cleared.
	var body api.PromptUpdate
	if err := api.Unmarshal([]byte(`{"name":"Summarise briefly","description":null}`), &body); err != nil {
		log.Fatal(err)
	}
	up := body.Domain()
	fmt.Println("key set:", up.Key.Set, "| name:", up.Name.Value, "| description null:", up.Description.Null)

	p, err := store.UpdatePrompt(ctx, p.ID, up)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Key, "|", p.Name, "|", p.Description == nil)

	// The zero update changes nothing; a name cannot be null.
	_, err = store.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{})
	fmt.Println("zero update:", err)
	_, err = store.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Null[string]()})
	fmt.Println("null name invalid:", errors.Is(err, prompts.ErrInvalid))

	// Output:
	// key set: false | name: Summarise briefly | description null: true
	// summarise | Summarise briefly | true
	// zero update: <nil>
	// null name invalid: true
}

// Optional is one field of an update in one of its three states.
func ExampleOptional() {
	for _, o := range []prompts.Optional[string]{
		{},                      // absent: leave the field unchanged
		prompts.Null[string](),  // null: clear it
		prompts.Some("a value"), // a value: set it
	} {
		fmt.Printf("set=%t null=%t value=%q\n", o.Set, o.Null, o.Value)
	}
	// Output:
	// set=false null=false value=""
	// set=true null=true value=""
	// set=true null=false value="a value"
}

// Callers branch on an error's code with errors.Is, and read the invalid
// fields with errors.As; never on the message text.
func ExampleError() {
	ctx := context.Background()
	store := memstore.New()
	project, _ := store.CreateProject(ctx, prompts.NewProject{Name: "Shop"})
	_, _ = store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: project.ID, Key: "checkout", Name: "Checkout"})

	_, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: project.ID, Key: "checkout", Name: "Again"})
	fmt.Println("conflict:", errors.Is(err, prompts.ErrConflict))

	_, err = store.GetPrompt(ctx, "no-such-id")
	fmt.Println("not found:", errors.Is(err, prompts.ErrNotFound))

	_, err = store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: project.ID, Key: "-bad key", Name: "  "})
	var e *prompts.Error
	if errors.As(err, &e) && e.Code == prompts.CodeInvalid {
		for _, f := range e.Fields {
			fmt.Println("invalid:", f.Field)
		}
	}
	// Output:
	// conflict: true
	// not found: true
	// invalid: key
	// invalid: name
}

// Variables lists a template's variables: each once, sorted. Anything in
// double braces that is not a name is text.
func ExampleVariables() {
	fmt.Println(prompts.Variables("Hi {{ name }}, your order {{order_id}} ships to {{name}}. {{not a variable}}"))
	// Output: [name order_id]
}

// Render is strict: every variable needs a value, and every value a
// variable, so that a prompt and its application cannot drift apart
// silently.
func ExamplePromptVersion_Render() {
	v := prompts.PromptVersion{Content: "Summarise for {{ audience }}: {{text}}"}
	v.Variables = prompts.Variables(v.Content) // a Store does this when it stores the version

	text, err := v.Render(map[string]string{"audience": "engineers", "text": "{{audience}} is literal here"})
	fmt.Println(text, err)

	_, err = v.Render(map[string]string{"audience": "engineers", "tone": "dry"})
	var e *prompts.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			fmt.Println(f.Field, f.Detail)
		}
	}
	// Output:
	// Summarise for engineers: {{audience}} is literal here <nil>
	// variables.text is missing: the version uses it
	// variables.tone is not used by this version
}
