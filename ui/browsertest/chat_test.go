package browsertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// A chat prompt as Dotprompt writes it: its template and its front
// matter (stored as the version's metadata_).
const (
	chatTemplate = `{{role "system"}}
You are a {{tone}} assistant.
{{role "user"}}
Summarize {{#each topics}}{{this}}{{#unless @last}}, {{/unless}}{{/each}} for {{name}}.
{{media url=image}}`
	chatMeta = `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.4,"maxOutputTokens":800},` +
		`"input":{"schema":{"name":"string, who asks","tone?":"string","topics(array)":"string","image?":"string"},` +
		`"default":{"tone":"friendly","image":"https://example.com/cat.png"}},` +
		`"output":{"format":"json","schema":{"summary":"string"}},"tools":["search"]}`
)

// TestChatVersion walks through a dotprompt version as a person reads,
// renders and changes it, with page scripts on and off: its page shows
// the messages by role (placeholders marked for the required values
// without a default) and the front matter; its render page takes JSON
// values, refuses one that is not JSON or of the wrong type at its field,
// and shows the
// messages with the model beside; a new version keeps the format.
func TestChatVersion(t *testing.T) {
	need(t)
	modes(t, func(t *testing.T, scripts bool) {
		is := is.New(t)
		s := startServer(t, []string{"Acme"})
		a := s.project(t, "Acme")
		var p prompt
		s.api(t, "admin", "POST", "/prompts", map[string]any{"project_id": a.ID, "key": "support/chat", "name": "Chat"}, 200, &p)
		s.api(t, "admin", "POST", "/prompts/"+p.ID+"/versions", map[string]any{
			"content": chatTemplate, "template_format": "dotprompt", "metadata_": json.RawMessage(chatMeta),
		}, 200, nil)

		b := newTab(t, s, scripts)
		is.Equal(b.open("/ui/"), int64(200))
		b.signIn("deploy")
		b.follow("Acme")
		b.follow("support/chat")
		is.Equal(b.follow("Version 1"), int64(200))

		// The version's page: each message under a heading that names
		// its role, in order; the media part a link; the front matter.
		is.True(b.has("heading", "System"))
		is.True(b.has("heading", "User"))
		is.True(b.has("link", "https://example.com/cat.png"))
		tx := b.text()
		for _, want := range []string{
			"Template format\ndotprompt",
			"System\nYou are a friendly assistant.",
			// name and topics are required and have no default: marked
			// placeholders stand in for them, and the page says so.
			"User\nSummarize {{topics}} for {{name}}.",
			"stand in for name, topics",
			"Model\ngoogleai/gemini-2.5-flash",
			"temperature\n0.4",
		} {
			if !strings.Contains(tx, want) {
				t.Errorf("the version's page does not say %q:\n%s", want, tx)
			}
		}
		var marks int
		b.call(b.one("heading", "Messages"), `function() { return this.closest("section").querySelectorAll(".messages mark.placeholder").length }`, &marks)
		is.Equal(marks, 2)
		spoken := b.spoken()
		is.True(strings.Contains(spoken, "topics array of string required")) // the input schema, as a table
		b.screenshot("chat-version")

		// Render it: values as JSON, strings as text.
		is.Equal(b.follow("Render version 1"), int64(200))
		b.fill("name", "Ada")
		b.fill("topics", `["tides", "moons"`) // not JSON
		is.Equal(b.press("Render"), int64(400))
		tx = b.text()
		is.True(strings.Contains(tx, "topics: is not valid JSON"))
		is.True(!b.has("heading", "Result"))
		var invalid string
		b.call(b.one("field", "topics"), `function() { return this.getAttribute("aria-invalid") }`, &invalid)
		is.Equal(invalid, "true")

		// JSON of the wrong type for the input schema: refused at its
		// field too.
		b.fill("topics", `"tides"`)
		is.Equal(b.press("Render"), int64(400))
		is.True(strings.Contains(b.text(), "topics: must be array, not string"))
		is.True(!b.has("heading", "Result"))
		invalid = ""
		b.call(b.one("field", "topics"), `function() { return this.getAttribute("aria-invalid") }`, &invalid)
		is.Equal(invalid, "true")

		b.fill("topics", `["tides", "moons"]`)
		is.Equal(b.press("Render"), int64(200))
		is.True(b.has("heading", "Result"))
		is.True(b.has("heading", "Sent with"))
		tx = b.text()
		for _, want := range []string{
			"System\nYou are a friendly assistant.",
			"User\nSummarize tides, moons for Ada.",
			"Model\ngoogleai/gemini-2.5-flash",
		} {
			if !strings.Contains(tx, want) {
				t.Errorf("the result does not say %q:\n%s", want, tx)
			}
		}
		b.screenshot("chat-render")

		// A value read as JSON, chosen in its list: a JSON string.
		b.choose("Read tone as", "JSON")
		b.fill("tone", `"terse"`)
		is.Equal(b.press("Render"), int64(200))
		is.True(strings.Contains(b.text(), "You are a terse assistant."))

		// A new version starts as dotprompt, with the model in its field.
		b.open("/ui/prompts/" + p.ID)
		is.Equal(b.follow("New version"), int64(200))
		var checked bool
		b.call(b.one("radio", "Dotprompt"), `function() { return this.checked }`, &checked)
		is.True(checked)
		var model string
		b.call(b.one("field", "Model"), `function() { return this.value }`, &model)
		is.Equal(model, "googleai/gemini-2.5-flash")
		b.screenshot("chat-new-version")
		b.fill("Model", "googleai/gemini-2.5-pro")
		b.fill("Change summary", "a bigger model")
		is.Equal(b.press("Create"), int64(200))
		var vs []struct {
			VersionNumber  int             `json:"version_number"`
			Content        string          `json:"content"`
			TemplateFormat string          `json:"template_format"`
			Metadata       json.RawMessage `json:"metadata_"`
		}
		s.api(t, "admin", "GET", "/prompts/"+p.ID+"/versions", nil, 200, &vs)
		is.Equal(len(vs), 2)
		is.Equal(vs[0].TemplateFormat, "dotprompt")
		is.Equal(vs[0].Content, chatTemplate)
		var meta map[string]any
		is.NoErr(json.Unmarshal(vs[0].Metadata, &meta))
		is.Equal(meta["model"], "googleai/gemini-2.5-pro")
		is.Equal(meta["config"], map[string]any{"temperature": 0.4, "maxOutputTokens": 800.0})

		// Comparing names what changed in the settings.
		is.Equal(b.follow("Compare with version 1"), int64(200))
		is.True(strings.Contains(b.text(), "Changed: model"))
	})
}
