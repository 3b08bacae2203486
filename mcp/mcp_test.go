package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

func TestPromptsListedAndRendered(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	greeting := f.prompt(t, f.demo.ID, "support/greeting", "Hello {{name}}, from {{ team }}.", "", "", prompts.Production)
	f.prompt(t, f.demo.ID, "draft", "nothing active", "", "")
	f.prompt(t, f.demo.ID, "staged", "staged {{x}}", "", "", prompts.Staging)
	f.prompt(t, f.other.ID, "elsewhere", "other", "", "", prompts.Production)

	cs := f.connect(t, readKey, "")
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/support/greeting", "other/elsewhere"}) // active in production only
	p := list.Prompts[0]
	is.Equal(p.Description, "the support/greeting prompt")
	is.Equal(len(p.Arguments), 2)
	is.Equal(*p.Arguments[0], sdk.PromptArgument{Name: "name", Required: true}) // a plain version needs every variable
	is.Equal(p.Arguments[1].Name, "team")

	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/support/greeting", Arguments: map[string]string{"name": "Ada", "team": "support"}})
	is.NoErr(err)
	is.Equal(len(got.Messages), 1)
	is.Equal(got.Messages[0].Role, sdk.Role("user"))
	is.Equal(got.Messages[0].Content.(*sdk.TextContent).Text, "Hello Ada, from support.")
	is.Equal(got.Meta["prompt_id"], greeting.ID)
	is.Equal(got.Meta["version_number"], float64(1))
	is.Equal(got.Meta["environment"], "production")

	// Another environment, from the URL.
	staging := f.connect(t, readKey, "?environment=staging")
	list, err = staging.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/staged"})
	got, err = staging.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/staged", Arguments: map[string]string{"x": "1"}})
	is.NoErr(err)
	is.Equal(got.Meta["environment"], "staging")

	// A key of one project sees that project's prompts only.
	demo := f.connect(t, demoOnly, "")
	list, err = demo.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/support/greeting"})
	_, err = demo.GetPrompt(ctx, &sdk.GetPromptParams{Name: "other/elsewhere"})
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), `unknown prompt "other/elsewhere"`))
}

func TestGetPromptErrors(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "", prompts.Production)
	cs := f.connect(t, readKey, "")

	_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/nope"})
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), `unknown prompt "demo/nope"`))

	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greeting"}) // name is missing
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "name: is missing"))

	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greeting", Arguments: map[string]string{"name": "Ada", "age": "3"}})
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "age: is not used by this version"))

	// The session lives on after errors.
	_, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greeting", Arguments: map[string]string{"name": "Ada"}})
	is.NoErr(err)
}

func TestDotpromptMessagesAndSchema(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	content := `{{role "system"}}You are {{persona}}.{{role "user"}}Count to {{n}}.{{#if loud}} LOUD{{/if}}{{#each tags}} #{{this}}{{/each}}{{role "model"}}Sure.`
	meta := prompts.Metadata(`{"model":"m","input":{"schema":{"persona":"string, who the model is","n":"integer","loud?":"boolean, shout","tags?(array)":"string"}}}`)
	f.prompt(t, f.demo.ID, "count", content, prompts.FormatDotprompt, meta, prompts.Production)
	cs := f.connect(t, readKey, "")

	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 1)
	args := map[string]sdk.PromptArgument{}
	for _, a := range list.Prompts[0].Arguments {
		args[a.Name] = *a
	}
	is.Equal(args["persona"], sdk.PromptArgument{Name: "persona", Description: "who the model is", Required: true})
	is.Equal(args["n"], sdk.PromptArgument{Name: "n", Required: true})
	is.Equal(args["loud"], sdk.PromptArgument{Name: "loud", Description: "shout"})
	is.Equal(args["tags"], sdk.PromptArgument{Name: "tags"})

	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/count", Arguments: map[string]string{
		"persona": "a counter", "n": "3", "loud": "true", "tags": `["a","b"]`}})
	is.NoErr(err)
	var roles, texts []string
	for _, m := range got.Messages {
		roles = append(roles, string(m.Role))
		texts = append(texts, m.Content.(*sdk.TextContent).Text)
	}
	is.Equal(roles, []string{"user", "user", "assistant"}) // system is a user message; model is assistant
	is.Equal(texts, []string{"You are a counter.", "Count to 3. LOUD #a #b", "Sure."})

	for args, want := range map[string]string{
		`{"persona":"x","n":"three"}`:          "n: must be an integer",
		`{"persona":"x","n":"3.5"}`:            "n: must be an integer",
		`{"persona":"x","n":"3","loud":"yes"}`: "loud: must be a boolean",
		`{"persona":"x","n":"3","tags":"a"}`:   "tags: must be an array",
		`{"persona":"x"}`:                      "n: is required",
	} {
		var m map[string]string
		is.NoErr(json.Unmarshal([]byte(args), &m))
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/count", Arguments: m})
		is.True(err != nil)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

func TestJSONSchemaArguments(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	meta := prompts.Metadata(`{"input":{"schema":{"type":"object","properties":{"topic":{"type":"string","description":"what about"},"depth":{"type":["integer","null"]}},"required":["topic"]}}}`)
	f.prompt(t, f.demo.ID, "explain", "Explain {{topic}} at depth {{depth}}.", prompts.FormatDotprompt, meta, prompts.Production)
	cs := f.connect(t, readKey, "")
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts[0].Arguments), 2)
	is.Equal(*list.Prompts[0].Arguments[1], sdk.PromptArgument{Name: "topic", Description: "what about", Required: true})
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/explain", Arguments: map[string]string{"topic": "Go", "depth": "2"}})
	is.NoErr(err)
	is.Equal(got.Messages[0].Content.(*sdk.TextContent).Text, "Explain Go at depth 2.")
}

func TestListChangedAfterPromotion(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	p := f.prompt(t, f.demo.ID, "late", "v1", "", "") // nothing active yet
	cs := f.connect(t, readKey, "")
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 0)

	start := time.Now()
	_, err = f.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	select {
	case <-f.changes:
	case <-time.After(10 * time.Second): // a bound on a failure, not a measure
		t.Fatal("no notifications/prompts/list_changed after a promotion")
	}
	t.Logf("list_changed %v after the promotion", time.Since(start))
	list, err = cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/late"})

	// A promotion that keeps the arguments is a change of what is
	// active: it is told too; and so is a rollback.
	_, err = f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "v2"})
	is.NoErr(err)
	_, err = f.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
	is.NoErr(err)
	select {
	case <-f.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed after a promotion of the same arguments")
	}
	_, err = f.store.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err)
	select {
	case <-f.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed after a rollback")
	}

	// A rename is a change of the list too.
	_, err = f.store.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("renamed")})
	is.NoErr(err)
	select {
	case <-f.changes:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed after a rename")
	}
	list, err = cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(names(list), []string{"demo/renamed"})
}

func TestAuthentication(t *testing.T) {
	is := is.New(t)
	f := newFixture(t)
	for name, h := range map[string]http.Header{
		"no key":    {},
		"wrong key": {"X-Api-Key": {"not-a-key-0123456789"}},
		"two keys":  {"X-Api-Key": {readKey}, "Authorization": {"Bearer " + readKey}},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(`{}`))
		req.Header = h
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, res.StatusCode)
		}
	}
	// A bearer key opens a session.
	cs, err := f.dial(readKey, "", keyTransport{"Authorization", "Bearer " + readKey})
	is.NoErr(err)
	defer cs.Close()
	is.NoErr(cs.Ping(context.Background(), nil))

	// Another key cannot use that session.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	req.Header.Set("X-API-Key", adminKey)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusNotFound)

	// A malformed environment is refused before any session (whether a
	// project has a well-formed one is the Store's to say, at each call).
	req, _ = http.NewRequest(http.MethodPost, f.srv.URL+"?environment=Nowhere", strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", readKey)
	res, err = http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusBadRequest)
}
