package prompts_test

import (
	"context"
	"fmt"

	"github.com/promptkit/prompts"
)

// A dotprompt version's front matter: its input schema makes its
// variables, rendering checks values against it, and the model and its
// configuration come with the messages.
func ExampleVersionSignature() {
	md := prompts.Metadata(`{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2},` +
		`"input":{"default":{"lang":"English"},"schema":{"question":"string","lang?":"string"}}}`)
	const content = `{{role "system"}}Answer in {{lang}}.{{role "user"}}{{question}}`
	sig, err := prompts.VersionSignature(prompts.FormatDotprompt, content, md)
	if err != nil {
		panic(err)
	}
	fmt.Println(sig.Variables)
	fmt.Printf("%q\n", sig.Inputs)

	v := prompts.PromptVersion{TemplateFormat: prompts.FormatDotprompt, Content: content, Metadata: md, Variables: sig.Variables}
	out, err := v.RenderMessages(context.Background(), prompts.RenderInput{Values: map[string]any{"question": "Why?"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Model, out.Config)
	for _, m := range out.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Content[0].Text)
	}
	_, err = v.RenderMessages(context.Background(), prompts.RenderInput{Values: map[string]any{"question": 42, "tone": "dry"}})
	fmt.Println(err)

	_, err = prompts.VersionSignature(prompts.FormatDotprompt, content, `{"config":"hot"}`)
	fmt.Println(err)
	// Output:
	// [lang question]
	// ["lang\tstring|null\toptional\t{\"type\":[\"string\",\"null\"]}" "question\tstring\trequired\t{\"type\":\"string\"}"]
	// googleai/gemini-2.5-flash {"temperature":0.2}
	// system: Answer in English.
	// user: Why?
	// invalid input: variables.question: must be string, not number; variables.tone: is not named by the input schema
	// invalid input: metadata_.config: must be an object
}
