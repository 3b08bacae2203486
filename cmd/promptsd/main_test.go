package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/internal/testbin"
)

// The tests run the server as a real process: the test binary re-executed
// with serverVar set runs main.
const serverVar = "PROMPTS_SERVER_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(serverVar) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// server is a running server process.
type server struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port/v1/integration
	key  string
	done chan error
	out  *testbin.Buffer
}

var (
	listeningRe = regexp.MustCompile(`msg=listening addr=(https?://\S+)`)
	keyRe       = regexp.MustCompile(`API key \(shown once\): (\S+)`)
	readyRe     = regexp.MustCompile(`msg=ready `)
)

// start runs the server with args and env and waits until it is ready
// (its store open). The process is killed when the test ends, if it
// still runs.
func start(t testing.TB, env []string, args ...string) *server {
	t.Helper()
	s := launch(t, env, args...)
	s.waitLog(t, readyRe)
	if m := keyRe.FindStringSubmatch(s.out.String()); m != nil {
		s.key = m[1]
	}
	return s
}

// launch runs the server with args and env and waits until it listens.
func launch(t testing.TB, env []string, args ...string) *server {
	t.Helper()
	// In memory unless the test says otherwise: no file in the package's
	// directory.
	return launchIn(t, "", env, append([]string{"-data="}, args...)...)
}

// launchIn runs the server in the working directory dir ("": the test's)
// with args and env, and waits until it listens.
func launchIn(t testing.TB, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), serverVar+"=1")
	cmd.Env = append(cmd.Env, env...)
	// One writer for both: the process gets one pipe for its stdout and
	// stderr, so that the output keeps its order (the key printed on
	// stdout comes before the "ready" logged on stderr).
	out := &testbin.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1), out: out}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	m := s.waitLog(t, listeningRe)
	s.base = m[1]
	return s
}

// waitLog waits until the server's output matches re, and returns the
// match. It fails the test when the server exits first.
func (s *server) waitLog(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(s.out.String()); m != nil {
			return m
		}
		select {
		case err := <-s.done:
			s.done <- err
			if m := re.FindStringSubmatch(s.out.String()); m != nil {
				return m
			}
			t.Fatalf("server exited before %q: %v\n%s", re, err, s.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("server never wrote %q:\n%s", re, s.out.String())
	return nil
}

// call sends a request and decodes the JSON answer into out (when not nil).
func (s *server) call(t testing.TB, method, path, body string, out any) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.key)
	if body != "" {
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
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp
}

// stop sends SIGTERM and returns the process's exit error.
func (s *server) stop(t testing.TB) error {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop on SIGTERM")
		return nil
	}
}

type project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type prompt struct {
	ID            string `json:"id"`
	Key           string `json:"key"`
	ActiveVersion *struct {
		VersionNumber int    `json:"version_number"`
		Content       string `json:"content"`
	} `json:"active_version"`
}

func TestServerWalkThrough(t *testing.T) {
	is := is.New(t)
	s := start(t, nil)
	is.True(s.key != "") // a key was generated and printed
	for _, path := range []string{"/livez", "/readyz", "/healthz"} {
		is.Equal(probe(t, s, path), 200) // without a key
	}

	// Without the key: 401.
	resp, err := http.Get(s.base + "/projects")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusUnauthorized)

	var projects []project
	resp = s.call(t, "GET", "/projects", "", &projects)
	is.Equal(resp.StatusCode, 200)
	is.Equal(len(projects), 1) // an empty store gets one project
	is.Equal(projects[0].Name, "Demo")

	var p prompt
	resp = s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"support/greeting","name":"Greeting"}`, &p)
	is.Equal(resp.StatusCode, 200)
	for _, content := range []string{"Hello v1", "Hello v2"} {
		resp = s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"`+content+`"}`, nil)
		is.Equal(resp.StatusCode, 200)
	}
	resp = s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":2}`, &p)
	is.Equal(resp.StatusCode, 200)
	is.Equal(p.ActiveVersion.Content, "Hello v2")
	resp = s.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":1}`, nil)
	is.Equal(resp.StatusCode, 200)
	var read prompt
	resp = s.call(t, "GET", "/prompts/"+p.ID+"?environment=production", "", &read)
	is.Equal(resp.StatusCode, 200)
	is.Equal(read.ActiveVersion.VersionNumber, 1) // rolled back

	is.NoErr(s.stop(t)) // SIGTERM: a clean exit
}

func TestServerFlagsAndEnvironment(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=secret-from-the-env"}, "-project", "Alpha", "-project", "Beta")
	is.Equal(s.key, "") // a given key is not printed
	s.key = "secret-from-the-env"
	var projects []project
	resp := s.call(t, "GET", "/projects", "", &projects)
	is.Equal(resp.StatusCode, 200)
	is.Equal(len(projects), 2) // the named projects, and no Demo
	is.Equal(projects[0].Name, "Alpha")
	is.Equal(projects[1].Name, "Beta")
	is.NoErr(s.stop(t))
}

func TestServerRefusesBadFlags(t *testing.T) {
	is := is.New(t)
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-no-such-flag")
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err := cmd.CombinedOutput()
	is.True(err != nil) // a bad flag is an error exit
	is.True(strings.Contains(string(out), "no-such-flag"))
}

// TestServerFinishesRequestsInFlight sends half a request, stops the
// server, sends the rest, and gets its answer before the process exits.
func TestServerFinishesRequestsInFlight(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-project", "P")
	s.key = testKey
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p prompt
	resp := s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"k","name":"K"}`, &p)
	is.Equal(resp.StatusCode, 200)

	host := strings.TrimPrefix(strings.SplitN(s.base, "/v1", 2)[0], "http://")
	conn, err := net.Dial("tcp", host)
	is.NoErr(err)
	defer conn.Close()
	body := `{"content":"written during shutdown"}`
	head := fmt.Sprintf("POST /v1/integration/prompts/%s/versions HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", p.ID, testKey, len(body))
	_, err = io.WriteString(conn, head+body[:10])
	is.NoErr(err)
	s.waitInFlight(t, 1) // the handler is now reading the body

	is.NoErr(s.cmd.Process.Signal(syscall.SIGTERM))
	s.waitLog(t, regexp.MustCompile(`msg="stopping: finishing the requests in flight`)) // shutdown has begun
	_, err = io.WriteString(conn, body[10:])
	is.NoErr(err)
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, 200) // the request in flight finished
	select {
	case err := <-s.done:
		is.NoErr(err) // and the process exited cleanly
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit")
	}
	s.logLine(t, "finishing the requests in flight") // written out at the exit
}

// TestTwoServersShareOneDatabase runs two server processes on one
// PostgreSQL schema and writes versions of one prompt through both at once.
func TestTwoServersShareOneDatabase(t *testing.T) {
	url := os.Getenv("PROMPTS_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("PROMPTS_TEST_REQUIRE_DATABASE") != "" {
			t.Fatal("PROMPTS_TEST_DATABASE_URL is not set")
		}
		t.Skip("needs PostgreSQL: set PROMPTS_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (docs/testing.md)")
	}
	is := is.New(t)
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	schema := "server_test_" + hex.EncodeToString(rnd)
	t.Cleanup(func() {
		db, err := sqlx.Open("postgres", url)
		if err == nil {
			_, _ = db.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
			db.Close()
		}
	})
	env := []string{"PROMPTS_DSN=" + url, "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=shared-key-0123456789"}
	// Both start at once: both migrate, both make sure project Shared exists.
	var a, b *server
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = start(t, env, "-project", "Shared") }()
	go func() { defer wg.Done(); b = start(t, env, "-project", "Shared") }()
	wg.Wait()
	a.key, b.key = "shared-key-0123456789", "shared-key-0123456789"

	var projects []project
	a.call(t, "GET", "/projects", "", &projects)
	is.Equal(len(projects), 1) // one project, though both servers ensured it
	var p prompt
	resp := a.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"shared","name":"Shared"}`, &p)
	is.Equal(resp.StatusCode, 200)

	const perServer = 20
	wg.Add(2 * 4)
	for _, s := range []*server{a, b} {
		for range 4 {
			go func() {
				defer wg.Done()
				for range perServer / 4 {
					resp := s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"x"}`, nil)
					if resp.StatusCode != 200 {
						t.Errorf("create version: %d", resp.StatusCode)
					}
				}
			}()
		}
	}
	wg.Wait()
	var versions []struct {
		VersionNumber int `json:"version_number"`
	}
	b.call(t, "GET", "/prompts/"+p.ID+"/versions?limit=1000", "", &versions)
	is.Equal(len(versions), 2*perServer)
	for i, v := range versions {
		is.Equal(v.VersionNumber, 2*perServer-i) // newest first, 1..N with no gap
	}
	// A promotion through one server is what the other reads.
	resp = a.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":7}`, nil)
	is.Equal(resp.StatusCode, 200)
	var read prompt
	b.call(t, "GET", "/prompts/"+p.ID, "", &read)
	is.Equal(read.ActiveVersion.VersionNumber, 7)
	// b now holds it in its cache; a promotion through a reaches it by
	// PostgreSQL's notification.
	resp = a.call(t, "PUT", "/prompts/"+p.ID+"/environments/production", `{"version_number":3}`, nil)
	is.Equal(resp.StatusCode, 200)
	poll.For(t, 10*time.Second, "the promotion reached the other server's cache", func() bool {
		b.call(t, "GET", "/prompts/"+p.ID, "", &read)
		if read.ActiveVersion.VersionNumber == 3 {
			return true
		}
		is.Equal(read.ActiveVersion.VersionNumber, 7) // never anything else
		return false
	})
	is.True(strings.Contains(b.out.String(), "feed listening")) // b cached, fed by the database

	// A rollback retried through the other server, with its
	// Idempotency-Key, is answered from the first: it rolls back once.
	rollback := func(s *server) (*http.Response, string) {
		req, err := http.NewRequest("POST", s.base+"/prompts/"+p.ID+"/environments/production/rollback", nil)
		is.NoErr(err)
		req.Header.Set("X-API-Key", s.key)
		req.Header.Set("Idempotency-Key", "undo-once")
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		return resp, string(body)
	}
	first, firstBody := rollback(a)
	is.Equal(first.StatusCode, 200)
	again, againBody := rollback(b)
	is.Equal(again.StatusCode, 200)
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(againBody, firstBody)
	a.call(t, "GET", "/prompts/"+p.ID, "", &read)
	is.Equal(read.ActiveVersion.VersionNumber, 7) // back once, from 3 to 7
	is.NoErr(a.stop(t))
	is.NoErr(b.stop(t))
}

// A path under /v1/integration that a ServeMux would redirect to its clean
// form is the API's to answer: 401 without a key, 404 with one.
func TestServerUncleanPathsAreTheAPIs(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey})
	s.key = testKey
	host := strings.TrimSuffix(s.base, "/v1/integration")
	for _, path := range []string{"/v1/integration//prompts", "/v1/integration/prompts/../projects", "/v1/integration/./projects"} {
		for _, key := range []string{"", testKey} {
			req, err := http.NewRequest("GET", host+path, nil)
			is.NoErr(err)
			req.URL.Opaque = path // send the path as it is
			if key != "" {
				req.Header.Set("X-API-Key", key)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			is.NoErr(err)
			resp.Body.Close()
			want := http.StatusUnauthorized
			if key != "" {
				want = http.StatusNotFound
			}
			is.Equal(resp.StatusCode, want)                                       // no redirect, the API's answer
			is.Equal(resp.Header.Get("Content-Type"), "application/problem+json") // a problem
		}
	}
	is.NoErr(s.stop(t))
}

// Names whose slugs clash still each get a project.
func TestServerProjectsWithClashingSlugs(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-project", "Demo", "-project", "demo", "-project", "Demo!")
	s.key = testKey
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	is.Equal(len(projects), 3) // one project per name
	names := map[string]bool{}
	for _, p := range projects {
		names[p.Name] = true
	}
	is.True(names["Demo"] && names["demo"] && names["Demo!"])
	is.NoErr(s.stop(t))
}

// Every request's context ends at the request's deadline, which every
// call to the store inherits: the request timeout after it started.
func TestEveryRequestHasADeadline(t *testing.T) {
	is := is.New(t)
	var left time.Duration
	var hasInfo bool
	h := observed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dl, ok := r.Context().Deadline()
		is.True(ok) // the request has a deadline
		left = time.Until(dl)
		hasInfo = infoFrom(r.Context()) != nil
	}), newAccessLog(io.Discard, slog.LevelInfo, true), newMetrics(), time.Minute)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/integration/projects", nil))
	if left < 50*time.Second || left > time.Minute {
		t.Errorf("deadline in %v, want about a minute", left)
	}
	is.True(hasInfo)
}

// -h prints the usage and exits 0; a bad flag is reported once, with the
// usage, and exits 2.
func TestServerHelpAndBadFlags(t *testing.T) {
	is := is.New(t)
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err := cmd.CombinedOutput()
	is.NoErr(err) // exit status 0
	is.True(strings.Contains(string(out), "-cache-size"))
	is.True(!strings.Contains(string(out), "help requested"))

	cmd = exec.Command(os.Args[0], "-cache-size", "lots")
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err = cmd.CombinedOutput()
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 2)
	is.Equal(strings.Count(string(out), `invalid value "lots"`), 1)                    // said once
	is.True(strings.Contains(string(out), `msg="exiting: bad command line" status=2`)) // the exit is logged
}
