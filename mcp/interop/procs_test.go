package interop_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
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

// server is cmd/promptsd running as a process, in memory (-data=), with a
// read key and an admin key, and a project demo.
type server struct {
	origin         string // http://127.0.0.1:port
	readKey, admin string
	out            *testbin.Buffer
}

var (
	listeningRe = regexp.MustCompile(`msg=listening addr=(http://[^/\s]+)/v1/integration`)
	readyRe     = regexp.MustCompile(`msg=ready `)
)

// startServer runs the server until the test ends, and fails the test if
// the server reported a data race.
func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{readKey: rand.Text(), admin: rand.Text(), out: &testbin.Buffer{}}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("rae-read:read:"+s.readKey+"\nann-admin:admin:"+s.admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// No access log: the output is read for the address and data races.
	cmd := exec.Command(serverBin, "-addr", "127.0.0.1:0", "-data=", "-webhooks=false", "-access-log=false", "-keys", keys, "-project", "demo")
	cmd.Stdout, cmd.Stderr = s.out, s.out
	done := run(t, cmd, s.out, "the server", func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
	deadline := time.After(60 * time.Second)
	for {
		out := s.out.String()
		if m := listeningRe.FindStringSubmatch(out); m != nil && readyRe.MatchString(out) {
			s.origin = m[1]
			return s
		}
		select {
		case <-done:
			t.Fatalf("the server exited before it was ready:\n%s", out)
		case <-deadline:
			t.Fatalf("the server was not ready within a minute:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// run starts cmd, and when the test ends stops it (stop, then after 20
// seconds SIGKILL) and fails the test if out shows a data race. The
// channel it returns is closed when cmd has exited.
func run(t *testing.T, cmd *exec.Cmd, out *testbin.Buffer, what string, stop func()) <-chan struct{} {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if strings.Contains(out.String(), "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race:\n%s", what, out.String())
		}
	})
	return done
}

// api sends a request to the HTTP interface with the admin key, and
// decodes the answer into out (unless nil). It fails the test unless the
// status is 200.
func (s *server) api(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.origin+"/v1/integration"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d: %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// seed creates a prompt in the project demo (with a description unless
// "") with one version, active in envs, and returns the prompt's id.
func (s *server) seed(t *testing.T, key, description string, version map[string]any, envs ...string) string {
	t.Helper()
	var projects []struct{ ID string }
	s.api(t, "GET", "/projects", nil, &projects)
	prompt := map[string]any{"project_id": projects[0].ID, "key": key, "name": key}
	if description != "" {
		prompt["description"] = description
	}
	var p struct{ ID string }
	s.api(t, "POST", "/prompts", prompt, &p)
	version["environments"] = envs
	s.api(t, "POST", "/prompts/"+p.ID+"/versions", version, nil)
	return p.ID
}

// active returns the number of the prompt's version active in env, 0 for
// none.
func (s *server) active(t *testing.T, promptID, env string) int {
	t.Helper()
	var p struct {
		ActiveVersion *struct {
			VersionNumber int `json:"version_number"`
		} `json:"active_version"`
	}
	s.api(t, "GET", "/prompts/"+promptID+"?environment="+env, nil, &p)
	if p.ActiveVersion == nil {
		return 0
	}
	return p.ActiveVersion.VersionNumber
}

// client is client.mjs running in node: the TypeScript SDK's client, one
// step a line.
type client struct {
	in     io.WriteCloser
	lines  chan string     // its answers
	stderr *testbin.Buffer // node's, and the stdio command's
}

// stepError is a step's failure as client.mjs describes it: an McpError's
// code is JSON-RPC's, a StreamableHTTPError's the HTTP status.
type stepError struct {
	Name    string `json:"name"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// startClient runs client.mjs with args (http URL [HEADER]... or stdio
// COMMAND [ARG]...) and env until the test ends.
func startClient(t *testing.T, env []string, args ...string) *client {
	t.Helper()
	cmd := exec.Command(nodeBin, append([]string{"client.mjs"}, args...)...)
	// Only what the test gives: the developer's PROMPTS_* stay out.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	c := &client{lines: make(chan string, 1), stderr: &testbin.Buffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Stopped by the end of its stdin: client.mjs then ends its session
	// (and the command it ran) and exits.
	run(t, cmd, c.stderr, "client.mjs (or the command it ran)", func() { c.in.Close() })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// step runs one step of client.mjs (op, with fields) and returns its
// result, or its error.
func (c *client) step(t *testing.T, op string, fields map[string]any) (json.RawMessage, *stepError) {
	t.Helper()
	msg := map[string]any{"op": op}
	for k, v := range fields {
		msg[k] = v
	}
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("%s: %v\n%s", op, err, c.stderr.String())
	}
	var line string
	var ok bool
	select {
	case line, ok = <-c.lines:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no answer within a minute\n%s", op, c.stderr.String())
	}
	if !ok {
		t.Fatalf("%s: client.mjs exited\n%s", op, c.stderr.String())
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *stepError      `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &answer); err != nil {
		t.Fatalf("%s: %v: %s", op, err, line)
	}
	return answer.Result, answer.Error
}

// result runs a step that must succeed, and decodes its result into out.
func (c *client) result(t *testing.T, op string, fields map[string]any, out any) {
	t.Helper()
	res, serr := c.step(t, op, fields)
	if serr != nil {
		t.Fatalf("%s %v: %s %d: %s\n%s", op, fields, serr.Name, serr.Code, serr.Message, c.stderr.String())
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatalf("%s: %v: %s", op, err, res)
	}
}

// fails runs a step that must fail, and returns its error.
func (c *client) fails(t *testing.T, op string, fields map[string]any) stepError {
	t.Helper()
	res, serr := c.step(t, op, fields)
	if serr == nil {
		t.Fatalf("%s %v: succeeded: %s", op, fields, res)
	}
	return *serr
}
