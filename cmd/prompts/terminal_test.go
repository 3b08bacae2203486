package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/client"
)

// get prints the content as it is on standard output, and which version
// of which environment on standard error; flags go before or after the
// key.
func TestGet(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "support/greeting", "G", nil, `{"model":"gpt-5"}`, []string{"Hi {{name}}", "Hello {{name}}\n\n"},
		map[prompts.Environment]int{prompts.Production: 1, prompts.Staging: 2})

	r := cli(t, s, nil, "get", "support/greeting")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "Hi {{name}}") // production by default, byte for byte
	is.True(strings.Contains(r.stderr, "version 1") && strings.Contains(r.stderr, "production"))

	for _, args := range [][]string{
		{"get", "support/greeting", "-environment", "staging"},
		{"get", "-environment", "staging", "support/greeting"},
		{"get", "-environment=staging", "--", "support/greeting"},
	} {
		r = cli(t, s, nil, args...)
		is.Equal(r.code, 0)
		is.Equal(r.stdout, "Hello {{name}}\n\n") // staging's
		is.True(strings.Contains(r.stderr, "version 2") && strings.Contains(r.stderr, "staging"))
	}
	r = cli(t, s, nil, "get", "support/greeting", "-version", "2")
	is.Equal(r.stdout, "Hello {{name}}\n\n") // by number

	r = cli(t, s, nil, "get", "support/greeting", "-json", "-environment", "staging")
	is.Equal(r.code, 0)
	var ans map[string]any
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans["version"], 2.0)
	is.Equal(ans["environment"], "staging")
	is.Equal(ans["content"], "Hello {{name}}\n\n")
	is.Equal(ans["metadata_"], map[string]any{"model": "gpt-5"})

	is.Equal(cli(t, s, nil, "get", "nope").code, 1)                                    // unknown key
	is.Equal(cli(t, s, nil, "get", "support/greeting", "-version", "9").code, 1)       // unknown version
	is.Equal(cli(t, s, nil, "get", "support/greeting", "-environment", "dev").code, 1) // unknown environment
	is.Equal(cli(t, s, nil, "get", "support/greeting", "-version", "1", "-environment", "staging").code, 1)
	is.Equal(cli(t, s, nil, "get", "support/greeting", "other").code, 1) // one key only
	s.seed(t, "idle", "Idle", nil, "", []string{"x"}, nil)
	r = cli(t, s, nil, "get", "idle")
	is.Equal(r.code, 1) // nothing active in production
	is.True(strings.Contains(r.stderr, "production"))
}

func TestRender(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "greeting", "G", nil, "", []string{"Hi {{name}} from {{ team }}\n"}, map[prompts.Environment]int{prompts.Staging: 1})
	r := cli(t, s, nil, "render", "greeting", "-environment", "staging", "-var", "name=Ann", "-var", "team=a=b")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "[user]\nHi Ann from a=b\n") // a plain version: one user message
	is.True(strings.Contains(r.stderr, "version 1") && strings.Contains(r.stderr, "staging"))

	r = cli(t, s, nil, "render", "greeting", "-version", "1", "-var", "name=Ann")
	is.Equal(r.code, 1) // a variable without a value
	is.True(strings.Contains(r.stderr, "team"))
	r = cli(t, s, nil, "render", "greeting", "-version", "1", "-var", "name=Ann", "-var", "team=T", "-var", "x=1")
	is.Equal(r.code, 1) // a value for no variable
	is.True(strings.Contains(r.stderr, "x"))
	is.Equal(cli(t, s, nil, "render", "greeting", "-var", "novalue").code, 1)

	r = cli(t, s, nil, "render", "greeting", "-version", "1", "-var", "name=Ann", "-var", "team=T", "-json")
	is.Equal(r.code, 0)
	var ans map[string]any
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans["text"], "Hi Ann from T\n")
	is.Equal(ans["version"], 1.0)
	is.Equal(ans["environment"], nil) // read by number
	is.Equal(ans["template_format"], "plain")
	is.Equal(len(ans["messages"].([]any)), 1)
}

// A dotprompt version renders to its messages, each after its role, with
// the control characters of values escaped.
func TestRenderDotprompt(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	p := s.seed(t, "chat", "Chat", nil, "", nil, nil)
	_, err := s.store.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt,
		Content: "\n{{role \"system\"}}Be kind.\n{{role \"user\"}}I am {{name}}.{{media url=\"https://x/a.png\"}}\n\n", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	r := cli(t, s, nil, "render", "chat", "-var", "name=A\x1b[31mnn")
	is.Equal(r.stderr, "chat  version 1  (production)\n")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "[system]\nBe kind.\n\n[user]\nI am A\\x1b[31mnn.[media https://x/a.png]\n")
	r = cli(t, s, nil, "render", "chat", "-json")
	is.Equal(r.code, 0)
	var ans struct {
		Format   string `json:"template_format"`
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans.Format, "dotprompt")
	is.Equal(len(ans.Messages), 2)
	is.Equal(ans.Messages[1].Content[1]["media"], map[string]any{"url": "https://x/a.png"})
}

// promote and rollback change what an environment points at, with the
// reason, under the promotion guard; history shows it, newest first.
func TestPromoteRollbackHistory(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "greeting", "G", nil, "", []string{"Hi {{name}}", "Hello {{name}}", "Hello {{name}} from {{team}}"}, map[prompts.Environment]int{prompts.Production: 1})

	r := cli(t, s, nil, "promote", "greeting", "-version", "2", "-environment", "production", "-reason", "better")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "version 2") && strings.Contains(r.stdout, "production"))
	is.Equal(s.state(t)["greeting"].Active[prompts.Production], 2)
	d := s.deployments(t, "greeting")[0]
	is.Equal(*d.Reason, "better")
	is.Equal(*d.Actor, "ci")

	before := s.state(t)
	r = cli(t, s, nil, "promote", "greeting", "-version", "2", "-environment", "production", "-json")
	is.Equal(r.code, 0) // already active: nothing to do
	var ans map[string]any
	is.NoErr(json.Unmarshal([]byte(r.stdout), &ans))
	is.Equal(ans["changed"], false)
	is.Equal(s.state(t), before)

	r = cli(t, s, nil, "promote", "greeting", "-version", "3", "-environment", "production")
	is.Equal(r.code, 1) // the guard: {{team}} is new
	is.True(strings.Contains(r.stderr, "-allow-variable-change"))
	is.Equal(s.state(t), before)
	is.Equal(cli(t, s, nil, "promote", "greeting", "-version", "3", "-environment", "production", "-allow-variable-change").code, 0)

	is.Equal(cli(t, s, nil, "promote", "greeting", "-version", "9", "-environment", "production").code, 1)
	is.Equal(cli(t, s, nil, "promote", "greeting", "-version", "2").code, 1)                                                                   // -environment is required
	is.Equal(cli(t, s, nil, "promote", "greeting", "-environment", "production").code, 1)                                                      // and -version
	is.Equal(cli(t, s, []string{"PROMPTS_API_KEY=" + writeKey}, "promote", "greeting", "-version", "1", "-environment", "production").code, 1) // a write key may not

	r = cli(t, s, nil, "rollback", "greeting", "-environment", "production", "-reason", "oops", "-allow-variable-change")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "version 2"))
	is.Equal(s.state(t)["greeting"].Active[prompts.Production], 2)                      // back where it was
	is.Equal(cli(t, s, nil, "rollback", "greeting", "-environment", "staging").code, 1) // nothing to roll back to

	r = cli(t, s, nil, "history", "greeting")
	is.Equal(r.code, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	is.Equal(len(lines), 5) // a header and four records
	is.True(strings.Contains(lines[0], "ENVIRONMENT"))
	is.True(strings.Contains(lines[1], "rollback") && strings.Contains(lines[1], "oops"))
	r = cli(t, s, nil, "history", "greeting", "-limit", "2", "-json")
	is.Equal(r.code, 0)
	var h struct {
		Key         string           `json:"key"`
		Deployments []api.Deployment `json:"deployments"`
	}
	is.NoErr(json.Unmarshal([]byte(r.stdout), &h))
	is.Equal(len(h.Deployments), 2)
	is.Equal(h.Deployments[0].Action, prompts.ActionRollback)
	r = cli(t, s, nil, "history", "-environment", "staging", "greeting")
	is.Equal(r.code, 0) // no record there
	is.True(!strings.Contains(r.stdout, "production"))
}

// A reason from the server that holds a line break or an escape sequence
// stays in its cell.
func TestHistoryTableHoldsControlCharacters(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	p := s.seed(t, "k", "K", nil, "", []string{"x"}, nil)
	_, err := s.store.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1),
		Change: prompts.Change{Reason: "two\nlines \x1b[31mred"}})
	is.NoErr(err)
	r := cli(t, s, nil, "history", "k")
	is.Equal(r.code, 0)
	is.Equal(strings.Count(r.stdout, "\n"), 2) // a header and one line
	is.True(!strings.Contains(r.stdout, "\x1b"))
}

func TestSnapshot(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "a", "A", nil, "", []string{"one", "two"}, map[prompts.Environment]int{prompts.Production: 1, prompts.Staging: 2})
	file := filepath.Join(t.TempDir(), "prompts.snapshot.json")
	r := cli(t, s, nil, "snapshot", "-o", file)
	is.Equal(r.code, 0)
	is.True(strings.HasPrefix(r.stdout, "wrote "+file+": 1 prompt of project support-bot, taken ")) // not "1 prompts"
	data, err := os.ReadFile(file)
	is.NoErr(err)
	snap, err := client.ParseSnapshot(data)
	is.NoErr(err) // what cache.WithFallback takes
	is.Equal(snap.Project.Slug, "support-bot")
	is.Equal(len(snap.Prompts), 1)
	is.Equal(snap.Prompts[0].ActiveIn(prompts.Production).ActiveVersion.Content, "one")
	is.Equal(snap.Prompts[0].ActiveIn(prompts.Staging).ActiveVersion.Content, "two")

	r = cli(t, s, nil, "snapshot", "-o", "-")
	is.Equal(r.code, 0)
	_, err = client.ParseSnapshot([]byte(r.stdout))
	is.NoErr(err)                                // to standard output
	is.Equal(cli(t, s, nil, "snapshot").code, 1) // -o is required
	is.Equal(cli(t, s, nil, "snapshot", "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "f")).code, 1)
}

// export refuses a key that would name a file outside the directory, and
// writes the others.
func TestExportStaysInItsDirectory(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "a/../../escape", "E", nil, "", []string{"x"}, nil)
	s.seed(t, "fine", "F", nil, "", []string{"y"}, nil)
	parent := t.TempDir()
	dir := filepath.Join(parent, "prompts", "here")
	r := cli(t, s, nil, "export", "-dir", dir)
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "a/../../escape"))
	is.Equal(readFiles(t, parent), map[string]string{"prompts/here/fine.prompt": "---\nname: F\nprompts.format: plain\n---\ny"})
}

// The server, the key and the project come from the flags, else from
// the environment; without them the message says what to set.
func TestConfiguration(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	s.seed(t, "a", "A", nil, "", []string{"one"}, map[prompts.Environment]int{prompts.Production: 1})

	r := cli(t, nil, nil, "get", "a")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "PROMPTS_URL") && strings.Contains(r.stderr, "PROMPTS_API_KEY"))
	r = cli(t, nil, []string{"PROMPTS_URL=" + s.URL}, "get", "a")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "PROMPTS_API_KEY"))
	r = cli(t, nil, []string{"PROMPTS_URL=" + s.URL, "PROMPTS_API_KEY=" + adminKey}, "get", "a")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "PROMPTS_PROJECT"))

	r = cli(t, nil, nil, "get", "a", "-url", s.URL, "-api-key", adminKey, "-project", "support-bot")
	is.Equal(r.code, 0) // all by flags
	is.Equal(r.stdout, "one")
	r = cli(t, s, []string{"PROMPTS_URL=http://127.0.0.1:1", "PROMPTS_PROJECT=other"}, "get", "a", "-url", s.URL+"/v1/integration/", "-project", s.project.ID)
	is.Equal(r.code, 0) // flags win; the project by id; a URL with the interface's path
	is.Equal(r.stdout, "one")

	r = cli(t, s, []string{"PROMPTS_API_KEY=wrong-key-0123456789"}, "get", "a")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "API key"))
	r = cli(t, s, []string{"PROMPTS_PROJECT=nope"}, "get", "a")
	is.Equal(r.code, 1)
	is.True(strings.Contains(r.stderr, "support-bot")) // names the projects the key sees
	is.Equal(cli(t, s, []string{"PROMPTS_URL=ftp://x"}, "get", "a").code, 1)

	for _, c := range commands() {
		r := cli(t, nil, nil, c.name, "-h")
		is.Equal(r.code, 0) // -h per command
		is.True(strings.HasPrefix(r.stdout, "Usage: prompts "+c.name+" "))
		is.True(strings.Contains(r.stdout, "-api-key"))
		r = cli(t, nil, nil, c.name, "-no-such-flag")
		is.Equal(r.code, 1) // a bad command line is 1, never 2
		is.True(strings.Contains(r.stderr, "no-such-flag"))
	}
	r = cli(t, nil, nil, "-h")
	is.Equal(r.code, 0)
	is.True(strings.Contains(r.stdout, "apply"))
	is.Equal(cli(t, nil, nil).code, 1)
	is.Equal(cli(t, nil, nil, "nope").code, 1)
}

// render renders as the server does: partials at the versions active in
// the environment rendered (production for -version N), a value only a
// partial reads is used, and -var gives JSON for a variable the input
// schema types other than string (-json-var for any).
func TestRenderPartialsAndTypedValues(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	ctx := t.Context()
	dotprompt := func(key, content string, md prompts.Metadata, envs ...prompts.Environment) {
		p := s.seed(t, key, key, nil, "", nil, nil)
		_, err := s.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, TemplateFormat: prompts.FormatDotprompt,
			Content: content, Metadata: md, Environments: envs})
		is.NoErr(err)
	}
	dotprompt("x-y.z_1", "from {{who}}", "", prompts.Production, prompts.Staging)
	dotprompt("usek2", "U {{> x-y.z_1}}", "", prompts.Production, prompts.Staging)
	r := cli(t, s, nil, "render", "usek2", "-var", "who=Ann")
	is.Equal(r.stderr, "usek2  version 1  (production)\n")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "[user]\nU from Ann\n") // the partial included, its variable used
	r = cli(t, s, nil, "render", "usek2", "-version", "1", "-var", "who=Ann")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "[user]\nU from Ann\n")
	r = cli(t, s, nil, "render", "usek2", "-var", "who=Ann", "-var", "nobody=1")
	is.Equal(r.code, 1) // a value nothing reads
	is.True(strings.Contains(r.stderr, "the version uses no nobody"))

	dotprompt("typed", "{{#if on}}{{n}}{{#each tags}} {{this}}{{/each}} {{name}}{{/if}}",
		`{"input":{"schema":{"n":"integer","on":"boolean","tags(array)":"string","name":"string","obj?(object)":{"a":"integer"}}}}`, prompts.Production)
	r = cli(t, s, nil, "render", "typed", "-var", "n=3", "-var", "on=true", "-var", `tags=["a","b"]`, "-var", "name=3")
	is.Equal(r.stderr, "typed  version 1  (production)\n")
	is.Equal(r.code, 0)
	is.Equal(r.stdout, "[user]\n3 a b 3\n") // integer, boolean and array as JSON, the string as given
	r = cli(t, s, nil, "render", "typed", "-var", "n=three", "-var", "on=true", "-var", "tags=[]", "-var", "name=x")
	is.Equal(r.code, 1) // not JSON for an integer
	is.True(strings.Contains(r.stderr, "-var n: the input schema types n as integer"))
	r = cli(t, s, nil, "render", "typed", "-var", "n=3.5", "-var", "on=true", "-var", "tags=[]", "-var", "name=x")
	is.Equal(r.code, 1) // JSON, but of the wrong type: the schema says so
	is.True(strings.Contains(r.stderr, "n ") && !strings.Contains(r.stderr, "uses no"))
	r = cli(t, s, nil, "render", "typed", "-var", "n=3", "-var", "on=true", "-var", "tags=[]", "-var", "name=x", "-json-var", `obj={"a":1}`)
	is.Equal(r.code, 0) // -json-var: JSON whatever the schema
	is.Equal(r.stdout, "[user]\n3 x\n")
	is.Equal(cli(t, s, nil, "render", "typed", "-json-var", "n=x").code, 1)                // not JSON
	is.Equal(cli(t, s, nil, "render", "typed", "-var", "n=1", "-json-var", "n=1").code, 1) // given twice
}
