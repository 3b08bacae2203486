package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/webhook"
)

// receiver is a webhook receiver that checks every signature, and fails
// while failing is set.
type receiver struct {
	*httptest.Server
	secret  atomic.Value // string
	failing atomic.Bool
	mu      sync.Mutex
	got     []map[string]any // the events received, verified
	bad     int              // requests whose signature did not verify
	refused atomic.Int32     // requests answered 500 while failing
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.secret.Store("")
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err := webhook.Verify(rc.secret.Load().(string), r.Header, body, time.Now(), webhook.DefaultTolerance); err != nil {
			rc.bad++
			w.WriteHeader(400)
			return
		}
		if rc.failing.Load() {
			rc.refused.Add(1)
			w.WriteHeader(500)
			return
		}
		var e map[string]any
		_ = json.Unmarshal(body, &e)
		rc.got = append(rc.got, e)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) types() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var ts []string
	for _, e := range rc.got {
		ts = append(ts, e["type"].(string))
	}
	return ts
}

// subscribe creates a webhook to rc for every event, and keeps its secret.
func (s *server) subscribe(t *testing.T, rc *receiver) {
	t.Helper()
	var hook struct {
		Secret string `json:"secret"`
	}
	resp := s.call(t, "POST", "/webhooks", `{"url":"`+rc.URL+`/hook"}`, &hook)
	if resp.StatusCode != 200 || hook.Secret == "" {
		t.Fatalf("subscribing: %d", resp.StatusCode)
	}
	rc.secret.Store(hook.Secret)
}

// The standalone server delivers events to webhooks, signed; a receiver
// on loopback needs -webhooks-allow-private; deliveries pending while the
// receiver fails survive a restart of the server on its data file.
func TestServerDeliversWebhooks(t *testing.T) {
	is := is.New(t)
	rc := newReceiver(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey})
	s.key = testKey
	resp := s.call(t, "POST", "/webhooks", `{"url":"`+rc.URL+`/hook"}`, nil)
	is.Equal(resp.StatusCode, 400) // loopback refused by default
	is.NoErr(s.stop(t))

	data := filepath.Join(t.TempDir(), "prompts.data")
	s = start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data, "-webhooks-allow-private")
	s.key = testKey
	s.subscribe(t, rc)
	p := s.newPrompt(t)
	waitFor(t, "prompt.created delivered", func() bool { return strings.Contains(strings.Join(rc.types(), ","), "prompt.created") })

	rc.failing.Store(true)
	is.Equal(s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"one"}`, nil).StatusCode, 200)
	waitFor(t, "an attempt fails", func() bool { return rc.refused.Load() > 0 }) // the delivery waits for its retry
	is.NoErr(s.stop(t))
	rc.failing.Store(false)
	s = start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-data", data, "-webhooks-allow-private")
	waitFor(t, "version.created delivered after the restart", func() bool {
		return strings.Contains(strings.Join(rc.types(), ","), "version.created")
	})
	rc.mu.Lock()
	is.Equal(rc.bad, 0) // every request was signed right
	rc.mu.Unlock()
	is.NoErr(s.stop(t))
}

// A stream of events outlives the request timeout, and ends at the
// first signal, so that the server stops at once and its clients
// reconnect elsewhere.
func TestServerStreamsEvents(t *testing.T) {
	is := is.New(t)
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-request-timeout", "1s")
	s.key = testKey
	req, err := http.NewRequest("GET", s.base+"/events", nil)
	is.NoErr(err)
	req.Header.Set("X-API-Key", testKey)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, 200)
	is.Equal(resp.Header.Get("Content-Type"), "text/event-stream")
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Real time: the server is another process, whose request timeout
	// (1 s here) runs on its own clock; the stream must outlive it.
	time.Sleep(1500 * time.Millisecond)
	s.newPrompt(t)
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case l, ok := <-lines:
			is.True(ok) // the stream is still open
			got = l == "event: prompt.created"
		case <-deadline:
			t.Fatal("no event on the stream")
		}
	}
	stopped := time.Now()
	is.NoErr(s.stop(t)) // a clean stop, with a stream open
	is.True(time.Since(stopped) < 5*time.Second)
	for range lines { // the stream ended
	}
}
