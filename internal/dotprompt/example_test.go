package dotprompt_test

import (
	"context"
	"fmt"

	"github.com/promptkit/prompts/internal/dotprompt"
)

func Example() {
	// Parse once per version; the template is safe for concurrent renders.
	tpl, err := dotprompt.Parse(`{{role "system"}}You answer in {{language}}.
{{role "user"}}{{#each questions}}{{@index}}. {{this}}
{{/each}}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tpl.Variables())
	res, err := tpl.Render(context.Background(), dotprompt.Data{
		Input: map[string]any{"language": "French", "questions": []any{"Why?", "How?"}},
	}, dotprompt.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Messages {
		fmt.Printf("%s: %q\n", m.Role, m.Content[0].Text)
	}
	// Output:
	// [language questions]
	// system: "You answer in French.\n"
	// user: "0. Why?\n1. How?\n"
}
