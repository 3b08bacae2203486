package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/promptfile"
)

// Genkit renders a prompt loaded from the server as the server renders
// it: the same roles, the same text; with the model and config of its
// front matter.
func TestGenkitRendersAsTheServer(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	is.NoErr(run(t.Context(), &out, config{env: "production", prompt: "greeting", input: `{"name":"Ada"}`}))
	var got struct {
		Model    string
		Config   map[string]any
		Messages []struct {
			Role    string
			Content []struct{ Text string }
		}
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &got))
	is.Equal(got.Model, "googleai/gemini-2.5-flash")
	is.Equal(got.Config["temperature"], 0.2)

	f, err := promptfile.Parse([]byte(greeting))
	is.NoErr(err)
	want, err := prompts.PromptVersion{Content: f.Template, TemplateFormat: f.Format, Metadata: f.Metadata}.RenderMessages(t.Context(),
		prompts.RenderInput{Values: map[string]any{"name": "Ada"}})
	is.NoErr(err)
	is.Equal(len(got.Messages), len(want.Messages))
	for i, m := range want.Messages {
		is.Equal(got.Messages[i].Role, m.Role)
		is.Equal(got.Messages[i].Content[0].Text, m.Content[0].Text) // the same text
	}

	err = run(t.Context(), &out, config{env: "production", prompt: "nope", input: `{}`})
	is.True(err != nil) // no such prompt
}

// messages is what run writes.
type messages struct {
	Model    string
	Config   map[string]any
	Messages []struct {
		Role    string
		Content []struct{ Text string }
	}
}

// A prompt with partials, one a partial file of the FS (signoff) and one
// whose key has a '/' (support/signature), renders in Genkit as the
// server renders it with its partials.
func TestGenkitRendersPartialsAsTheServer(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	values := map[string]any{"name": "Ada", "question": "Where is my parcel?"}
	input, err := json.Marshal(values)
	is.NoErr(err)
	is.NoErr(run(t.Context(), &out, config{env: "production", prompt: "answer", input: string(input)}))
	var got messages
	is.NoErr(json.Unmarshal(out.Bytes(), &got))

	ms, p, err := demoStore(t.Context())
	is.NoErr(err)
	a, _, err := prompts.ReadActive(t.Context(), ms, prompts.ActiveQuery{ProjectID: p.ID, Key: "answer", Environment: prompts.Production})
	is.NoErr(err)
	_, want, err := prompts.NewRenderer(ms).Render(t.Context(), prompts.RenderRequest{PromptID: a.Prompt.ID,
		Environment: prompts.Some(prompts.Production), Variables: values})
	is.NoErr(err)
	is.Equal(len(got.Messages), 2)
	is.Equal(len(got.Messages), len(want.Messages))
	for i, m := range want.Messages {
		is.Equal(got.Messages[i].Role, m.Role)
		is.Equal(got.Messages[i].Content[0].Text, m.Content[0].Text) // the same text, partials included
	}
	is.Equal(strings.TrimSpace(got.Messages[1].Content[0].Text), "Where is my parcel?\nThanks, Ada.") // both partials rendered
}

// Genkit loads the server's prompts alone: a ./prompts directory in the
// working directory, as prompts export writes it, is not loaded, and a
// file there with the name of one of the server's prompts is no clash.
func TestGenkitIgnoresPromptsInWorkingDirectory(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	is.NoErr(os.Mkdir(filepath.Join(dir, "prompts"), 0o755))
	local := "---\nmodel: googleai/gemini-2.5-flash\n---\nA local file, not the server's.\n"
	is.NoErr(os.WriteFile(filepath.Join(dir, "prompts", "greeting.prompt"), []byte(local), 0o644))
	is.NoErr(os.WriteFile(filepath.Join(dir, "prompts", "local.prompt"), []byte(local), 0o644))
	t.Chdir(dir)

	var out bytes.Buffer
	is.NoErr(run(t.Context(), &out, config{env: "production", prompt: "greeting", input: `{"name":"Ada"}`}))
	var got messages
	is.NoErr(json.Unmarshal(out.Bytes(), &got))
	is.Equal(got.Messages[1].Content[0].Text, "\nHello, I am Ada.") // the server's greeting

	err := run(t.Context(), &out, config{env: "production", prompt: "local", input: `{}`})
	is.True(err != nil) // ./prompts/local.prompt was not loaded
}
