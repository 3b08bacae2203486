package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/memstore"
)

// split is a load balancer that sends writes to one replica and reads to
// another, and records whether each read asked for a fresh answer.
type split struct {
	writes, reads string // the replicas' addresses
	next          http.RoundTripper
	mu            sync.Mutex
	noCache       []bool
}

func (s *split) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.Method == http.MethodGet {
		r.URL.Host = s.reads
		s.mu.Lock()
		s.noCache = append(s.noCache, r.Header.Get("Cache-Control") == "no-cache")
		s.mu.Unlock()
	} else {
		r.URL.Host = s.writes
	}
	return s.next.RoundTrip(r)
}

// asked returns whether the reads since the last call asked for a fresh
// answer.
func (s *split) asked() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.noCache
	s.noCache = nil
	return out
}

// A process reads its own writes through any replica: for a while after a
// write of a prompt, its reads of it (by id, and by key in its project)
// ask for a fresh answer, which a replica whose cache has not heard of the
// write yet answers from the store; when the window ends, they do not.
//
// In a synctest bubble, on a network in memory (memNet), so that the
// window is timed on the bubble's clock: exactly, and in no real time.
func TestAProcessReadsItsOwnWritesThroughAnyReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ctx := t.Context()
		ms := memstore.New()
		keys := httpapi.NewKeys()
		is.NoErr(keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}))
		var n memNet
		for _, addr := range []string{"writes.test:80", "reads.test:80"} {
			// A cache that no feed tells of the other replica's writes:
			// the worst lag there is.
			n.serve(t, addr, httpapi.New(cache.New(ms, cache.Standalone()), httpapi.WithAuthenticator(keys)))
		}
		tr := n.transport()
		t.Cleanup(tr.CloseIdleConnections)
		lb := &split{writes: "writes.test:80", reads: "reads.test:80", next: tr}
		cl := newClient(t, "http://lb.invalid", adminKey, client.WithHTTPClient(&http.Client{Transport: lb}))
		const window = 300 * time.Millisecond
		client.SetFreshWindow(cl, window)

		proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
		is.NoErr(err)
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
		is.NoErr(err)
		other, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "other", Name: "O"})
		is.NoErr(err)
		_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		content := func(a prompts.ActivePrompt, err error) string {
			t.Helper()
			is.NoErr(err)
			return a.ActiveVersion.Content
		}
		is.Equal(content(cl.GetActive(ctx, p.ID, prompts.Production)), "one") // the read replica caches one
		is.Equal(content(cl.GetActiveByKey(ctx, proj.ID, "k", prompts.Production)), "one")
		is.Equal(lb.asked(), []bool{false, false, false, false}) // (and the versions' reads) from its cache

		_, err = cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err) // written through the other replica
		wrote := time.Now()
		is.Equal(content(cl.GetActive(ctx, p.ID, prompts.Production)), "two")              // read at once
		is.Equal(content(cl.GetActiveByKey(ctx, proj.ID, "k", prompts.Production)), "two") // by key too
		_, err = cl.GetActive(ctx, other.ID, prompts.Production)
		is.NoErr(err)
		asked := lb.asked()
		is.Equal(asked[0], true)             // fresh, by id
		is.Equal(asked[len(asked)-1], false) // another prompt: from the cache

		// Read until the answer is this replica's cache, which no feed
		// moved on: the window ended, when it should.
		poll.For(t, time.Second, "the window ends", func() bool {
			return content(cl.GetActive(ctx, p.ID, prompts.Production)) == "one"
		})
		ended := time.Since(wrote)
		is.True(ended > window && ended <= window+poll.Every) // the window's length
		asked = lb.asked()
		is.Equal(asked[len(asked)-1], false) // the read did not ask for a fresh answer
		for _, fresh := range asked[:len(asked)-1] {
			is.True(fresh) // every read before it did
		}
	})
}

// A cache fed by a client reads the writes made through the client
// itself at once, not when their events arrive: the client tells its
// feeds' sinks before a write returns. Here the event stream opens but
// never delivers an event, so every fresh answer below comes from the
// client's own telling; without it the cache would answer what it held.
func TestACacheReadsTheWritesMadeThroughItsClient(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServerWith(t, setup{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
				<-r.Context().Done() // open, and silent
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	cl := s.client(t)
	c := cache.New(cl)
	rec := newRecorder(c)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cl.Feed().Run(fctx, rec) }()
	t.Cleanup(func() { stop(); <-done })
	rec.waitFor(t, "recovered")

	proj, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	read := func() prompts.ActivePrompt {
		t.Helper()
		a, err := c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		b, err := c.GetActiveByKey(ctx, proj.ID, "k", prompts.Production)
		is.NoErr(err)
		is.Equal(a.Revision, b.Revision) // by id and by key alike
		return a
	}
	content := func() string {
		t.Helper()
		if a := read(); a.ActiveVersion != nil {
			return a.ActiveVersion.Content
		}
		return ""
	}
	for i := 1; i <= 3; i++ {
		want := fmt.Sprint("version ", i)
		_, err := cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: want, Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		is.Equal(content(), want) // at once
		is.Equal(content(), want) // and from the cache now
	}
	_, err = cl.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.Equal(content(), "version 2")
	_, err = cl.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	is.Equal(content(), "version 1")
	_, err = cl.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.Equal(content(), "")
	_, err = cl.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
	is.NoErr(err)
	is.Equal(read().Name, "Renamed")
	is.True(c.Stats().Hits > 0) // the cache did answer in between
}
