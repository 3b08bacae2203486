package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
)

// mcpProcess starts "prompts mcp" as a real process against s, with key,
// and connects the SDK's client to it over stdio.
func mcpProcess(t *testing.T, s *server, key string, changed chan<- struct{}, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"mcp"}, args...)...)
	cmd.Env = []string{cliVar + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"PROMPTS_URL=" + s.URL, "PROMPTS_API_KEY=" + key, "PROMPTS_PROJECT=support-bot"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close() // closes stdin: the command exits
		if cmd.ProcessState != nil && !cmd.ProcessState.Success() {
			t.Errorf("prompts mcp exited with %v\n%s", cmd.ProcessState, stderr.String())
		}
	})
	return cs
}

func TestMCPOverStdio(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newServer(t, nil)
	desc := "greets"
	p, err := s.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: s.project.ID, Key: "greeting", Name: "Greeting", Description: &desc})
	is.NoErr(err)
	_, err = s.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}", Environments: []prompts.Environment{prompts.Staging}})
	is.NoErr(err)

	changed := make(chan struct{}, 10)
	cs := mcpProcess(t, s, adminKey, changed)
	list, err := cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 0) // active in staging only

	staging := mcpProcess(t, s, adminKey, make(chan struct{}, 10), "-environment", "staging")
	list, err = staging.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(list.Prompts[0].Name, "support-bot/greeting")
	is.Equal(list.Prompts[0].Description, "greets")
	got, err := staging.GetPrompt(ctx, &sdk.GetPromptParams{Name: "support-bot/greeting", Arguments: map[string]string{"name": "Ada"}})
	is.NoErr(err)
	is.Equal(got.Messages[0].Content.(*sdk.TextContent).Text, "Hello Ada")
	is.Equal(got.Meta["environment"], "staging")

	// A promotion through the server reaches the session as list_changed.
	_, err = s.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no list_changed after a promotion")
	}
	list, err = cs.ListPrompts(ctx, nil)
	is.NoErr(err)
	is.Equal(len(list.Prompts), 1)

	// The tools, with the key's role as the server judges it.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "render_prompt", Arguments: map[string]any{"key": "greeting", "variables": map[string]any{"name": "Bo"}}})
	is.NoErr(err)
	is.True(!res.IsError)
	writer := mcpProcess(t, s, writeKey, make(chan struct{}, 1))
	res, err = writer.CallTool(ctx, &sdk.CallToolParams{Name: "activate_version", Arguments: map[string]any{"key": "greeting", "environment": "staging", "version_number": 1}})
	is.NoErr(err)
	is.True(res.IsError)
	is.True(strings.Contains(res.Content[0].(*sdk.TextContent).Text, "deploy role"))
}

func TestMCPCommandLine(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	r := cli(t, s, nil, "mcp", "-environment", "nowhere")
	is.Equal(r.code, exitError)
	is.True(strings.Contains(r.stderr, `"nowhere"`))
	r = cli(t, s, []string{"PROMPTS_PROJECT=nope"}, "mcp")
	is.Equal(r.code, exitError)
	is.True(strings.Contains(r.stderr, `no project "nope"`))
	r = cli(t, nil, nil, "mcp", "-h")
	is.Equal(r.code, exitOK)
	is.True(strings.Contains(r.stdout, "Usage: prompts mcp -project SLUG [-environment ENV]"))
}
