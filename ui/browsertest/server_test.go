package browsertest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptkit/prompts/internal/testbin"
)

// A key of the server under test. The names are what the deployment
// history records as the actor.
type key struct {
	name, role, secret string
}

// server is cmd/promptsd running as a process, in memory (-data=).
type server struct {
	origin string // http://127.0.0.1:port
	keys   map[string]key
	out    *testbin.Buffer
}

var (
	listeningRe = regexp.MustCompile(`msg=listening addr=(http://[^/\s]+)/v1/integration`)
	readyRe     = regexp.MustCompile(`msg=ready `)
	printedKey  = regexp.MustCompile(`API key \(shown once\): (\S+)`)
	printedUI   = regexp.MustCompile(`Web UI: (http://\S+/ui/)`)
)

// roles are the key roles, each allowing what the one before allows.
var roles = []string{"read", "write", "deploy", "admin"}

// startServer runs the server with a keys file holding one key of each
// role (named rae-read, wes-write, dan-deploy, ann-admin), a project of
// each name in projects, and args. It stops the server when the test
// ends, and fails the test if the server reported a data race.
func startServer(t *testing.T, projects []string, args ...string) *server {
	t.Helper()
	s := &server{keys: map[string]key{}}
	dir := t.TempDir()
	var lines []string
	for _, role := range roles {
		k := key{name: map[string]string{"read": "rae", "write": "wes", "deploy": "dan", "admin": "ann"}[role] + "-" + role, role: role, secret: secret()}
		s.keys[role] = k
		lines = append(lines, k.name+":"+k.role+":"+k.secret)
	}
	keysFile := filepath.Join(dir, "keys")
	if err := os.WriteFile(keysFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"-keys", keysFile}, args...)
	for _, p := range projects {
		args = append(args, "-project", p)
	}
	s.start(t, args)
	return s
}

// startBare runs the server with no key at all: it makes one, an admin
// key, and prints it once.
func startBare(t *testing.T) (*server, string) {
	t.Helper()
	s := &server{keys: map[string]key{}}
	s.start(t, nil)
	m := printedKey.FindStringSubmatch(s.out.String())
	if m == nil {
		t.Fatalf("the server printed no key:\n%s", s.out.String())
	}
	s.keys["admin"] = key{name: "default", role: "admin", secret: m[1]}
	return s, m[1]
}

func (s *server) start(t *testing.T, args []string) {
	t.Helper()
	// No access log: the output is read for the address, the printed key
	// and data races.
	cmd := exec.Command(serverBin, append([]string{"-addr", "127.0.0.1:0", "-data=", "-webhooks=false", "-access-log=false"}, args...)...)
	s.out = &testbin.Buffer{}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if strings.Contains(s.out.String(), "WARNING: DATA RACE") {
			t.Errorf("the server reported a data race:\n%s", s.out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := s.out.String()
		if m := listeningRe.FindStringSubmatch(out); m != nil && readyRe.MatchString(out) {
			s.origin = m[1]
			return
		}
		select {
		case <-done:
			t.Fatalf("the server exited before it was ready:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not ready within a minute:\n%s", out)
		}
	}
}

func secret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// The resources of the HTTP interface, as far as the tests read them.
type (
	project struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	prompt struct {
		ID            string   `json:"id"`
		Key           string   `json:"key"`
		Name          string   `json:"name"`
		ActiveVersion *version `json:"active_version"`
	}
	version struct {
		ID            string          `json:"id"`
		VersionNumber int             `json:"version_number"`
		Content       string          `json:"content"`
		ChangeSummary *string         `json:"change_summary"`
		Metadata      json.RawMessage `json:"metadata_"`
	}
	deployment struct {
		Environment           string  `json:"environment"`
		Action                string  `json:"action"`
		VersionNumber         *int    `json:"version_number"`
		PreviousVersionNumber *int    `json:"previous_version_number"`
		Actor                 *string `json:"actor"`
		Reason                *string `json:"reason"`
	}
)

// api sends a request to the HTTP interface with the key of role, and
// decodes the answer into out (unless nil). It fails the test unless the
// status is want.
func (s *server) api(t *testing.T, role, method, path string, body any, want int, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		// As written: < and > stay themselves, not \u003c and \u003e.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(body); err != nil {
			t.Fatal(err)
		}
		r = &buf
	}
	req, err := http.NewRequest(method, s.origin+"/v1/integration"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.keys[role].secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// project returns the project named name, as the admin key sees it.
func (s *server) project(t *testing.T, name string) project {
	t.Helper()
	var ps []project
	s.api(t, "admin", "GET", "/projects", nil, 200, &ps)
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no project named %q in %v", name, ps)
	return project{}
}

// seed creates a prompt with a version of each content (numbered from 1),
// through the HTTP interface, and returns it.
func (s *server) seed(t *testing.T, projectID, key, name string, contents ...string) prompt {
	t.Helper()
	var p prompt
	s.api(t, "admin", "POST", "/prompts", map[string]any{"project_id": projectID, "key": key, "name": name}, 200, &p)
	for i, c := range contents {
		s.api(t, "admin", "POST", "/prompts/"+p.ID+"/versions", map[string]any{"content": c, "change_summary": fmt.Sprintf("draft %d", i+1)}, 200, nil)
	}
	return p
}

// activate makes version number active in env, through the HTTP interface.
func (s *server) activate(t *testing.T, promptID, env string, number int) {
	t.Helper()
	s.api(t, "admin", "PUT", "/prompts/"+promptID+"/environments/"+env, map[string]any{"version_number": number}, 200, nil)
}

// active returns the number of the version active in env, 0 for none.
func (s *server) active(t *testing.T, promptID, env string) int {
	t.Helper()
	var p prompt
	s.api(t, "admin", "GET", "/prompts/"+promptID+"?environment="+env, nil, 200, &p)
	if p.ActiveVersion == nil {
		return 0
	}
	return p.ActiveVersion.VersionNumber
}

// versions returns the prompt's versions, newest first.
func (s *server) versions(t *testing.T, promptID string) []version {
	t.Helper()
	var vs []version
	s.api(t, "admin", "GET", "/prompts/"+promptID+"/versions", nil, 200, &vs)
	return vs
}

// deployments returns the prompt's deployment records, newest first.
func (s *server) deployments(t *testing.T, promptID string) []deployment {
	t.Helper()
	var ds []deployment
	s.api(t, "admin", "GET", "/prompts/"+promptID+"/deployments", nil, 200, &ds)
	return ds
}

// state is what a refused action must leave as it was: the versions, the
// deployment records and what is active in each environment.
func (s *server) state(t *testing.T, promptID string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"versions":    s.versions(t, promptID),
		"deployments": s.deployments(t, promptID),
		"production":  s.active(t, promptID, "production"),
		"staging":     s.active(t, promptID, "staging"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
