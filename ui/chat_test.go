package ui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
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

// open signs a browser in to f's UI with key and gets the page at path
// under f's prompt, which must be served (200).
func (f *fixture) open(t *testing.T, key, path string) (*browser, page) {
	t.Helper()
	b := f.browser()
	b.signIn(key)
	p := b.get(f.url(path))
	if p.StatusCode != 200 {
		t.Fatalf("%s: %d, want 200", path, p.StatusCode)
	}
	return b, p
}

// sent is what a browser sends with the page's form: its hidden inputs,
// its text areas, and the option selected in each select.
func sent(p page) url.Values {
	v := url.Values{}
	for _, m := range hiddenRe.FindAllStringSubmatch(p.body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	for _, m := range textareaRe.FindAllStringSubmatch(p.body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(strings.TrimPrefix(m[2], "\n")))
	}
	for _, m := range selectRe.FindAllStringSubmatch(p.body, -1) {
		opts := optionRe.FindAllStringSubmatch(m[2], -1)
		for i, o := range opts {
			if o[2] != "" || i == 0 {
				v.Set(html.UnescapeString(m[1]), html.UnescapeString(o[1]))
			}
		}
	}
	return v
}

var (
	hiddenRe   = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	textareaRe = regexp.MustCompile(`(?s)<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>`)
	selectRe   = regexp.MustCompile(`(?s)<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>`)
	optionRe   = regexp.MustCompile(`<option value="([^"]*)"( selected)?>`)
)

func TestChatVersionPage(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	b, p := f.open(t, readKey, "/versions/1")
	tx := text(p)
	is.True(strings.Contains(tx, "Template format dotprompt"))
	is.True(strings.Contains(p.body, "<pre>{{role &#34;system&#34;}}\nYou are a {{tone}} assistant.")) // the template as stored
	// The messages, rendered with the input defaults, each with its role;
	// the required values without a default (name, a string, and topics,
	// a list of strings) are placeholders, marked as such and named.
	is.True(strings.Contains(tx, "Messages The template rendered with its input defaults; a variable without a value renders empty."))
	is.True(strings.Contains(tx, "Placeholders, marked like {{name}} , stand in for name, topics: the input schema requires them and the defaults do not give them. A list gets one placeholder. They are not values."))
	is.True(strings.Contains(tx, "System You are a friendly assistant. User Summarize {{topics}} for {{name}} . Media: https://example.com/cat.png"))
	is.True(strings.Contains(p.body, "Summarize <mark class=\"placeholder\" title=\"A placeholder for topics, not a value\">{{topics}}</mark> for <mark class=\"placeholder\" title=\"A placeholder for name, not a value\">{{name}}</mark>."))
	is.True(!strings.Contains(p.body, "\ue000")) // no mark of a placeholder is left in the text
	is.True(strings.Contains(p.body, `<h3 class="msg-role">System</h3>`))
	is.True(strings.Contains(p.body, `<a href="https://example.com/cat.png" rel="noreferrer">`)) // media as a link
	is.True(hasLink(p, "render page"))
	// The front matter: model, config as keys and values, the schemas
	// compiled from Picoschema, the defaults, tools, and the rest.
	for _, want := range []string{
		"Model googleai/gemini-2.5-flash",
		"Output format json",
		"Tools search",
		"Config temperature 0.4 maxOutputTokens 800",
		"image string or null optional none name string required who asks tone string or null optional none topics array of string required none",
		"Input defaults tone friendly image https://example.com/cat.png",
		"Output schema The output schema: its properties Name Type Required Description summary string required none",
		"Other settings acme.owner team-a",
	} {
		if !strings.Contains(tx, want) {
			t.Errorf("the page does not say %q:\n%s", want, tx)
		}
	}
	is.True(strings.Contains(tx, "The front matter as JSON { \"model\": \"googleai/gemini-2.5-flash\","))

	// A plain version's page is as it was: content and metadata.
	g := newFixtureOn(t, f.env)
	p = b.get(g.url("/versions/1"))
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Template format plain"))
	is.True(strings.Contains(text(p), "Content Hello {{name}}."))
	is.True(!strings.Contains(text(p), "Messages"))
}

// A version whose defaults do not render says so on its page, and the
// page is still served: the Store takes a default of the wrong type for
// the input schema (it checks the shape of the front matter, not the
// values), and rendering refuses it.
func TestChatVersionPageRenderError(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	_, err := f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content: "{{role r}}Hi", Metadata: `{"input":{"schema":{"r":"string"},"default":{"r":"narrator"}},"acme.limits":[1]}`})
	is.NoErr(err)
	_, p := f.open(t, readKey, "/versions/2")
	tx := text(p)
	is.True(strings.Contains(tx, "Template format dotprompt")) // the prompt's latest format
	is.True(strings.Contains(tx, `It does not render with its defaults: variables cannot be rendered: render: role must be system, user, model or tool, not "narrator"`))
	is.True(!strings.Contains(p.body, `class="messages"`)) // no messages claimed
	is.True(!strings.Contains(tx, "Placeholders"))
	// An extension that is not an object is shown as it is, among the rest.
	is.True(strings.Contains(tx, "Other settings acme.limits [ 1 ]"))
}

// A required value that takes no placeholder (a number, an object, a
// text from a list of choices) and has no default: the page renders
// nothing, says which values it needs, and links to the render page.
func TestChatVersionPageNeedsValues(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	_, err := f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content:  "{{name}} has {{count}} {{mood}} {{opts.a}}",
		Metadata: `{"input":{"schema":{"name":"string","count":"integer","mood":"string","opts(object)":{"a":"string"}},"default":{"mood":"calm"}}}`})
	is.NoErr(err)
	_, err = f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content:  "{{role \"user\"}}Go {{dir}} with {{name}}.",
		Metadata: `{"input":{"schema":{"type":"object","properties":{"dir":{"enum":["up","down"]},"name":{"type":"string"}},"required":["dir"]}}}`})
	is.NoErr(err)
	b, p := f.open(t, readKey, "/versions/2")
	tx := text(p)
	is.True(strings.Contains(tx, "Not rendered here: it needs values for count, opts, which the input schema requires and the defaults do not give. Give them on its render page ."))
	is.True(strings.Contains(p.body, `<a href="/ui/prompts/`+f.prompt.ID+`/versions/2/render">render page</a>`))
	is.True(!strings.Contains(p.body, `class="messages"`))
	is.True(!strings.Contains(p.body, `class="placeholder"`))

	p = b.get(f.url("/versions/3"))
	is.Equal(p.StatusCode, 200)
	tx = text(p)
	is.True(strings.Contains(tx, "it needs values for dir,")) // a list of choices takes no placeholder
	is.True(!strings.Contains(p.body, `class="messages"`))

	// With defaults for all it needs, it renders, and no placeholder is
	// claimed.
	_, err = f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content:  "{{role \"user\"}}Go {{dir}} with {{name}}.",
		Metadata: `{"input":{"schema":{"type":"object","properties":{"dir":{"enum":["up","down"]},"name":{"type":"string"}},"required":["dir"]},"default":{"dir":"up"}}}`})
	is.NoErr(err)
	p = b.get(f.url("/versions/4"))
	tx = text(p)
	is.True(strings.Contains(tx, "User Go up with ."))
	is.True(!strings.Contains(tx, "Placeholders"))
	is.True(!strings.Contains(tx, "Not rendered"))
}

// A placeholder in a media URL is shown marked, not as a link; one that
// the input schema refuses (a pattern) leaves the version unrendered,
// saying why and that placeholders were tried.
func TestChatVersionPagePlaceholderEdges(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	_, err := f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content: "{{role \"user\"}}Look.{{media url=image}}", Metadata: `{"input":{"schema":{"image":"string"}}}`})
	is.NoErr(err)
	_, err = f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content:  "Order {{code}}",
		Metadata: `{"input":{"schema":{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]+$"}},"required":["code"]}}}`})
	is.NoErr(err)
	b, p := f.open(t, readKey, "/versions/2")
	is.True(strings.Contains(text(p), "User Look. Media: {{image}}"))
	is.True(strings.Contains(p.body, `<p class="media">Media: <mark class="placeholder" title="A placeholder for image, not a value">{{image}}</mark></p>`))
	is.True(!strings.Contains(p.body, `rel="noreferrer"`)) // no link to a placeholder

	p = b.get(f.url("/versions/3"))
	is.Equal(p.StatusCode, 200)
	tx := text(p)
	is.True(strings.Contains(tx, "It does not render with its defaults and placeholders: code breaks the input schema: '{{code}}' does not match pattern '^[0-9]+$'"))
	is.True(!strings.Contains(p.body, `class="messages"`))
}

func TestChatRender(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	b, p := f.open(t, readKey, "/versions/1/render")
	for _, name := range []string{"image", "name", "tone", "topics", "Read name as", "Read topics as", "History (JSON)", "Context (JSON)"} {
		if !hasField(p, name) {
			t.Errorf("no field %q", name)
		}
	}
	is.True(hasButton(p, "Render"))
	form := sent(p)
	// The fields start from the defaults; strings are read as text, other
	// types as JSON, as the input schema says.
	is.Equal(form.Get("var.tone"), "friendly")
	is.Equal(form.Get("kind.tone"), "text")
	is.Equal(form.Get("kind.name"), "text")
	is.Equal(form.Get("kind.topics"), "json")
	is.True(strings.Contains(text(p), "name Read name as JSON Text string, required: who asks"))

	form.Set("var.name", "Ada")
	form.Set("var.topics", `["tides", "moons"]`)
	p = b.post(f.url("/versions/1/render"), form)
	is.Equal(p.StatusCode, 200)
	tx := text(p)
	is.True(strings.Contains(tx, "Result System You are a friendly assistant. User Summarize tides, moons for Ada. Media: https://example.com/cat.png"))
	// The model and its config beside the messages.
	is.True(strings.Contains(tx, "Sent with Model googleai/gemini-2.5-flash temperature 0.4 maxOutputTokens 800 Output format json Tools search"))
	// What was typed stays in the form.
	is.Equal(sent(p).Get("var.topics"), `["tides", "moons"]`)
	is.Equal(len(f.history()), 0) // rendering changes nothing

	// Text that looks like JSON stays text when Text is chosen; JSON
	// values of the types the input schema gives render.
	form.Set("var.name", "42")
	form.Set("kind.tone", "json")
	form.Set("var.tone", `"terse"`)
	form.Set("var.topics", `["tides"]`)
	p = b.post(f.url("/versions/1/render"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "You are a terse assistant."))
	is.True(strings.Contains(text(p), "Summarize tides for 42."))

	// A value the input schema refuses (of the wrong type, or a required
	// one missing) is an error at its field, marked invalid and naming
	// it; 400, nothing rendered, the form as typed.
	for _, c := range []struct {
		field, kind, value string
		i                  int // the field's index: image, name, tone, topics
		want               string
	}{
		{"var.tone", "json", `{"a": 1}`, 2, "tone: must be null or string, not object"},
		{"var.name", "json", `42`, 1, "name: must be string, not number"},
		{"var.topics", "json", `["tides", 7]`, 3, "topics: at /1: must be string, not number"},
		{"var.topics", "json", `"tides"`, 3, "topics: must be array, not string"},
		{"var.topics", "json", ``, 3, "topics: is missing: the input schema requires it"},
	} {
		form := sent(b.get(f.url("/versions/1/render")))
		form.Set("var.name", "Ada")
		form.Set("var.topics", `["tides"]`)
		form.Set("kind."+strings.TrimPrefix(c.field, "var."), c.kind)
		form.Set(c.field, c.value)
		p := b.post(f.url("/versions/1/render"), form)
		tx := text(p)
		id := "var-" + strconv.Itoa(c.i)
		if p.StatusCode != http.StatusBadRequest ||
			!strings.Contains(tx, "Not rendered; the form has errors: "+c.want) ||
			!strings.Contains(p.body, `aria-describedby="`+id+`-help values-help `+id+`-error" aria-invalid="true"`) ||
			!strings.Contains(p.body, `<p class="field-error" id="`+id+`-error">`+html.EscapeString(c.want)+`</p>`) ||
			strings.Contains(tx, "Result") || strings.Count(p.body, `aria-invalid="true"`) != 1 {
			t.Errorf("%s=%s: %d, want 400 with %q at its field alone, nothing rendered:\n%s", c.field, c.value, p.StatusCode, c.want, p.body)
		}
		if got := sent(p).Get(c.field); got != c.value {
			t.Errorf("%s=%s: the form keeps %q", c.field, c.value, got)
		}
	}

	// An empty JSON field gives no value: its default applies.
	form.Set("var.name", "Ada")
	form.Set("var.tone", "")
	form.Set("var.image", "")
	form.Set("kind.image", "json")
	p = b.post(f.url("/versions/1/render"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "You are a friendly assistant."))
	is.True(strings.Contains(text(p), "Media: https://example.com/cat.png"))
}

// A value that is not JSON is refused, naming its field, and nothing is
// rendered; the form keeps what was typed.
func TestChatRenderBadJSON(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	b := f.browser()
	b.signIn(readKey)
	form := sent(b.get(f.url("/versions/1/render")))
	form.Set("var.name", "Ada")
	form.Set("var.topics", "[\"tides\",\n  moons]")
	p := b.post(f.url("/versions/1/render"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	tx := text(p)
	is.True(strings.Contains(tx, "Not rendered; the form has errors: topics: is not valid JSON (line 2, column 3): invalid character 'm' looking for beginning of value. To give it as text, choose Text."))
	is.True(strings.Contains(p.body, `aria-describedby="var-3-help values-help var-3-error" aria-invalid="true"`))
	is.True(strings.Contains(p.body, `<p class="field-error" id="var-3-error">topics: is not valid JSON`))
	is.True(!strings.Contains(tx, "Result"))
	is.Equal(sent(p).Get("var.topics"), "[\"tides\",\n  moons]")

	for _, c := range []struct{ field, value, want string }{
		{"var.topics", `["a"] ["b"]`, "topics: is not valid JSON: more follows the value"},
		{"var.topics", `["a"`, "topics: is not valid JSON: it ends too soon"},
		{"history", `{"role": "user"}`, "History must be an array of messages"},
		{"history", `[{"role": "user", "content": [{"text": "a", "media": {"url": "u"}}]}]`, "History message 1, part 1: must have text or media, one of them"},
		{"history", `[{"role": "boss", "content": [{"text": "a"}]}]`, "History history[0].role must be system, user, model or tool"},
		{"history", `[nope]`, "History is not valid JSON (line 1, column 3)"},
		{"context", `[1]`, "Context must be a JSON object"},
		{"context", `{`, "Context is not valid JSON: it ends too soon"},
		{"var.nobody", `1`, "nobody is not a variable of this version"},
	} {
		form := sent(b.get(f.url("/versions/1/render")))
		form.Set("var.name", "Ada")
		form.Set("var.topics", `["x"]`)
		form.Set(c.field, c.value)
		p := b.post(f.url("/versions/1/render"), form)
		if p.StatusCode != http.StatusBadRequest || !strings.Contains(text(p), c.want) {
			t.Errorf("%s=%s: %d, want 400 saying %q:\n%s", c.field, c.value, p.StatusCode, c.want, text(p))
		}
	}
}

// History goes where {{history}} is, or before the last user message;
// context is the @ data.
func TestChatRenderHistoryAndContext(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	_, err := f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID,
		Content: "{{role \"system\"}}Step {{@state.step}}.{{history}}{{role \"user\"}}{{q}}"})
	is.NoErr(err)
	b := f.browser()
	b.signIn(readKey)
	form := sent(b.get(f.url("/versions/2/render")))
	is.Equal(form.Get("kind.q"), "text") // no schema, no default: text
	form.Set("var.q", "And now?")
	form.Set("history", `[{"role": "user", "content": [{"text": "Hi"}]}, {"role": "model", "content": [{"text": "Hello."}, {"media": {"url": "https://example.com/a.png", "contentType": "image/png"}}]}]`)
	form.Set("context", `{"state": {"step": 2}}`)
	p := b.post(f.url("/versions/2/render"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Result System Step 2. User Hi Model Hello. Media: https://example.com/a.png (image/png) User And now?"))
	is.True(strings.Contains(text(p), "Sent with Model none"))
}

// The new version form starts from the latest version's format, model,
// config and the rest of its front matter, and puts them together again.
func TestChatNewVersion(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	b, p := f.open(t, writeKey, "/versions/new")
	for _, name := range []string{"Plain", "Dotprompt", "Content", "Model", "Config (JSON)", "Metadata (JSON)", "Change summary"} {
		if !hasField(p, name) {
			t.Errorf("no field %q", name)
		}
	}
	is.True(strings.Contains(p.body, `<legend>Template format</legend>`))
	is.True(strings.Contains(p.body, `id="format-dotprompt" name="template_format" value="dotprompt" checked`)) // the latest's format
	form := sent(p)
	is.True(strings.Contains(p.body, `<input id="model" name="model" type="text" value="googleai/gemini-2.5-flash"`))
	is.Equal(form.Get("config"), "{\n  \"temperature\": 0.4,\n  \"maxOutputTokens\": 800\n}")
	is.True(strings.HasPrefix(form.Get("metadata"), "{\n  \"input\": {"))
	is.True(!strings.Contains(form.Get("metadata"), `"model"`))

	// Sent back as they are, they make the same front matter.
	form.Set("template_format", "dotprompt")
	form.Set("model", "googleai/gemini-2.5-flash")
	form.Set("change_summary", "same again")
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	v, err := f.store.GetVersion(context.Background(), f.prompt.ID, 2)
	is.NoErr(err)
	is.Equal(v.TemplateFormat, prompts.FormatDotprompt)
	is.Equal(string(v.Metadata), chatMeta)
	is.Equal(v.Content, chatTemplate)

	// "Show variables" reads a dotprompt template as dotprompt.
	form.Set("content", "{{#each items}}{{this.name}}{{/each}} {{who}}")
	form.Set("preview", "1")
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(text(p), "Variables items who"))
	form.Set("content", "{{#if x}}open")
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Content is not a valid dotprompt template: line 1"))
	form.Del("preview")

	// Config that is not a JSON object, and a model given twice: the form
	// again, each error at its field, nothing created.
	form.Set("content", "{{role \"user\"}}Hi")
	form.Set("config", `{"temperature": 0.2,}`)
	form.Set("metadata", `{"model": "other"}`)
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	tx := text(p)
	is.True(strings.Contains(tx, "Config is not valid JSON (line 1, column 20)"))
	is.True(strings.Contains(tx, "Model is given twice: here and in Metadata (JSON); remove one"))
	is.True(strings.Contains(p.body, `aria-describedby="config-help config-error" aria-invalid="true"`))
	is.True(strings.Contains(p.body, `aria-describedby="model-help model-error" aria-invalid="true"`))
	is.Equal(sent(p).Get("config"), `{"temperature": 0.2,}`) // kept as typed
	form.Set("config", `[1]`)
	form.Set("metadata", ``)
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Config must be a JSON object"))
	is.Equal(latest(f), 2)

	// The Store's refusal of a member of config lands at the field it was
	// typed in.
	form.Set("config", `{"a": 1, "a": 2}`)
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Config member config.a is given more than once"))
	form.Set("config", "")
	form.Set("metadata", `{"config": {"a": 1, "a": 2}}`)
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), "Metadata member config.a is given more than once"))
	form.Set("metadata", "")
	is.Equal(latest(f), 2)

	// Model and config alone; plain chosen; the Store's refusal of an
	// unknown format named at its field.
	form.Set("config", `{"temperature": 0.20}`)
	form.Set("template_format", "plain")
	form.Set("content", "Hi {{name}}")
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusSeeOther)
	v, err = f.store.GetVersion(context.Background(), f.prompt.ID, 3)
	is.NoErr(err)
	is.Equal(v.TemplateFormat, prompts.FormatPlain)
	is.Equal(string(v.Metadata), `{"model":"googleai/gemini-2.5-flash","config":{"temperature":0.20}}`)
	form.Set("template_format", "mustache")
	p = b.post(f.url("/versions"), form)
	is.Equal(p.StatusCode, http.StatusBadRequest)
	is.True(strings.Contains(text(p), `Template format is "mustache", not a known template format`))
	is.Equal(latest(f), 3)

	// The form of a plain prompt starts plain.
	g := newFixtureOn(t, f.env)
	p = b.get(g.url("/versions/new"))
	is.True(strings.Contains(p.body, `id="format-plain" name="template_format" value="plain" checked`))
}

// Comparing says what of the template format and the settings changed,
// beside the line-by-line differences.
func TestChatCompare(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	meta := `{"model":"googleai/gemini-2.5-pro","config":{"temperature":0.4,"topK":3},` +
		`"input":{"schema":{"name":"string, who asks","tone?":"string","topics(array)":"string","image?":"string"},` +
		`"default":{"tone":"friendly","image":"https://example.com/cat.png"}},` +
		`"output":{"format":"json","schema":{"summary":"string"}},"acme.owner":"team-a"}`
	ctx := context.Background()
	_, err := f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: f.prompt.ID, Content: chatTemplate, Metadata: prompts.Metadata(meta)})
	is.NoErr(err)
	_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: f.prompt.ID, Content: "Hi {{name}}", Metadata: prompts.Metadata(meta), TemplateFormat: prompts.FormatPlain})
	is.NoErr(err)
	b, p := f.open(t, readKey, "/compare?from=1&to=2")
	tx := text(p)
	is.True(strings.Contains(tx, "Template format The same: dotprompt."))
	is.True(strings.Contains(tx, "The two versions have the same content."))
	is.True(strings.Contains(tx, "Metadata Changed: model Added: config.topK Removed: config.maxOutputTokens, tools"))
	p = b.get(f.url("/compare?from=2&to=3"))
	tx = text(p)
	is.True(strings.Contains(tx, "Template format Changed: dotprompt in version 2, plain in version 3."))
	is.True(strings.Contains(tx, "Metadata The same."))
}

// A variable whose name is not an identifier (a segment literal) has a
// field like any other.
func TestChatRenderOddName(t *testing.T) {
	is := is.New(t)
	f := newChatFixture(t)
	_, err := f.store.CreateVersion(context.Background(), prompts.NewVersion{PromptID: f.prompt.ID, Content: `Hi {{[first name]}} & <b>{{x}}</b>`})
	is.NoErr(err)
	b, p := f.open(t, readKey, "/versions/2/render")
	is.True(hasField(p, "first name"))
	form := sent(p)
	form.Set("var.first name", "Ada")
	form.Set("var.x", `"<i>"`)
	form.Set("kind.x", "json")
	p = b.post(f.url("/versions/2/render"), form)
	is.Equal(p.StatusCode, 200)
	is.True(strings.Contains(p.body, "<pre>Hi Ada &amp; &lt;b&gt;&lt;i&gt;&lt;/b&gt;</pre>")) // escaped on the page, not by the template
}

// A version that includes a partial renders it, on its page and on the
// render page, at the partial's version active in production; a partial
// with nothing active there is said so, and nothing is rendered.
func TestChatRenderPartial(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	tone, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "support/tone", Name: "Tone"})
	is.NoErr(err)
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: tone.ID, TemplateFormat: prompts.FormatDotprompt,
		Content: "Be kind to {{name}}.", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.alpha.ID, Key: "support/chat", Name: "Chat"})
	is.NoErr(err)
	_, err = e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt,
		Content:  `{{role "system"}}{{> support/tone}}{{role "user"}}Hi, I am {{name}}.`,
		Metadata: `{"input":{"schema":{"name":"string"},"default":{"name":"Bo"}}}`})
	is.NoErr(err)
	f := &fixture{env: e, prompt: p}
	b, page := f.open(t, readKey, "/versions/1")
	is.True(strings.Contains(text(page), "System Be kind to Bo. User Hi, I am Bo.")) // the preview, the partial included

	form := sent(b.get(f.url("/versions/1/render")))
	form.Set("var.name", "Ada")
	page = b.post(f.url("/versions/1/render"), form)
	is.Equal(page.StatusCode, 200)
	is.True(strings.Contains(text(page), "System Be kind to Ada. User Hi, I am Ada."))

	_, err = e.store.Deactivate(ctx, prompts.Deactivation{PromptID: tone.ID, Environment: prompts.Production, Force: true})
	is.NoErr(err)
	page = b.post(f.url("/versions/1/render"), form)
	is.Equal(page.StatusCode, http.StatusConflict) // the partial has nothing active in production
	is.True(strings.Contains(text(page), "support/tone"))
}
