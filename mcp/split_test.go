package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

// activate_version sets a split (deploy, admin on a protected
// environment); get_prompt and render_prompt answer the version it serves
// a subject, its first entry's without one, and the split.
func TestToolsSplit(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	p := f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "", prompts.Production)
	for _, c := range []string{"Hi {{name}}", "Hey {{name}}"} {
		_, err := f.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: c})
		is.NoErr(err)
	}
	_, err := f.store.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: f.demo.ID, Name: "canary", Protected: true})
	is.NoErr(err)
	split := []any{map[string]any{"version_number": 2, "weight": 90}, map[string]any{"version_number": 3, "weight": 10}}
	records := func() int {
		ds, _, err := f.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
		is.NoErr(err)
		return len(ds)
	}

	// The input schema documents the split, and version_number is no
	// longer required.
	deployer := f.connect(t, deployKey, "")
	tools, err := deployer.ListTools(ctx, nil)
	is.NoErr(err)
	i := slices.IndexFunc(tools.Tools, func(tl *sdk.Tool) bool { return tl.Name == "activate_version" })
	schema, err := json.Marshal(tools.Tools[i].InputSchema)
	is.NoErr(err)
	var in struct {
		Required   []string
		Properties map[string]struct {
			Type  json.RawMessage
			Items struct {
				Required   []string
				Properties map[string]any
			}
		}
	}
	is.NoErr(json.Unmarshal(schema, &in))
	is.True(!slices.Contains(in.Required, "version_number"))
	is.True(strings.Contains(string(in.Properties["split"].Type), `"array"`))
	is.Equal(in.Properties["split"].Items.Required, []string{"version_number", "weight"})

	// A write key may not set a split, nor a deploy key on a protected
	// environment; nothing changes.
	writer := f.connect(t, writeKey, "")
	res, _ := call(t, writer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "production", "split": split})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "activate_version needs the deploy role"))
	res, _ = call(t, deployer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "canary", "split": split})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "admin"))
	is.Equal(records(), 1)

	res, out := call(t, deployer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "production", "split": split, "reason": "canary"})
	is.True(!res.IsError)
	is.Equal(out["version_number"], 2.0) // the first entry's
	is.Equal(out["split"], []any{map[string]any{"version_number": 2.0, "weight": 90.0}, map[string]any{"version_number": 3.0, "weight": 10.0}})
	ds, _, err := f.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(ds[0].Action, prompts.ActionSplit)
	is.Equal(*ds[0].Actor, "deployer")
	is.Equal(*ds[0].Reason, "canary")
	admin := f.connect(t, adminKey, "")
	res, _ = call(t, admin, "activate_version", map[string]any{"key": "demo/greeting", "environment": "canary", "split": split})
	is.True(!res.IsError) // admin may change a protected environment

	// A subject gets the version the split serves it.
	a, err := f.store.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	subjects := map[int]string{}
	for n := 0; len(subjects) < 2; n++ {
		s := "user-" + strconv.Itoa(n)
		if e := a.Split.Entry(p.ID, prompts.Production, s); subjects[e] == "" {
			subjects[e] = s
		}
	}
	reader := f.connect(t, readKey, "")
	for e, want := range []string{"Hi", "Hey"} {
		res, out = call(t, reader, "get_prompt", map[string]any{"key": "demo/greeting", "subject": subjects[e]})
		is.True(!res.IsError)
		is.Equal(out["version_number"], float64(e+2))
		is.Equal(out["content"], want+" {{name}}")
		is.Equal(len(out["split"].([]any)), 2)
		res, out = call(t, reader, "render_prompt", map[string]any{"key": "demo/greeting", "subject": subjects[e], "variables": map[string]any{"name": "Ada"}})
		is.True(!res.IsError)
		is.Equal(out["version_number"], float64(e+2))
		is.Equal(out["text"], want+" Ada")
	}
	res, out = call(t, reader, "get_prompt", map[string]any{"key": "demo/greeting"})
	is.True(!res.IsError)
	is.Equal(out["version_number"], 2.0) // without a subject, the first entry's

	// An MCP prompt cannot express a split, nor name a subject:
	// prompts/list and prompts/get serve the split's first entry.
	list, err := reader.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 1)
	is.Equal(list.Prompts[0].Name, "demo/greeting")
	got, err := reader.GetPrompt(ctx, &sdk.GetPromptParams{Name: "demo/greeting", Arguments: map[string]string{"name": "Ada"}})
	is.NoErr(err)
	is.Equal(got.Meta["version_number"], 2.0)
	is.Equal(got.Messages[0].Content.(*sdk.TextContent).Text, "Hi Ada")
	res, out = call(t, reader, "list_prompts", nil)
	is.True(!res.IsError)
	is.Equal(len(out["prompts"].([]any)[0].(map[string]any)["split"].([]any)), 2)
	res, _ = call(t, reader, "get_prompt", map[string]any{"key": "demo/greeting", "version": 1, "subject": "x"})
	is.True(res.IsError) // a subject picks in an environment only
	is.True(strings.Contains(text(res), "subject"))
	for _, tool := range []string{"get_prompt", "render_prompt"} {
		res, _ = call(t, reader, tool, map[string]any{"key": "demo/greeting", "subject": ""})
		is.True(res.IsError) // an empty subject is refused, as over HTTP (tool)
		is.Equal(text(res), "subject: must not be empty: omit it to be served the split's first entry")
	}
	res, out = call(t, reader, "get_prompt", map[string]any{"key": "demo/greeting", "subject": nil})
	is.True(!res.IsError)
	is.Equal(out["version_number"], 2.0) // null: no subject, the first entry's

	// A split that breaks a rule is refused naming its field; nothing
	// changes.
	before := records()
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"split": split[:1]}, "split"},
		{map[string]any{"split": []any{}}, "split"},
		{map[string]any{"split": []any{split[0], map[string]any{"version_number": 3, "weight": 0}}}, "split[1].weight"},
		{map[string]any{"split": []any{split[0], map[string]any{"version_number": 2, "weight": 5}}}, "split[1].version_number"},
		{map[string]any{"split": []any{split[0], map[string]any{"version_number": 0, "weight": 5}}}, "split[1].version_number: must be 1 to 2147483647"},
		{map[string]any{"split": split, "version_number": 2}, "split"},
		{map[string]any{}, "version_number: or split is required"},
		{map[string]any{"split": []any{split[0], map[string]any{"version_number": 9, "weight": 5}}}, "not found"},
	} {
		args := map[string]any{"key": "demo/greeting", "environment": "staging"}
		for k, v := range c.args {
			args[k] = v
		}
		res, err := deployer.CallTool(ctx, &sdk.CallToolParams{Name: "activate_version", Arguments: args})
		if err != nil {
			t.Errorf("%v: %v, want a tool error", c.args, err)
			continue
		}
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%v: %v %q, want an error with %q", c.args, res.IsError, text(res), c.want)
		}
	}
	is.Equal(records(), before)
}
