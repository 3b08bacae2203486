package promptfile_test

import (
	"fmt"
	"os"

	"github.com/promptkit/prompts/promptfile"
)

func ExampleParse() {
	f, err := promptfile.Parse([]byte(`---
name: Support greeting
metadata:
  model: gpt-5
  temperature: 0.20
---
Hello {{name}}.
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Name)
	fmt.Println(f.Metadata)
	fmt.Printf("%q\n", f.Template)

	_, err = promptfile.Parse([]byte("---\nname: Support greeting\nmodel: gpt-5\n---\nHello"))
	fmt.Println(err)
	// Output:
	// Support greeting
	// {"model":"gpt-5","temperature":0.20}
	// "Hello {{name}}.\n"
	// line 3: unknown field "model": the front matter holds name, description and metadata; put anything else under metadata
}

func ExampleFormat() {
	description := "The first answer to a customer."
	b, err := promptfile.Format(promptfile.File{
		Name:        "Support greeting",
		Description: &description,
		Metadata:    `{"model":"gpt-5","temperature":0.2}`,
		Template:    "Hello {{name}}, thanks for writing to us.\n",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(b)
	// Output:
	// ---
	// name: Support greeting
	// description: The first answer to a customer.
	// metadata:
	//   model: gpt-5
	//   temperature: 0.2
	// ---
	// Hello {{name}}, thanks for writing to us.
}
