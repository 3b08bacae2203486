package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// root is the server's address without the API's path.
func (s *server) root() string { return strings.TrimSuffix(s.base, "/v1/integration") }

// With every slot held by idle keep-alive connections, with a key and
// without, a new client is served at once: the oldest idle connection
// makes room. (Without, it would wait for the first of them to time out.)
func TestServerMakesRoomForNewClients(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-max-conns", "8")
	addr := strings.TrimPrefix(s.root(), "http://")
	var held []net.Conn
	for i := range 8 {
		path, key := "/livez", ""
		if i%2 == 0 {
			path, key = "/v1/integration/projects", testKey
		}
		c := send(t, addr, path, key)
		is.NoErr(c.SetReadDeadline(time.Now().Add(5 * time.Second)))
		_, err := c.Read(make([]byte, 4096)) // its answer: now idle
		is.NoErr(err)
		held = append(held, c)
	}
	client := &http.Client{Timeout: 3 * time.Second}
	for _, path := range []string{"/livez", "/readyz"} {
		resp, err := client.Get(s.root() + path)
		is.NoErr(err) // served within 3 s, not after 5 s or 60 s
		resp.Body.Close()
		is.Equal(resp.StatusCode, 200)
	}
	// The oldest idle connections made room. (Which of the first two went
	// idle first, the server's goroutines decide: the client reads an
	// answer before the server marks its connection idle.)
	is.True(closedByServer(t, held[0], 5*time.Second) || closedByServer(t, held[1], time.Second))
}

// stream opens the event stream with key; it ends with the test, or
// with cancel.
func (s *server) stream(t *testing.T, key string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, cancel
}

// A key holds at most -max-streams-per-key streams; one more is 429 with
// Retry-After, and the probes answer all along.
func TestServerStreamsPerKey(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-max-streams-per-key", "2", "-max-conns", "8")
	first, cancel := s.stream(t, testKey)
	is.Equal(first.StatusCode, 200)
	second, _ := s.stream(t, testKey)
	is.Equal(second.StatusCode, 200)
	third, _ := s.stream(t, testKey)
	is.Equal(third.StatusCode, http.StatusTooManyRequests)
	is.Equal(third.Header.Get("Content-Type"), "application/problem+json")
	secs, err := strconv.Atoi(third.Header.Get("Retry-After"))
	is.NoErr(err)
	is.True(secs > 0)
	body, err := io.ReadAll(third.Body)
	is.NoErr(err)
	is.True(strings.Contains(string(body), `"code":"too_many_requests"`))
	is.True(strings.Contains(string(body), "-max-streams-per-key"))
	for _, path := range []string{"/livez", "/readyz"} {
		resp, err := http.Get(s.root() + path)
		is.NoErr(err)
		resp.Body.Close()
		is.Equal(resp.StatusCode, 200)
	}
	var projects []project
	is.Equal(s.callWith(t, testKey, "/projects", &projects).StatusCode, 200) // other requests of the key are served
	cancel()                                                                 // one stream ends: room for another
	waitUntil(t, "a stream once one ended", func() bool {
		resp, _ := s.stream(t, testKey)
		return resp.StatusCode == 200
	})
}

// With every slot held by one key's event streams (the key may hold more
// streams than the server has slots), the probes are still answered: the
// oldest stream makes room, and its client can resume where it was.
func TestServerStreamsMakeRoomForProbes(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-max-conns", "8", "-max-streams-per-key", "100")
	var streams []*http.Response
	for range 8 {
		resp, _ := s.stream(t, testKey)
		is.Equal(resp.StatusCode, 200)
		streams = append(streams, resp)
	}
	client := &http.Client{Timeout: 3 * time.Second}
	for _, path := range []string{"/livez", "/readyz"} {
		resp, err := client.Get(s.root() + path)
		is.NoErr(err) // served within 3 s: a stream made room
		resp.Body.Close()
		is.Equal(resp.StatusCode, 200)
	}
	ended := make(chan struct{}) // the first stream ends, closed by the server
	go func() { _, _ = io.Copy(io.Discard, streams[0].Body); close(ended) }()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the oldest stream was not the one closed")
	}
}

// callWith GETs path with key.
func (s *server) callWith(t *testing.T, key, path string, out any) *http.Response {
	t.Helper()
	saved := s.key
	defer func() { s.key = saved }()
	s.key = key
	return s.call(t, "GET", path, "", out)
}

// An address that sends 20 unknown keys within 10 s gets 429 for its
// unknown keys; its valid key is still served.
func TestServerRefusesKeyGuessing(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey})
	for i := range unknownKeyLimit {
		resp := s.callWith(t, "guess-"+strconv.Itoa(i)+"-0123456789", "/projects", nil)
		is.Equal(resp.StatusCode, http.StatusUnauthorized)
	}
	resp := s.callWith(t, "guess-more-0123456789", "/projects", nil)
	is.Equal(resp.StatusCode, http.StatusTooManyRequests)
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	is.NoErr(err)
	is.True(secs > 50 && secs <= 60) // a minute
	is.Equal(resp.Header.Get("Content-Type"), "application/problem+json")
	var projects []project
	is.Equal(s.callWith(t, testKey, "/projects", &projects).StatusCode, 200) // a valid key is served
	is.Equal(s.callWith(t, "", "/projects", nil).StatusCode, http.StatusUnauthorized)
}

// With -dsn and no key, the key generated at the first start is kept,
// hashed, in the database, never in a file of the working directory:
// two servers on one database, started at once, accept the one printed.
func TestServersShareTheGeneratedKey(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema}
	dirs := []string{t.TempDir(), t.TempDir()}
	servers := make([]*server, 2)
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			s := launchIn(t, dirs[i], env) // -data at its default, prompts.data
			s.waitLog(t, readyRe)
			if m := keyRe.FindStringSubmatch(s.out.String()); m != nil {
				s.key = m[1]
			}
			servers[i] = s
		})
	}
	wg.Wait()
	var key string
	for _, s := range servers {
		if s.key != "" {
			is.Equal(key, "") // printed by one server only
			key = s.key
		} else {
			s.logLine(t, "API key: the one printed at the first start on this database")
		}
	}
	is.True(key != "")
	for _, s := range servers {
		s.key = key
		is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 200) // each accepts it
		s.key = "pk_another-key-of-enough-length"
		is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 401)
	}
	for _, dir := range dirs {
		files, err := os.ReadDir(dir)
		is.NoErr(err)
		is.Equal(len(files), 0) // nothing written where the server runs
	}
	// A restart prints no key, and accepts the same.
	is.NoErr(servers[0].stop(t))
	s := launchIn(t, dirs[0], env)
	s.waitLog(t, readyRe)
	is.True(keyRe.FindStringSubmatch(s.out.String()) == nil)
	s.key = key
	is.Equal(s.call(t, "GET", "/projects", "", nil).StatusCode, 200)
}
