package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
)

// keyCatcher is a server that records the X-API-Key of every request it
// gets.
type keyCatcher struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyCatcher(t *testing.T) *keyCatcher {
	k := &keyCatcher{}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.keys = append(k.keys, r.Header.Get("X-Api-Key"))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *keyCatcher) seen() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// redirector answers every request with a redirect to to(path).
func redirector(t *testing.T, status int, to func(r *http.Request) string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to(r), status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A server that redirects to another origin never gets the key sent
// there: the client refuses the redirect, naming where it led, and does
// not retry it. Go's http.Client would forward X-API-Key to any host.
func TestRedirectsToAnotherOriginAreRefused(t *testing.T) {
	other := newKeyCatcher(t)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			is := is.New(t)
			var hits atomic.Int64
			front := redirector(t, status, func(r *http.Request) string {
				hits.Add(1)
				return other.srv.URL + r.URL.Path + "?token=secret"
			})
			cl := newClient(t, front.URL, adminKey, fast)
			_, err := cl.GetProject(t.Context(), prompts.NewID(time.Now()))
			is.True(errors.Is(err, client.ErrOtherOrigin))               // refused
			is.Equal(prompts.ErrorCode(err), prompts.CodeInternal)       // not a failure to retry
			is.True(strings.Contains(err.Error(), other.srv.URL+"/v1/")) // it names the target
			is.True(!strings.Contains(err.Error(), "secret"))            // but not its query
			is.Equal(hits.Load(), int64(1))                              // tried once
			is.Equal(len(other.seen()), 0)                               // the other origin saw nothing
			_, err = cl.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: prompts.NewID(time.Now()), Key: "a", Name: "A"})
			is.True(errors.Is(err, client.ErrOtherOrigin)) // writes too
			is.Equal(len(other.seen()), 0)
		})
	}
}

// Another scheme or port on the same host is another origin as well.
func TestRedirectsToAnotherSchemeOrPortAreRefused(t *testing.T) {
	is := is.New(t)
	front := redirector(t, http.StatusTemporaryRedirect, func(r *http.Request) string { return "https://" + r.Host + r.URL.Path })
	cl := newClient(t, front.URL, adminKey, fast)
	_, _, err := cl.ListProjects(t.Context(), prompts.ProjectFilter{})
	is.True(errors.Is(err, client.ErrOtherOrigin))
	is.True(strings.Contains(err.Error(), "https://"+strings.TrimPrefix(front.URL, "http://")))

	other := newKeyCatcher(t) // 127.0.0.1 as well, another port
	front = redirector(t, http.StatusTemporaryRedirect, func(r *http.Request) string { return other.srv.URL + r.URL.Path })
	cl = newClient(t, front.URL, adminKey, fast)
	_, _, err = cl.ListProjects(t.Context(), prompts.ProjectFilter{})
	is.True(errors.Is(err, client.ErrOtherOrigin))
	is.Equal(len(other.seen()), 0)
}

// A redirect within the server's origin is followed, the key with it; the
// caller's own http.Client keeps its CheckRedirect, which still applies
// within the origin, and is not changed.
func TestRedirectsWithinTheOriginAreFollowed(t *testing.T) {
	is := is.New(t)
	s := newServer(t)
	mux := http.NewServeMux()
	mux.Handle("/old/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/old"), http.StatusTemporaryRedirect)
	}))
	mux.Handle("/", s.h)
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	cl := newClient(t, front.URL+"/old", adminKey, fast)
	p, err := cl.CreateProject(t.Context(), prompts.NewProject{Name: "P"})
	is.NoErr(err) // followed, with the key
	got, err := cl.GetProject(t.Context(), p.ID)
	is.NoErr(err)
	is.Equal(got.Name, "P")

	var asked int
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		asked++
		return errors.New("no redirects here")
	}}
	cl = newClient(t, front.URL+"/old", adminKey, fast, client.WithHTTPClient(hc))
	_, err = cl.GetProject(t.Context(), p.ID)
	is.True(err != nil)              // the caller's policy refused it
	is.True(asked > 0)               // asked
	is.True(hc.CheckRedirect != nil) // the caller's client is as it was
	is.True(hc.Transport == nil)     //
	other := newKeyCatcher(t)
	away := redirector(t, http.StatusFound, func(r *http.Request) string { return other.srv.URL + r.URL.Path })
	asked = 0
	cl = newClient(t, away.URL, adminKey, fast, client.WithHTTPClient(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { asked++; return nil }}))
	_, err = cl.GetProject(t.Context(), p.ID)
	is.True(errors.Is(err, client.ErrOtherOrigin)) // a caller's policy cannot let the key go elsewhere
	is.Equal(asked, 0)
	is.Equal(len(other.seen()), 0)
}

// The event stream is guarded as well: a feed whose stream is redirected
// elsewhere stops with the error instead of trying for ever, and
// WaitEvents says so.
func TestTheStreamIsNotRedirectedToAnotherOrigin(t *testing.T) {
	is := is.New(t)
	other := newKeyCatcher(t)
	front := redirector(t, http.StatusTemporaryRedirect, func(r *http.Request) string { return other.srv.URL + r.URL.Path })
	cl := newClient(t, front.URL, adminKey, fast)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := cl.Feed().Run(ctx, cache.New(cl))
	is.True(errors.Is(err, client.ErrOtherOrigin))
	is.True(strings.Contains(err.Error(), other.srv.URL))
	err = cl.WaitEvents(t.Context(), 1)
	is.True(errors.Is(err, client.ErrOtherOrigin))
	is.Equal(len(other.seen()), 0)
}

// endlessJSON answers a JSON body that never ends, counting what it
// wrote.
func endlessJSON(t *testing.T, written *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		chunk := []byte(`{"name":"` + strings.Repeat("x", 32<<10))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
			chunk = chunk[len(chunk)-32<<10:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A JSON answer is read up to the client's limit (WithMaxAnswerSize),
// then refused with an error naming the limit, not retried: a server
// that answers without end does not fill the client's memory.
func TestAnAnswerIsReadUpToTheLimit(t *testing.T) {
	is := is.New(t)
	var written atomic.Int64
	srv := endlessJSON(t, &written)
	cl := newClient(t, srv.URL, adminKey, fast, client.WithMaxAnswerSize(256<<10))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := cl.GetProject(t.Context(), prompts.NewID(time.Now()))
	runtime.ReadMemStats(&after)
	is.True(errors.Is(err, client.ErrTooLarge))
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal)
	is.True(strings.Contains(err.Error(), "256 KiB"))   // it names the limit
	is.True(after.TotalAlloc-before.TotalAlloc < 8<<20) // the client read about the limit, no more
}

// The default limit is 64 MiB: an answer that says it is longer is
// refused before its body is read; one within it is read.
func TestTheDefaultAnswerLimitIs64MiB(t *testing.T) {
	is := is.New(t)
	is.Equal(client.DefaultMaxAnswerSize, 64<<20)
	var length atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(length.Load(), 10))
		w.WriteHeader(http.StatusOK)
		// The body is cut short: the client must not wait for it.
	}))
	t.Cleanup(srv.Close)
	cl := newClient(t, srv.URL, adminKey, fast)
	length.Store(64<<20 + 1)
	_, _, err := cl.ListProjects(t.Context(), prompts.ProjectFilter{})
	is.True(errors.Is(err, client.ErrTooLarge))
	is.True(strings.Contains(err.Error(), "64 MiB"))
	length.Store(64 << 20)
	_, _, err = cl.ListProjects(t.Context(), prompts.ProjectFilter{})
	is.True(!errors.Is(err, client.ErrTooLarge)) // within the limit: read (and cut short, here)
}

// sseServer serves the event stream: each connection gets the next of
// frames, then the stream stays open until the client leaves. It
// records the Last-Event-ID of each connection.
type sseServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	lastID []string
}

func newSSEServer(t *testing.T, frames ...func(w http.ResponseWriter)) *sseServer {
	s := &sseServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != client.Prefix+"/events" || r.Header.Get("Accept") != "text/event-stream" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		n := len(s.lastID)
		s.lastID = append(s.lastID, r.Header.Get("Last-Event-Id"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if n < len(frames) {
			frames[n](w)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sseServer) connections() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lastID...)
}

func event(id int, data string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		fmt.Fprintf(w, "id: %d\nevent: prompt.updated\ndata: %s\n\n", id, data)
	}
}

// endlessEvent sends an event whose data line never ends.
func endlessEvent(id int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		fmt.Fprintf(w, "id: %d\nevent: prompt.updated\ndata: ", id)
		chunk := []byte(strings.Repeat("x", 32<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// manyLines sends an event of many data lines, larger in all than 1 MiB.
func manyLines(id int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		fmt.Fprintf(w, "id: %d\nevent: prompt.updated\n", id)
		line := "data: " + strings.Repeat("x", 1000) + "\n"
		for range 1100 {
			fmt.Fprint(w, line)
		}
		fmt.Fprint(w, "\n")
	}
}

// One event of the stream is read up to MaxEventSize (1 MiB): WaitEvents
// fails with an error naming the limit, whether the event is one endless
// line or many lines, and reads no more than about the limit.
func TestAnEventIsReadUpToOneMiB(t *testing.T) {
	is := is.New(t)
	is.Equal(client.MaxEventSize, 1<<20)
	for name, frame := range map[string]func(http.ResponseWriter){"endless line": endlessEvent(7), "many lines": manyLines(7)} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			s := newSSEServer(t, frame)
			cl := newClient(t, s.srv.URL, adminKey, fast)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err := cl.WaitEvents(ctx, 6)
			runtime.ReadMemStats(&after)
			is.True(errors.Is(err, client.ErrTooLarge))
			is.True(strings.Contains(err.Error(), "1 MiB"))
			is.True(after.TotalAlloc-before.TotalAlloc < 16<<20) // about the limit, no more
		})
	}
	// An event just within the limit is read.
	s := newSSEServer(t, event(7, `{"project_id":"p","prompt_id":"x","pad":"`+strings.Repeat("x", client.MaxEventSize-64)+`"}`))
	cl := newClient(t, s.srv.URL, adminKey, fast)
	is.NoErr(cl.WaitEvents(t.Context(), 6))
}

// A feed skips an event larger than it reads: it reports the stream
// lost, and connects again after that event (not to read it again for
// ever), the cache starting afresh, since the change is unknown.
func TestTheFeedSkipsAnEventLargerThanOneMiB(t *testing.T) {
	is := is.New(t)
	s := newSSEServer(t,
		func(w http.ResponseWriter) { event(4, `{"project_id":"p","prompt_id":"a"}`)(w); endlessEvent(5)(w) },
		event(6, `{"project_id":"p","prompt_id":"b"}`))
	cl := newClient(t, s.srv.URL, adminKey, fast)
	rec := newRecorder(cache.New(cl))
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- cl.Feed().Run(ctx, rec) }()
	rec.waitFor(t, "recovered")
	rec.waitFor(t, "invalidate a")
	rec.waitFor(t, "lost")
	rec.waitFor(t, "recovered") // afresh, not resumed
	rec.waitFor(t, "invalidate b")
	is.Equal(s.connections(), []string{"", "5"}) // after the event skipped
	stop()
	is.True(errors.Is(<-done, context.Canceled))
}
