// Command genkit loads the prompts of a prompts server into Genkit
// (github.com/firebase/genkit/go) and renders one with Genkit, without
// calling a model: the server keeps the prompts, Genkit runs them.
//
//	go run . -url http://127.0.0.1:8080 -api-key KEY -project support-bot -prompt greeting -input '{"name":"Ada"}'
//	go run .   # without -url: a server of its own, in memory, with a few prompts
//
// It reads the project's prompts active in -environment (production)
// through package client, as .prompt files (promptfile.NewFS), and loads
// that file system alone into Genkit: genkit.Init without
// genkit.WithPromptFS loads ./prompts of the working directory too, and
// a file there with the name of one of the server's prompts panics
// ("action … already registered"); with it, Init loads its directory
// "prompts" (Genkit v1.4.0 refuses genkit.WithPromptDir alongside), so
// the example gives Init an empty one and loads the FS with
// genkit.LoadPromptDirFromFS(g, fsys, ".", ""). Genkit names a prompt by its
// file's name without the directory: the key support/greeting is the
// prompt greeting.
//
// A prompt that another includes ({{> KEY}}) is a partial file of the
// FS when its key has no '/'; Genkit cannot load a partial whose name
// has one from a file, so the example registers those with
// genkit.DefinePartial. The demo's prompt answer includes both kinds.
//
// It is a module of its own so that the prompts module does not depend on
// Genkit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"strings"
	"testing/fstest"

	"github.com/firebase/genkit/go/genkit"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/promptfile"
)

func main() {
	var c config
	flag.StringVar(&c.url, "url", os.Getenv("PROMPTS_URL"), "the prompts server's root; empty: start one in memory")
	flag.StringVar(&c.apiKey, "api-key", os.Getenv("PROMPTS_API_KEY"), "an API key with the role read")
	flag.StringVar(&c.project, "project", os.Getenv("PROMPTS_PROJECT"), "the project's slug")
	flag.StringVar(&c.env, "environment", "production", "the environment whose active versions are loaded")
	flag.StringVar(&c.prompt, "prompt", "greeting", "the prompt to render (Genkit's name: the key's last segment)")
	flag.StringVar(&c.input, "input", `{"name":"Ada"}`, "the prompt's input, a JSON object")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "genkit:", err)
		os.Exit(1)
	}
}

type config struct {
	url, apiKey, project, env, prompt, input string
}

// run loads the prompts into Genkit and writes the rendered request of
// one: its model, config and messages, as JSON.
func run(ctx context.Context, w io.Writer, c config) error {
	if c.url == "" {
		srv, err := demoServer(ctx)
		if err != nil {
			return err
		}
		defer srv.Close()
		c.url, c.apiKey, c.project = srv.URL, demoKey, "support-bot"
	}
	cl, err := client.New(c.url, c.apiKey)
	if err != nil {
		return err
	}
	projectID, err := projectBySlug(ctx, cl, c.project)
	if err != nil {
		return err
	}
	g, err := load(ctx, cl, projectID, prompts.Environment(c.env))
	if err != nil {
		return err
	}
	p := genkit.LookupPrompt(g, c.prompt)
	if p == nil {
		return fmt.Errorf("no prompt %q active in %s", c.prompt, c.env)
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(c.input), &input); err != nil {
		return fmt.Errorf("-input: %w", err)
	}
	req, err := p.Render(ctx, input)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"model": req.Model, "config": req.Config, "messages": req.Messages})
}

// load reads the prompts of a project active in env from store (here a
// client of a remote server) into a new Genkit, which loads them alone:
// no ./prompts of the working directory.
func load(ctx context.Context, store prompts.Store, projectID string, env prompts.Environment) (*genkit.Genkit, error) {
	fsys, err := promptfile.NewFS(ctx, store, projectID, env)
	if err != nil {
		return nil, err
	}
	// genkit.Init loads ./prompts of the working directory unless given
	// WithPromptFS, whose directory "prompts" it loads instead (v1.4.0
	// refuses WithPromptDir with it). Give it an empty one, and load the
	// FS, whose files are at its root, into the Genkit.
	g := genkit.Init(ctx, genkit.WithPromptFS(noPrompts))
	genkit.LoadPromptDirFromFS(g, fsys, ".", "")
	// Genkit names a partial file by its name alone: a key with a '/'
	// has no file, and is registered under the name templates use.
	for key, template := range fsys.Partials() {
		if strings.Contains(key, "/") {
			genkit.DefinePartial(g, key, template)
		}
	}
	return g, nil
}

func projectBySlug(ctx context.Context, cl *client.Client, slug string) (string, error) {
	f := prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		list, more, err := cl.ListProjects(ctx, f)
		if err != nil {
			return "", err
		}
		for _, p := range list {
			if p.Slug == slug || p.ID == slug {
				return p.ID, nil
			}
		}
		if !more || len(list) == 0 {
			return "", errors.New("no project " + slug)
		}
		f.After = list[len(list)-1].ID
	}
}

// noPrompts is a file system whose directory prompts is empty: for
// genkit.Init to load no prompt files of its own.
var noPrompts = fstest.MapFS{"prompts": {Mode: fs.ModeDir | 0o555}}

// demoServer is a prompts server in memory, without authentication, with
// the prompts of demoStore.
func demoServer(ctx context.Context) (*httptest.Server, error) {
	ms, _, err := demoStore(ctx)
	if err != nil {
		return nil, err
	}
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "demo", Role: httpapi.RoleRead, Secret: demoKey}); err != nil {
		return nil, err
	}
	return httptest.NewServer(httpapi.New(ms, httpapi.WithAuthenticator(keys))), nil
}

// demoStore is a memstore with the project support-bot and its prompts
// in production: support/greeting, and answer, which includes the
// partials signoff and support/signature.
func demoStore(ctx context.Context) (*memstore.Store, prompts.Project, error) {
	ms := memstore.New()
	p, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Support bot", Slug: "support-bot"})
	if err != nil {
		return nil, prompts.Project{}, err
	}
	for _, d := range []struct{ key, name, file string }{
		{"support/greeting", "Support greeting", greeting},
		{"signoff", "Sign-off", signoff},
		{"support/signature", "Support signature", signature},
		{"answer", "Answer", answer},
	} {
		f, err := promptfile.Parse([]byte(d.file))
		if err != nil {
			return nil, prompts.Project{}, err
		}
		pr, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: d.key, Name: d.name})
		if err != nil {
			return nil, prompts.Project{}, err
		}
		_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: f.Template, Metadata: f.Metadata,
			TemplateFormat: f.Format, Environments: []prompts.Environment{prompts.Production}})
		if err != nil {
			return nil, prompts.Project{}, err
		}
	}
	return ms, p, nil
}

// demoKey is the API key of the demo server.
const demoKey = "demo-key-0123456789"

const greeting = `---
model: googleai/gemini-2.5-flash
config:
  temperature: 0.2
input:
  schema:
    name: string
---
{{role "system"}}
You answer the customers of Acme, kindly and briefly.
{{role "user"}}
Hello, I am {{name}}.
`

// answer includes two partials: signoff, a file of the FS, and
// support/signature, which Genkit takes from genkit.DefinePartial.
const answer = `---
model: googleai/gemini-2.5-flash
input:
  schema:
    name: string
    question: string
---
{{role "system"}}
You answer the customers of Acme. {{> support/signature}}
{{role "user"}}
{{question}}
{{> signoff}}
`

const signoff = `---
description: The end of every user message.
---
Thanks, {{name}}.
`

const signature = `---
prompts.format: plain
---
Sign every answer "The Acme team".`
