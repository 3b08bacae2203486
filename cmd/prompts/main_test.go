package main

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// The tests run the command as a real process, as CI runs it: the test
// binary re-executed with cliVar set runs main.
const cliVar = "PROMPTS_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(cliVar) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The secrets of the test servers' keys.
const (
	adminKey = "admin-key-0123456789"
	writeKey = "write-key-0123456789"
)

// server is the HTTP interface over a fresh memstore, with one project,
// behind a real HTTP server.
type server struct {
	store   *memstore.Store
	project prompts.Project
	URL     string
}

// newServer starts a server with the project "support-bot"; wrap, when
// not nil, stands in front of the handler.
func newServer(t testing.TB, wrap func(http.Handler) http.Handler) *server {
	t.Helper()
	ms := memstore.New()
	keys := httpapi.NewKeys()
	for _, k := range []httpapi.Key{
		{Name: "ci", Role: httpapi.RoleAdmin, Secret: adminKey},
		{Name: "writer", Role: httpapi.RoleWrite, Secret: writeKey},
	} {
		if err := keys.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	h := httpapi.New(ms, httpapi.WithAuthenticator(httpapi.NewStoreKeys(keys, ms)))
	var root http.Handler = h
	if wrap != nil {
		root = wrap(h)
	}
	srv := httptest.NewServer(root)
	t.Cleanup(srv.Close)
	t.Cleanup(h.CloseStreams)
	p, err := ms.CreateProject(context.Background(), prompts.NewProject{Name: "Support bot", Slug: "support-bot"})
	if err != nil {
		t.Fatal(err)
	}
	return &server{store: ms, project: p, URL: srv.URL}
}

// result is what a run of the command did.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the command with args, against s (by the environment, as CI
// sets it) when s is not nil, with extra environment variables.
func cli(t testing.TB, s *server, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{cliVar + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	if s != nil {
		cmd.Env = append(cmd.Env, "PROMPTS_URL="+s.URL, "PROMPTS_API_KEY="+adminKey, "PROMPTS_PROJECT=support-bot")
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// writeFiles writes files (path: content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readFiles returns every file under dir, by slash-separated path.
func readFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// state is what a server holds of a project's prompts, by key, in a form
// two servers can be compared by: no ids, no times.
type state map[string]promptState

type promptState struct {
	Name        string
	Description *string
	Versions    int
	Latest      prompts.PromptVersion // its content, metadata and change summary
	Active      map[prompts.Environment]int
	Revision    int64
}

func (s *server) state(t testing.TB) state {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	list, _, err := s.store.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{s.project.ID}, Page: prompts.Page{Limit: prompts.MaxLimit}})
	is.NoErr(err)
	out := state{}
	for _, p := range list {
		ps := promptState{Name: p.Name, Description: p.Description, Active: map[prompts.Environment]int{}, Revision: p.Revision}
		vs, _, err := s.store.ListVersions(ctx, p.ID, prompts.Page{Limit: prompts.MaxLimit})
		is.NoErr(err)
		ps.Versions = len(vs)
		if len(vs) > 0 {
			ps.Latest = vs[0]
			ps.Latest.ID, ps.Latest.PromptID, ps.Latest.CreatedAt = "", "", time.Time{}
		}
		for _, env := range prompts.Environments {
			a, err := s.store.GetActive(ctx, p.ID, env)
			is.NoErr(err)
			if a.ActiveVersion != nil {
				ps.Active[env] = a.ActiveVersion.VersionNumber
			}
		}
		out[p.Key] = ps
	}
	return out
}

// seed adds a prompt with versions of these contents (metadata, when
// given, for the last), active where envs say (env: version number).
func (s *server) seed(t testing.TB, key, name string, desc *string, metadata prompts.Metadata, contents []string, active map[prompts.Environment]int) prompts.Prompt {
	t.Helper()
	ctx := context.Background()
	p, err := s.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: s.project.ID, Key: key, Name: name, Description: desc})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range contents {
		in := prompts.NewVersion{PromptID: p.ID, Content: c}
		if i == len(contents)-1 {
			in.Metadata = metadata
		}
		if _, err := s.store.CreateVersion(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for env, n := range active {
		if _, err := s.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(n)}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// deployments lists a prompt's records, newest first.
func (s *server) deployments(t testing.TB, key string) []prompts.Deployment {
	t.Helper()
	ctx := context.Background()
	a, err := s.store.GetActiveByKey(ctx, s.project.ID, key, prompts.Production)
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := s.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: a.ID, Page: prompts.Page{Limit: prompts.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func keys(s state) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func ptr[T any](v T) *T { return &v }
