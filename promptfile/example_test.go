package promptfile_test

import (
	"fmt"
	"os"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/promptfile"
)

func ExampleParse() {
	f, err := promptfile.Parse([]byte(`---
name: Support greeting
model: googleai/gemini-2.5-flash
config:
  temperature: 0.20
---
{{role "system"}}
You answer customers of Acme.
{{role "user"}}
Hello, I am {{name}}.
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Name)
	fmt.Println(f.Format)
	fmt.Println(f.Metadata)

	_, err = promptfile.Parse([]byte("---\nname: Support greeting\nprompts.format: plain\nmodel: gpt-5\n---\nHello"))
	fmt.Println(err)
	// Output:
	// Support greeting
	// dotprompt
	// {"model":"googleai/gemini-2.5-flash","config":{"temperature":0.20}}
	// line 4: unknown field "model": the front matter of a plain prompt (prompts.format: plain) holds name, description and metadata; put anything else under metadata
}

func ExampleFormat() {
	description := "The first answer to a customer."
	for _, f := range []promptfile.File{{
		Name:        "Support greeting",
		Description: &description,
		Format:      prompts.FormatDotprompt,
		Metadata:    `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.2}}`,
		Template:    "Hello {{name}}, thanks for writing to us.\n",
	}, {
		Name:     "Support greeting",
		Format:   prompts.FormatPlain,
		Metadata: `{"model":"gpt-5"}`,
		Template: "Hello {{name}}, thanks for writing to us.\n",
	}} {
		b, err := promptfile.Format(f)
		if err != nil {
			fmt.Println(err)
			return
		}
		os.Stdout.Write(b)
	}
	// Output:
	// ---
	// name: Support greeting
	// description: The first answer to a customer.
	// model: googleai/gemini-2.5-flash
	// config:
	//   temperature: 0.2
	// ---
	// Hello {{name}}, thanks for writing to us.
	// ---
	// name: Support greeting
	// prompts.format: plain
	// metadata:
	//   model: gpt-5
	// ---
	// Hello {{name}}, thanks for writing to us.
}
