package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// prompts env lists, adds, protects and removes a project's environments,
// and every command's -environment takes the project's.
func TestEnv(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "greeting", "G", nil, "", []string{"Hi {{name}}"}, nil)

	r := cli(t, s, nil, "env", "list")
	is.Equal(r.code, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	is.Equal(len(lines), 3) // a header, production, staging
	is.True(strings.HasPrefix(lines[1], "production"))

	r = cli(t, s, nil, "env", "put", "canary", "-protected")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "canary: protected"))
	l, err := s.store.ListEnvironments(context.Background(), s.project.ID)
	is.NoErr(err)
	is.Equal(len(l), 3)
	is.Equal(l[2], prompts.ProjectEnvironment{Name: "canary", Protected: true, CreatedAt: l[2].CreatedAt})

	r = cli(t, s, nil, "promote", "greeting", "-version", "1", "-environment", "canary")
	is.Equal(r.code, 0) // an admin key may change a protected environment
	r = cli(t, s, nil, "get", "greeting", "-environment", "canary")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "Hi {{name}}")
	r = cli(t, s, nil, "get", "greeting", "-environment", "eu")
	is.Equal(r.code, 1) // not one of the project's: the server lists them
	is.True(strings.Contains(r.stderr, "production, staging, canary"))
	is.Equal(cli(t, s, nil, "get", "greeting", "-environment", "Canary").code, 1) // malformed

	r = cli(t, s, nil, "env", "rm", "canary")
	is.Equal(r.code, 1)                                                                      // something is active there
	is.Equal(cli(t, s, []string{"PROMPTS_API_KEY=" + writeKey}, "env", "put", "eu").code, 1) // needs admin
	r = cli(t, s, nil, "env", "list", "-json")
	is.Equal(r.code, 0)
	var out []api.Environment
	is.NoErr(json.Unmarshal([]byte(r.stdout), &out))
	is.Equal(len(out), 3)
	is.Equal(out[2].Name, prompts.Environment("canary"))

	r = cli(t, s, nil, "env", "put")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "the environment's NAME is required"))
	is.Equal(cli(t, s, nil, "env", "drop", "x").code, 1)
	is.Equal(cli(t, s, nil, "env").code, 1)
	is.Equal(cli(t, s, nil, "env", "rm", "production").code, 1) // built in
}
