package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// The tools take the project's environments, and a protected one changes
// only by an admin key's call: the Store refuses the others.
func TestToolsAndProtectedEnvironments(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	f := newFixture(t)
	f.prompt(t, f.demo.ID, "greeting", "Hello {{name}}", "", "")
	_, err := f.store.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: f.demo.ID, Name: "canary", Protected: true})
	is.NoErr(err)

	deployer := f.connect(t, deployKey, "")
	res, _ := call(t, deployer, "activate_version", map[string]any{"key": "demo/greeting", "environment": "canary", "version_number": 1})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "admin")) // refused, naming the role that may
	res, _ = call(t, deployer, "create_version", map[string]any{"key": "demo/greeting", "content": "Hi {{name}}", "environments": []string{"canary"}})
	is.True(res.IsError)
	res, _ = call(t, deployer, "get_prompt", map[string]any{"key": "demo/greeting", "environment": "eu"})
	is.True(res.IsError)
	is.True(strings.Contains(text(res), "production, staging, canary")) // the project's environments

	f.prompt(t, f.other.ID, "elsewhere", "Bye", "", "")
	res, out := call(t, deployer, "list_prompts", map[string]any{"environment": "canary"})
	is.True(!res.IsError) // the prompts of the projects that have it
	is.Equal(len(out["prompts"].([]any)), 1)
	res, _ = call(t, deployer, "list_prompts", map[string]any{"environment": "canary", "project": "other"})
	is.True(res.IsError) // a project without it, named

	admin := f.connect(t, adminKey, "")
	res, out = call(t, admin, "activate_version", map[string]any{"key": "demo/greeting", "environment": "canary", "version_number": 1})
	is.True(!res.IsError)
	is.Equal(out["version_number"], float64(1))
	res, out = call(t, deployer, "get_prompt", map[string]any{"key": "demo/greeting", "environment": "canary"})
	is.True(!res.IsError) // reads are as for any environment
	is.Equal(out["content"], "Hello {{name}}")
}
