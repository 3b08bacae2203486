package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/internal/tcpproxy"
)

// testDatabase returns the test database's URL and a fresh schema name,
// dropped when the test ends; it skips the test without a database
// (fails it when PROMPTS_TEST_REQUIRE_DATABASE is set).
func testDatabase(t testing.TB) (dsn *url.URL, schema string) {
	t.Helper()
	raw := os.Getenv("PROMPTS_TEST_DATABASE_URL")
	if raw == "" {
		if os.Getenv("PROMPTS_TEST_REQUIRE_DATABASE") != "" {
			t.Fatal("PROMPTS_TEST_DATABASE_URL is not set")
		}
		t.Skip("needs PostgreSQL: set PROMPTS_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (docs/testing.md)")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Skipf("needs a TCP postgres:// URL: %q", raw)
	}
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	schema = "server_test_" + hex.EncodeToString(rnd)
	t.Cleanup(func() {
		if db, err := sqlx.Open("postgres", raw); err == nil {
			_, _ = db.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
			db.Close()
		}
	})
	return u, schema
}

// via returns u with its host replaced by addr.
func via(u *url.URL, addr string) string {
	v := *u
	v.Host = addr
	return v.String()
}

// get sends a GET of path (under the server's root, not the API's) with
// hdr, and returns the answer with its body read.
func (s *server) get(t *testing.T, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", strings.TrimSuffix(s.base, "/v1/integration")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
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
	return resp, string(b)
}

// logLine waits for the server's log line that contains all of parts, and
// returns it; the server writes the access log line after the answer.
func (s *server) logLine(t *testing.T, parts ...string) string {
	t.Helper()
	var found string
	if !poll.Until(30*time.Second, func() bool {
		for _, line := range strings.Split(s.out.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				found = line
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no log line with %q:\n%s", parts, s.out.String())
	}
	return found
}

// One line a request: method, route pattern, status, bytes, duration, the
// key's name (never its secret), the request id.
func TestServerAccessLog(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey})
	s.key = testKey
	const unknown = "01M84AFWE3EEWVYPN20F1894FC"
	resp, body := s.get(t, "/v1/integration/prompts/"+unknown, "X-API-Key", testKey, "X-Request-Id", "trace-42.a:b/c")
	is.Equal(resp.StatusCode, 404)
	is.Equal(resp.Header.Get("X-Request-Id"), "trace-42.a:b/c") // a valid id is kept, and sent back
	line := s.logLine(t, "request_id=trace-42.a:b/c")
	for _, want := range []string{
		"level=INFO", "msg=request", "method=GET", "route=/v1/integration/prompts/{prompt_id}",
		"status=404", fmt.Sprintf("bytes=%d", len(body)), "duration=", "key=default",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("access log line %q lacks %q", line, want)
		}
	}
	is.True(!strings.Contains(line, unknown)) // the route, never the raw path

	// An id that is not a valid one is replaced by a new one.
	for _, bad := range []string{`quote"d`, "with space", strings.Repeat("x", 129), "caf\u00e9"} {
		resp, _ = s.get(t, "/livez", "X-Request-Id", bad)
		id := resp.Header.Get("X-Request-Id")
		is.True(id != bad)
		is.Equal(len(id), 26) // a ULID
		line = s.logLine(t, "request_id="+id)
		is.True(strings.Contains(line, "route=/livez"))
		is.True(strings.Contains(line, "status=200"))
		is.True(!strings.Contains(line, "key=")) // no key was given
	}

	// Without a valid key: 401, no key name; an unknown path: unmatched.
	resp, _ = s.get(t, "/v1/integration/projects", "X-API-Key", "not-a-key-of-ours", "X-Request-Id", "unauth")
	is.Equal(resp.StatusCode, 401)
	line = s.logLine(t, "request_id=unauth")
	is.True(strings.Contains(line, "status=401"))
	is.True(!strings.Contains(line, "key="))
	resp, _ = s.get(t, "/nowhere/"+unknown, "X-Request-Id", "lost")
	is.Equal(resp.StatusCode, 404)
	is.True(strings.Contains(s.logLine(t, "request_id=lost"), "route=unmatched"))

	is.NoErr(s.stop(t))
	is.True(!strings.Contains(s.out.String(), testKey)) // never the secret
	s.logLine(t, "msg=exiting", "status=0")             // the exit is logged
}

// metric returns the value of the sample named name{labels} in a scrape,
// or fails the test.
func metric(t *testing.T, scrape, sample string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`)
	m := re.FindStringSubmatch(scrape)
	if m == nil {
		t.Fatalf("no sample %s in the scrape:\n%s", sample, scrape)
	}
	return m[1]
}

// -access-log=false turns the access log off; -log-level (or
// PROMPTS_LOG_LEVEL) sets the least level logged.
func TestServerLogSettings(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-access-log=false")
	is.Equal(probe(t, s, "/livez"), 200)
	is.NoErr(s.stop(t))
	is.True(!strings.Contains(s.out.String(), "msg=request"))
	s.logLine(t, "msg=exiting", "status=0")

	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-dsn", "postgres://u@127.0.0.1:1/x?sslmode=disable", "-wait-db", "0s")
	cmd.Env = append(os.Environ(), serverVar+"=1", "PROMPTS_LOG_LEVEL=error")
	out, err := cmd.CombinedOutput()
	is.True(err != nil)
	is.True(!strings.Contains(string(out), "level=INFO"))                      // not even "listening"
	is.True(strings.Contains(string(out), "level=ERROR msg=exiting status=1")) // but the failure

	cmd = exec.Command(os.Args[0], "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), serverVar+"=1", "PROMPTS_LOG_LEVEL=loud")
	out, err = cmd.CombinedOutput()
	is.True(err != nil)
	is.True(strings.Contains(string(out), `PROMPTS_LOG_LEVEL: \"loud\" is not a level`))
}

// metricValue is metric's value as a number.
func metricValue(t *testing.T, scrape, sample string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(metric(t, scrape, sample), 64)
	if err != nil {
		t.Fatalf("%s: %v", sample, err)
	}
	return v
}

// The metrics a dashboard uses: requests by route, method and status,
// latency histograms, store errors by code, the store's state.
func TestServerMetrics(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-project", "P")
	s.key = testKey
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	is.Equal(s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"k","name":"K"}`, nil).StatusCode, 200)
	is.Equal(s.call(t, "GET", "/prompts/01M84AFWE3EEWVYPN20F1894FC", "", nil).StatusCode, 404)
	is.Equal(s.call(t, "GET", "/prompts/01M84AFWE3EEWVYPN20F1894FD", "", nil).StatusCode, 404)

	resp, scrape := s.get(t, "/metrics") // without a key
	is.Equal(resp.StatusCode, 200)
	is.True(strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"))
	is.Equal(metric(t, scrape, `prompts_http_requests_total{method="GET",route="/v1/integration/prompts/{prompt_id}",status="404"}`), "2")
	is.Equal(metric(t, scrape, `prompts_http_requests_total{method="POST",route="/v1/integration/prompts",status="200"}`), "1")
	is.Equal(metric(t, scrape, `prompts_http_requests_total{method="GET",route="/v1/integration/projects",status="200"}`), "1")
	is.Equal(metric(t, scrape, `prompts_http_request_duration_seconds_count{method="GET",route="/v1/integration/prompts/{prompt_id}"}`), "2")
	is.Equal(metric(t, scrape, `prompts_http_request_duration_seconds_bucket{method="POST",route="/v1/integration/prompts",le="+Inf"}`), "1")
	is.Equal(metric(t, scrape, `prompts_store_errors_total{code="not_found"}`), "2")
	is.Equal(metric(t, scrape, `prompts_store_up`), "1")
	metric(t, scrape, `go_goroutines`)
	is.True(!strings.Contains(scrape, "01M84AFWE3EEWVYPN20F1894FC")) // routes, never raw paths
	is.True(!strings.Contains(scrape, "prompts_cache_"))             // no cache on memory

	// A method HTTP does not define is "other", not a label of its own.
	req, err := http.NewRequest("BREW", s.base+"/projects", nil)
	is.NoErr(err)
	resp, err = http.DefaultClient.Do(req)
	is.NoErr(err)
	resp.Body.Close()
	_, scrape = s.get(t, "/metrics")
	is.Equal(metric(t, scrape, `prompts_http_requests_total{method="other",route="/v1/integration/projects",status="401"}`), "1")
	is.True(!strings.Contains(scrape, "BREW"))
	is.NoErr(s.stop(t))
}

// Listening comes first: on a port in use the server stops before it
// touches the database.
func TestServerListensFirst(t *testing.T) {
	is := is.New(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer busy.Close()
	db, err := net.Listen("tcp", "127.0.0.1:0") // a database that counts its callers
	is.NoErr(err)
	defer db.Close()
	var called atomic.Int32
	go func() {
		for {
			c, err := db.Accept()
			if err != nil {
				return
			}
			called.Add(1)
			c.Close()
		}
	}()
	cmd := exec.Command(os.Args[0], "-addr", busy.Addr().String(), "-dsn", "postgres://u@"+db.Addr().String()+"/x?sslmode=disable")
	cmd.Env = append(os.Environ(), serverVar+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 1)
	is.True(strings.Contains(string(out), "address already in use"))
	is.True(strings.Contains(string(out), "msg=exiting status=1"))
	is.Equal(called.Load(), int32(0)) // the database was never called
}

// With the database unreachable at start, the server listens, answers its
// probes (/livez 200, /readyz 503) and the API 503, and waits for the
// database with a backoff, logging each attempt; once the database
// answers, it is ready.
func TestServerWaitsForTheDatabase(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	proxy := tcpproxy.Start(t, dsn.Host)
	proxy.Cut(true)
	s := launch(t, []string{"PROMPTS_DSN=" + via(dsn, proxy.Addr()), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}, "-wait-db", "5m")
	s.key = testKey
	s.waitLog(t, regexp.MustCompile(`msg="waiting for the database" attempt=2 `))
	is.Equal(probe(t, s, "/livez"), 200)
	resp, body := s.get(t, "/readyz")
	is.Equal(resp.StatusCode, 503)
	is.True(strings.Contains(body, "starting"))
	resp, body = s.get(t, "/v1/integration/projects", "X-API-Key", testKey)
	is.Equal(resp.StatusCode, 503)
	is.True(resp.Header.Get("Retry-After") != "")
	is.Equal(resp.Header.Get("Content-Type"), "application/problem+json")
	is.True(strings.Contains(body, `"code":"unavailable"`))
	_, scrape := s.get(t, "/metrics")
	is.Equal(metric(t, scrape, "prompts_store_up"), "0") // not up while it is waited for
	is.Equal(metric(t, scrape, `prompts_http_requests_total{method="GET",route="/v1/integration",status="503"}`), "1")

	proxy.Cut(false)
	s.waitLog(t, readyRe)
	s.logLine(t, "msg=\"database reachable\"")
	var projects []project
	is.Equal(s.call(t, "GET", "/projects", "", &projects).StatusCode, 200)
	is.Equal(len(projects), 1) // Demo, created once the database answered
	is.Equal(probe(t, s, "/readyz"), 200)
	is.NoErr(s.stop(t))
}

// The wait has a limit: then the server exits, saying why.
func TestServerGivesUpWaitingForTheDatabase(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	proxy := tcpproxy.Start(t, dsn.Host)
	proxy.Cut(true)
	s := launch(t, []string{"PROMPTS_DSN=" + via(dsn, proxy.Addr()), "PROMPTS_SCHEMA=" + schema}, "-wait-db", "1s")
	err := <-s.done
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 1)
	s.logLine(t, "msg=exiting", "status=1", "did not answer within -wait-db 1s")
}

// sendPartly opens a connection to the server and sends a request for a
// new version of promptID whose body stops half-way: the request stays in
// flight until the connection closes.
func sendPartly(t *testing.T, s *server, promptID string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(s.base, "/v1/integration"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	body := `{"content":"never finished"}`
	_, err = fmt.Fprintf(conn, "POST /v1/integration/prompts/%s/versions HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", promptID, s.key, len(body), body[:10])
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// waitInFlight waits until n requests are in flight, besides the scrape
// of the metrics that tells.
func (s *server) waitInFlight(t *testing.T, n int) {
	t.Helper()
	want := fmt.Sprint(n + 1)
	waitFor(t, want+" requests in flight", func() bool {
		_, scrape := s.get(t, "/metrics")
		return metric(t, scrape, "prompts_http_requests_in_flight") == want
	})
}

// newPrompt creates a prompt in the server's first project.
func (s *server) newPrompt(t testing.TB) prompt {
	t.Helper()
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p prompt
	if resp := s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"k","name":"K"}`, &p); resp.StatusCode != 200 {
		t.Fatalf("create a prompt: %d", resp.StatusCode)
	}
	return p
}

// newPromptKeyed creates a prompt with a key of its own in the server's
// first project.
func (s *server) newPromptKeyed(t *testing.T) prompt {
	t.Helper()
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p prompt
	key := fmt.Sprintf("k-%d", time.Now().UnixNano())
	if resp := s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"`+key+`","name":"K"}`, &p); resp.StatusCode != 200 {
		t.Fatalf("create a prompt: %d", resp.StatusCode)
	}
	return p
}

// A body that does not arrive within -request-timeout gets a 408 problem
// before the connection closes.
func TestServerSlowBody(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-request-timeout", "1s")
	s.key = testKey
	conn := sendPartly(t, s, s.newPrompt(t).ID)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	is.NoErr(err) // an answer, not a closed connection
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusRequestTimeout)
	is.NoErr(s.stop(t))
}

// At the first signal the server drains; a second stops it at once, and
// -shutdown-grace bounds the drain.
func TestServerStopsAtASecondSignal(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-shutdown-grace", "1h")
	s.key = testKey
	sendPartly(t, s, s.newPrompt(t).ID)
	s.waitInFlight(t, 1)
	is.NoErr(s.cmd.Process.Signal(syscall.SIGTERM))
	s.waitLog(t, regexp.MustCompile(`msg="stopping: finishing the requests in flight`))
	select {
	case err := <-s.done:
		t.Fatalf("the server stopped with a request in flight and an hour of grace: %v\n%s", err, s.out.String())
	default:
	}
	is.NoErr(s.cmd.Process.Signal(syscall.SIGINT))
	err := <-s.done // waits no hour: a test's timeout would end it first
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 1)
	s.logLine(t, "second signal")
	s.logLine(t, "msg=exiting", "status=1", "stopped at once by a second signal")
}

func TestServerShutdownGrace(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-shutdown-grace", "200ms", "-request-timeout", "1h")
	s.key = testKey
	sendPartly(t, s, s.newPrompt(t).ID)
	s.waitInFlight(t, 1)
	is.NoErr(s.cmd.Process.Signal(syscall.SIGTERM))
	err := <-s.done
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))
	is.Equal(exit.ExitCode(), 1)
	s.logLine(t, "msg=exiting", "status=1", "did not finish within -shutdown-grace 200ms")
}
