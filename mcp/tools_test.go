package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out map[string]any
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out
}

func TestToolsByRole(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	p := f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "", prompts.Production)

	reader := f.connect(t, readKey, "")
	tools, err := reader.ListTools(ctx, nil)
	is.NoErr(err)
	var toolNames []string
	for _, tl := range tools.Tools {
		toolNames = append(toolNames, tl.Name)
	}
	is.Equal(toolNames, []string{"activate_version", "create_version", "get_prompt", "list_prompts", "render_prompt"})

	res, out := call(t, reader, "list_prompts", nil)
	is.True(!res.IsError)
	is.Equal(len(out["prompts"].([]any)), 1)
	is.Equal(out["prompts"].([]any)[0].(map[string]any)["name"], "demo/greeting")

	res, out = call(t, reader, "get_prompt", map[string]any{"key": "demo/greeting", "subject": "user-1"})
	is.True(!res.IsError)
	is.Equal(out["content"], "Hello {{name}}")
	is.Equal(out["environment"], "production")

	res, out = call(t, reader, "render_prompt", map[string]any{"key": "greeting", "project": "demo", "variables": map[string]any{"name": "Ada"}})
	is.True(!res.IsError)
	is.Equal(out["text"], "Hello Ada")

	// A read key may not write, nor a write key deploy: the refusal names
	// the role needed, and nothing changes.
	res, _ = call(t, reader, "create_version", map[string]any{"key": "demo/greeting", "content": "Hi {{name}}"})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "create_version needs the write role"))
	writer := f.connect(t, writeKey, "")
	res, _ = call(t, writer, "create_version", map[string]any{"key": "demo/greeting", "content": "Hi {{name}}", "environments": []string{"staging"}})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "needs the deploy role"))
	res, _ = call(t, writer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "staging", "version_number": 1})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "activate_version needs the deploy role"))
	_, more, err := f.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.True(!more)

	res, out = call(t, writer, "create_version", map[string]any{"key": "demo/greeting", "content": "Hi {{name}}", "change_summary": "shorter"})
	is.True(!res.IsError)
	is.Equal(out["version_number"], float64(2))

	deployer := f.connect(t, deployKey, "")
	res, out = call(t, deployer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "production", "version_number": 2, "reason": "shorter"})
	is.True(!res.IsError)
	is.Equal(out["version_number"], float64(2))
	deps, _, err := f.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(*deps[0].Actor, "deployer") // the key's name
	is.Equal(*deps[0].Reason, "shorter")

	// A version of a given number, and a render of it.
	res, out = call(t, reader, "render_prompt", map[string]any{"key": "demo/greeting", "version": 1, "variables": map[string]any{"name": "Bo"}})
	is.True(!res.IsError)
	is.Equal(out["text"], "Hello Bo")
}

func TestToolErrors(t *testing.T) {
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "", prompts.Production)
	f.prompt(t, f.other.ID, "secret", "hidden", "", "", prompts.Production)
	admin := f.connect(t, adminKey, "")
	demo := f.connect(t, demoOnly, "")
	for _, c := range []struct {
		cs   *sdk.ClientSession
		tool string
		args map[string]any
		want string
	}{
		{admin, "get_prompt", map[string]any{"key": "demo/nope"}, `no prompt "demo/nope"`},
		{admin, "get_prompt", map[string]any{"key": "greeting"}, "name it PROJECT/KEY"},
		{admin, "get_prompt", map[string]any{"key": "demo/greeting", "version": 7}, "not found"},
		{admin, "get_prompt", map[string]any{"key": "demo/greeting", "environment": "nowhere"}, "environment"},
		{admin, "get_prompt", map[string]any{}, "key"},
		{admin, "render_prompt", map[string]any{"key": "demo/greeting"}, "variables.name: is missing"},
		{admin, "render_prompt", map[string]any{"key": "demo/greeting", "variables": "x"}, "variables"},
		{admin, "create_version", map[string]any{"key": "demo/greeting", "content": ""}, "content"},
		{admin, "create_version", map[string]any{"key": "demo/greeting", "content": "x", "template_format": "jinja"}, "template_format"},
		{admin, "activate_version", map[string]any{"key": "demo/greeting", "environment": "production", "version_number": 0}, "version_number"},
		{admin, "activate_version", map[string]any{"key": "demo/greeting", "environment": "production", "version_number": 9}, "not found"},
		{admin, "list_prompts", map[string]any{"project": "nope"}, `no project "nope"`},
		{demo, "get_prompt", map[string]any{"key": "other/secret"}, `no prompt "other/secret"`},
		{demo, "get_prompt", map[string]any{"key": "secret", "project": "other"}, `no project "other"`},
	} {
		res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("%s %v: %v, want a tool error", c.tool, c.args, err)
			continue
		}
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: %v %q, want an error with %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
	// The one project of a key needs no slug.
	res, out := call(t, demo, "get_prompt", map[string]any{"key": "greeting"})
	if res.IsError || out["name"] != "demo/greeting" {
		t.Errorf("a key of one project: %q %v", text(res), out)
	}
}

// What the tools answer holds nulls and objects where the resource does.
func TestToolOutputs(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	p, err := f.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: f.demo.ID, Key: "bare", Name: "Bare"}) // no description, no version
	is.NoErr(err)
	f.prompt(t, f.demo.ID, "rich", "Hi {{name}}", prompts.FormatDotprompt, `{"model":"m","config":{"temperature":0.2,"n":12345678901234567}}`, prompts.Production)
	cs := f.connect(t, readKey, "")

	res, out := call(t, cs, "list_prompts", map[string]any{"project": "demo"})
	is.True(!res.IsError)
	list := out["prompts"].([]any)
	is.Equal(len(list), 2)
	bare := list[0].(map[string]any)
	is.Equal(bare["prompt_id"], p.ID)
	is.Equal(bare["description"], nil)
	is.Equal(bare["active_version_number"], nil)

	res, out = call(t, cs, "get_prompt", map[string]any{"key": "demo/rich"})
	is.True(!res.IsError)
	is.Equal(out["template_format"], "dotprompt")
	is.Equal(out["metadata_"].(map[string]any)["model"], "m")
	is.True(strings.Contains(text(res), `"n":12345678901234567`)) // every digit

	res, out = call(t, cs, "list_prompts", map[string]any{"limit": 1})
	is.True(!res.IsError)
	is.Equal(len(out["prompts"].([]any)), 1)
	is.True(out["next"] != "")
	res, out = call(t, cs, "list_prompts", map[string]any{"limit": 1, "after": out["next"]})
	is.True(!res.IsError)
	is.Equal(out["prompts"].([]any)[0].(map[string]any)["key"], "rich")
}
