package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// recorder is a cache that tells the test what its feed reports.
type recorder struct {
	*cache.Store
	got chan string
}

func newRecorder(c *cache.Store) *recorder { return &recorder{Store: c, got: make(chan string, 1024)} }

func (r *recorder) Invalidate(i prompts.Invalidation) {
	r.Store.Invalidate(i)
	r.got <- "invalidate " + i.PromptID
}
func (r *recorder) Lost()      { r.Store.Lost(); r.got <- "lost" }
func (r *recorder) Recovered() { r.Store.Recovered(); r.got <- "recovered" }
func (r *recorder) Resumed()   { r.Store.Resumed(); r.got <- "resumed" }

// waitFor returns once the feed reported want, and what it reported
// before; it fails the test after a while.
func (r *recorder) waitFor(t *testing.T, want string) []string {
	t.Helper()
	var before []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-r.got:
			if got == want {
				return before
			}
			before = append(before, got)
		case <-deadline:
			t.Fatalf("the feed did not report %q; it reported %q", want, before)
		}
	}
}

// streams returns the Last-Event-ID of each request for the event
// stream the server got ("" without one).
func streams(s *server) []string {
	var ids []string
	for _, r := range s.requests() {
		if r.path == "/v1/integration/events" && strings.Contains(r.header.Get("Accept"), "text/event-stream") {
			ids = append(ids, r.header.Get("Last-Event-Id"))
		}
	}
	return ids
}

// The feed turns the events of the stream into invalidations; a cut of
// the stream resumes after the last event seen, and the cache keeps what
// it holds while the change made meanwhile is applied; only a 410 (the
// events missed are gone) drops everything.
func TestTheFeedFollowsTheStreamAndResumesWithoutLoss(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	var expire atomic.Bool // the server answers a resumption 410
	s := newServerWith(t, setup{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if expire.Load() && r.Header.Get("Last-Event-Id") != "" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusGone)
				_, _ = w.Write([]byte(`{"type":"about:blank","title":"Gone","status":410,"detail":"the events after this id are no longer kept","code":"events_expired"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	direct := s.client(t) // another process, writing
	proj, err := direct.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	ids := map[string]string{}
	for _, key := range []string{"p", "q"} {
		p, err := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: key, Name: key})
		is.NoErr(err)
		_, err = direct.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: key + "1", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		ids[key] = p.ID
	}
	promote := func(key, content string) {
		t.Helper()
		_, err := direct.CreateVersion(ctx, prompts.NewVersion{PromptID: ids[key], Content: content, Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
	}

	px := newProxy(t, s.URL)
	cl := newClient(t, px.URL(), adminKey, fast)
	c := cache.New(cl)
	rec := newRecorder(c)
	fctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- cl.Feed().Run(fctx, rec) }()
	rec.waitFor(t, "recovered")
	read := func(key string) string { // by key, as applications read
		t.Helper()
		a, err := c.GetActiveByKey(ctx, proj.ID, key, prompts.Production)
		is.NoErr(err)
		return a.ActiveVersion.Content
	}
	readByID := func(key string) string {
		t.Helper()
		a, err := c.GetActive(ctx, ids[key], prompts.Production)
		is.NoErr(err)
		return a.ActiveVersion.Content
	}
	is.Equal(read("p"), "p1")
	is.Equal(read("q"), "q1")
	hits := c.Stats().Hits
	is.Equal(read("p"), "p1")
	is.Equal(c.Stats().Hits, hits+1) // cached

	promote("p", "p2")
	rec.waitFor(t, "invalidate "+ids["p"]) // the version's event
	rec.waitFor(t, "invalidate "+ids["p"]) // and its deployment's
	is.Equal(read("p"), "p2")              // applied
	last, err := direct.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(read("q"), "q1")
	is.Equal(readByID("p"), "p2")
	is.Equal(c.Stats().Entries, int64(3))

	px.setDown(true)
	px.cut() // the network fails
	rec.waitFor(t, "lost")
	promote("q", "q2") // a change made meanwhile
	streams(s)         // (forget the requests so far)
	px.setDown(false)
	before := rec.waitFor(t, "resumed")
	is.Equal(before, nil) // nothing else reported: no Recovered
	rec.waitFor(t, "invalidate "+ids["q"])
	st := c.Stats()
	is.Equal(st.Recoveries, int64(1))  // resumed, not recovered
	is.Equal(st.Resumptions, int64(1)) //
	is.Equal(st.Entries, int64(1))     // p's entry by id kept; q's change dropped the project's reads by key
	hits = st.Hits
	is.Equal(readByID("p"), "p2")    // p's entry survived the cut
	is.Equal(c.Stats().Hits, hits+1) // a hit
	is.Equal(read("q"), "q2")        // and the change made while cut is applied
	resumed := streams(s)
	is.True(len(resumed) > 0)
	is.Equal(resumed[len(resumed)-1], strconv.FormatInt(last, 10)) // resumed after the last event seen

	expire.Store(true) // the events after the last seen are gone
	px.cut()
	rec.waitFor(t, "lost")
	rec.waitFor(t, "recovered")           // afresh
	is.Equal(c.Stats().Entries, int64(0)) // everything dropped
	again := streams(s)
	is.Equal(again[len(again)-1], "") // from the next event
	is.Equal(read("p"), "p2")

	stop()
	is.True(errors.Is(<-ran, context.Canceled)) // Run ends with ctx
	rec.waitFor(t, "lost")                      // and leaves the cache reading the server
	is.True(c.Stats().Lost)
}

// A stream silent for longer than the feed waits (no keep-alive either) is
// a lost one: the feed connects again, and resumes after the last event
// it saw.
func TestASilentStreamIsLost(t *testing.T) {
	s := newServerWith(t, setup{handler: []httpapi.Option{httpapi.WithStreamKeepAlive(time.Hour)}})
	cl := s.client(t, fast)
	f := cl.Feed()
	client.SetIdle(f, 500*time.Millisecond)
	rec := newRecorder(cache.New(cl))
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go func() { _ = f.Run(ctx, rec) }()
	rec.waitFor(t, "recovered")
	if _, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P"}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "invalidate ") // an event: the feed knows where it is
	rec.waitFor(t, "lost")
	rec.waitFor(t, "resumed")
}

// A feed the server refuses for good (a key it does not know) returns the
// error instead of trying for ever.
func TestTheFeedStopsWhenRefused(t *testing.T) {
	is := is.New(t)
	s := newServer(t)
	cl := newClient(t, s.URL, "not-a-key-of-this-server", fast)
	rec := newRecorder(cache.New(cl))
	err := cl.Feed().Run(t.Context(), rec)
	is.True(errors.Is(err, prompts.ErrUnauthenticated))
	is.True(rec.Stats().Lost) // never fed
}

// WaitEvents returns when an event follows, over the stream.
func TestWaitEventsFollowsTheStream(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	cl := s.client(t)
	last, err := cl.LastEventID(ctx)
	is.NoErr(err)
	waited := make(chan error, 1)
	go func() { waited <- cl.WaitEvents(ctx, last) }()
	select {
	case err := <-waited:
		t.Fatalf("WaitEvents returned before any event: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	_, err = cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	select {
	case err := <-waited:
		is.NoErr(err) // woken by the event
	case <-time.After(10 * time.Second):
		t.Fatal("WaitEvents did not return after an event")
	}
}

// routed sends the requests for the event stream to one server and all
// others to another, as a load balancer may.
type routed struct{ stream, rest string } // host:port

func (r routed) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Host, out.Host = r.rest, ""
	if strings.HasSuffix(req.URL.Path, "/events") {
		out.URL.Host = r.stream
	}
	return http.DefaultTransport.RoundTrip(out)
}

// A change comes on the stream of one replica while another, which
// answers the reads, has not yet heard of it (its cache's feed is
// behind): the cache over the client reads the change anyway, since the
// reads of what an event changed ask for a fresh answer, and keeps no
// value older than the event.
func TestTheReadsAfterAnEventAreFreshOnAnyReplica(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	ms := memstore.New()
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}))
	serve := func(store prompts.Store) string {
		h := httpapi.New(store, httpapi.WithAuthenticator(keys))
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		t.Cleanup(h.CloseStreams)
		return srv.Listener.Addr().String()
	}
	streaming := serve(ms)
	// A replica whose cache never hears of changes: the worst a feed
	// behind can do.
	lagging := serve(cache.New(ms, cache.Standalone()))

	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "G"})
	is.NoErr(err)
	prod := []prompts.Environment{prompts.Production}
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: prod})
	is.NoErr(err)

	cl := newClient(t, "http://"+lagging, adminKey, client.WithHTTPClient(&http.Client{Transport: routed{stream: streaming, rest: lagging}}))
	rec := newRecorder(cache.New(cl))
	fctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- cl.Feed().Run(fctx, rec) }()
	defer func() { stop(); <-ran }()
	rec.waitFor(t, "recovered")
	for _, read := range []func() (prompts.ActivePrompt, error){
		func() (prompts.ActivePrompt, error) { return rec.GetActive(ctx, p.ID, prompts.Production) },
		func() (prompts.ActivePrompt, error) {
			return rec.GetActiveByKey(ctx, proj.ID, "greeting", prompts.Production)
		},
	} {
		a, err := read()
		is.NoErr(err)
		is.Equal(a.ActiveVersion.Content, "one") // held by both caches now
	}

	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: prod}) // someone else
	is.NoErr(err)
	rec.waitFor(t, "invalidate "+p.ID) // the version
	rec.waitFor(t, "invalidate "+p.ID) // its deployment
	direct := newClient(t, "http://"+lagging, adminKey)
	a, err := direct.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "one") // the replica's cache is behind
	a, err = rec.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "two") // the cache over the client is not
	a, err = rec.GetActiveByKey(ctx, proj.ID, "greeting", prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "two") // by key too
	a, err = rec.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "two") // and keeps it
	is.True(rec.Stats().Hits > 0)
}

// A stream that broke before it delivered an event cannot be resumed: it
// started with the next event, and the feed never learnt which. So the
// feed starts afresh (Recovered: the cache drops what it holds) and the
// change made while it was cut is read, not missed.
func TestAFeedThatSawNoEventStartsAfresh(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	direct := s.client(t)
	proj, err := direct.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	prod := []prompts.Environment{prompts.Production}
	_, err = direct.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: prod})
	is.NoErr(err)

	px := newProxy(t, s.URL)
	cl := newClient(t, px.URL(), adminKey, fast)
	c := cache.New(cl)
	rec := newRecorder(c)
	fctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- cl.Feed().Run(fctx, rec) }()
	defer func() { stop(); <-ran }()
	rec.waitFor(t, "recovered")
	a, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "one") // cached; no event seen yet

	px.setDown(true)
	px.cut()
	rec.waitFor(t, "lost")
	_, err = direct.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: prod})
	is.NoErr(err) // while cut
	px.setDown(false)
	before := rec.waitFor(t, "recovered") // afresh, not resumed
	is.Equal(before, nil)
	is.Equal(c.Stats().Resumptions, int64(0))
	a, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "two") // the change made while cut
}
