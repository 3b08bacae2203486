package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/mcp"
)

// runMCP is "prompts mcp -project SLUG [-environment ENV]": the project's
// prompts over the Model Context Protocol on stdin and stdout (package
// mcp over package client), for a desktop client that starts it. The key
// is the server's to judge: what its role does not allow, the server
// refuses, and the tool's error names the role needed. Logs, at warn and
// above, go to stderr, which such clients keep.
func runMCP(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "mcp", true)
	envName := f.String("environment", "production", "the environment whose active versions are the prompts")
	if _, code, ok := f.parse(args, 0); !ok {
		return code
	}
	env, err := environment(*envName)
	if err != nil {
		return f.bad("%v", err)
	}
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := mcp.New(cl, mcp.WithEnvironment(env), mcp.WithLogger(logger))
	t := &sdk.IOTransport{Reader: os.Stdin, Writer: nopCloser{e.stdout}}
	// The server checks the key's role and projects; the session sees the
	// one project.
	access := httpapi.Access{Role: httpapi.RoleAdmin, ProjectIDs: []string{project.ID}}
	if err := h.Serve(ctx, t, access); err != nil && ctx.Err() == nil {
		return e.errorf("mcp: %s", describe(err))
	}
	return exitOK
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
