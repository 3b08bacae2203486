package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/internal/tcpproxy"
)

// roundRobin sends each request to the next of its servers in turn, as a
// load balancer in front of replicas does, and counts what each got.
type roundRobin struct {
	hosts []string // host:port

	mu   sync.Mutex
	next int
	sent map[string]int
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	host := rr.hosts[rr.next%len(rr.hosts)]
	rr.next++
	rr.sent[host]++
	rr.mu.Unlock()
	r := req.Clone(req.Context())
	r.URL.Host, r.Host = host, ""
	return http.DefaultTransport.RoundTrip(r)
}

// One client behind a load balancer over two servers on one database,
// each with its cache: every version it makes active, it reads at once by
// id and by key, whichever server answers, though the other server's
// cache held the value before.
func TestClientReadsItsWritesAcrossReplicas(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	a := start(t, env, "-project", "Shared")
	b := start(t, env, "-project", "Shared")
	a.key, b.key = testKey, testKey
	rr := &roundRobin{sent: make(map[string]int)}
	for _, s := range []*server{a, b} {
		u, err := url.Parse(s.base)
		is.NoErr(err)
		rr.hosts = append(rr.hosts, u.Host)
	}
	root := strings.TrimSuffix(a.base, client.Prefix)
	cl, err := client.New(root, testKey, client.WithHTTPClient(&http.Client{Transport: rr}))
	is.NoErr(err)

	ctx := t.Context()
	projects, _, err := cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(projects), 1) // project Shared
	p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projects[0].ID, Key: "support/greeting", Name: "Greeting"})
	is.NoErr(err)
	prod := []prompts.Environment{prompts.Production}
	_, err = cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello", Environments: prod})
	is.NoErr(err)
	for i := range 20 {
		// Both caches hold the active version before the write.
		for _, s := range []*server{a, b} {
			for range 2 {
				is.Equal(s.call(t, "GET", "/prompts/"+p.ID+"/environments/production", "", nil).StatusCode, 200)
				is.Equal(s.call(t, "GET", "/projects/"+projects[0].ID+"/prompts/support/greeting?environment=production", "", nil).StatusCode, 200)
			}
		}
		content := "Hello, v" + strconv.Itoa(i+1)
		v, err := cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: prod})
		is.NoErr(err)
		got, err := cl.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.Equal(got.ActiveVersion.VersionNumber, v.VersionNumber) // by id, the version just made
		got, err = cl.GetActiveByKey(ctx, projects[0].ID, "support/greeting", prompts.Production)
		is.NoErr(err)
		is.Equal(got.ActiveVersion.Content, content) // by key, the version just made
	}
	rr.mu.Lock()
	t.Logf("requests per server: %v", rr.sent)
	is.True(rr.sent[rr.hosts[0]] >= 30 && rr.sent[rr.hosts[1]] >= 30) // both servers answered
	rr.mu.Unlock()
	is.NoErr(a.stop(t))
	is.NoErr(b.stop(t))
}

// signalled is a cache that says when its feed invalidated something.
type signalled struct {
	*cache.Store
	invalidated chan struct{} // one pending signal at most
}

func (s signalled) Invalidate(inv prompts.Invalidation) {
	s.Store.Invalidate(inv)
	select {
	case s.invalidated <- struct{}{}:
	default:
	}
}

// BenchmarkClientCachePropagation measures how long a promotion made by
// someone else through a server takes to reach an application's cache
// over a client (cache.New(cl) fed by cl.Feed()): from the answer to the
// promoter's PUT until the cache answers the new version, by key, p50,
// p99 and the worst in ms over b.N promotions (-benchtime 200x). "one
// server": the promoter and the application use the same server; "two
// servers": the promoter another server on the same PostgreSQL database,
// so that the event comes through the database to the application's
// server, whose reads the application's cache then makes.
func BenchmarkClientCachePropagation(b *testing.B) {
	dsn, schema := testDatabase(b)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	a := start(b, env, "-project", "Shared")
	r := start(b, env, "-project", "Shared")
	defer func() { _ = a.stop(b); _ = r.stop(b) }()
	newCl := func(s *server) *client.Client {
		cl, err := client.New(strings.TrimSuffix(s.base, client.Prefix), testKey)
		if err != nil {
			b.Fatal(err)
		}
		return cl
	}
	ctx := b.Context()
	app := newCl(r)
	projects, _, err := app.ListProjects(ctx, prompts.ProjectFilter{})
	if err != nil || len(projects) != 1 {
		b.Fatalf("projects: %v, %v", projects, err)
	}
	projectID := projects[0].ID
	c := signalled{cache.New(app), make(chan struct{}, 1)}
	fctx, stop := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { _ = app.Feed().Run(fctx, c); close(fed) }()
	defer func() { stop(); <-fed }()
	poll.For(b, 10*time.Second, "the feed connected", func() bool { return !c.Stats().Lost })

	for _, bc := range []struct {
		name     string
		promoter *server
	}{{"one server", r}, {"two servers", a}} {
		b.Run(bc.name, func(b *testing.B) {
			promoter := newCl(bc.promoter)
			key := "greeting-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			p, err := promoter.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: key, Name: "Greeting"})
			if err != nil {
				b.Fatal(err)
			}
			for _, content := range []string{"one", "two"} {
				if _, err := promoter.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: []prompts.Environment{prompts.Production}}); err != nil {
					b.Fatal(err)
				}
			}
			read := func() int {
				got, err := c.GetActiveByKey(ctx, projectID, key, prompts.Production)
				if err != nil {
					b.Fatal(err)
				}
				return got.ActiveVersion.VersionNumber
			}
			poll.For(b, 5*time.Second, "the cache read version 2", func() bool { return read() == 2 })
			lags := make([]time.Duration, 0, b.N)
			current := 2
			b.ResetTimer()
			for range b.N {
				target := 3 - current
				select { // a signal of an earlier change
				case <-c.invalidated:
				default:
				}
				if _, err := promoter.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(target)}); err != nil {
					b.Fatal(err)
				}
				answered := time.Now()
				for read() != target {
					select {
					case <-c.invalidated:
					case <-time.After(100 * time.Millisecond):
					}
					if time.Since(answered) > 10*time.Second {
						b.Fatalf("the cache still answers version %d 10 s after the promotion to %d", current, target)
					}
				}
				lags = append(lags, time.Since(answered))
				if read() != target {
					b.Fatal("an older version after the newer one")
				}
				current = target
			}
			b.StopTimer()
			slices.Sort(lags)
			b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "max-ms")
		})
	}
	if st := c.Stats(); st.Lost || st.Losses > 0 {
		b.Fatalf("the feed was lost: %+v", st)
	}
}

// waitUntil polls cond until it holds; it fails the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.For(t, 10*time.Second, what, cond)
}

// The client against the built server on PostgreSQL, through networks
// that fail. Writes whose answers are lost are retried and done once (the
// server's idempotency records in PostgreSQL); an application's cache fed
// through a connection that is cut resumes where its stream was, applies
// the promotion made meanwhile through another server, and keeps what did
// not change.
func TestClientThroughFailingNetworks(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	a := start(t, env, "-project", "Shared")
	b := start(t, env, "-project", "Shared")
	a.key, b.key = testKey, testKey
	defer func() { is.NoErr(a.stop(t)); is.NoErr(b.stop(t)) }()
	host := func(s *server) string {
		u, err := url.Parse(s.base)
		is.NoErr(err)
		return u.Host
	}
	fast := client.WithRetry(client.RetryPolicy{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	newCl := func(hostport string) *client.Client {
		cl, err := client.New("http://"+hostport, testKey, fast)
		is.NoErr(err)
		return cl
	}
	ctx := t.Context()
	direct := newCl(host(a))
	projects, _, err := direct.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	proj := projects[0]
	p, err := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	is.NoErr(err)
	q, err := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "farewell", Name: "Farewell"})
	is.NoErr(err)
	prod := []prompts.Environment{prompts.Production}
	_, err = direct.CreateVersion(ctx, prompts.NewVersion{PromptID: q.ID, Content: "Bye", Environments: prod})
	is.NoErr(err)

	// Lost answers: each call on a client of its own, so that its first
	// attempt takes a new connection, whose answer the proxy drops.
	lossyProxy := tcpproxy.Start(t, host(a))
	lossy := func() *client.Client {
		lossyProxy.DropAnswers(1)
		return newCl(lossyProxy.Addr())
	}
	for i, content := range []string{"Hello", "Hi"} {
		v, err := lossy().CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: prod})
		is.NoErr(err)                  // retried
		is.True(v.Replayed)            // the retry was answered as the first attempt
		is.Equal(v.VersionNumber, i+1) // no duplicate: the numbers follow
	}
	r, err := lossy().Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(r.Replayed)
	is.Equal(r.ActiveVersion.Content, "Hello") // rolled back once
	vs, _, err := direct.ListVersions(ctx, p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 2) // one version a write
	ds, _, err := direct.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 3) // two activations and one rollback

	// A cut of the application's connection to its server.
	cutProxy := tcpproxy.Start(t, host(b))
	app := newCl(cutProxy.Addr())
	c := cache.New(app)
	fctx, stop := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { _ = app.Feed().Run(fctx, c); close(fed) }()
	defer func() { stop(); <-fed }()
	waitUntil(t, "the feed", func() bool { return !c.Stats().Lost })
	readKey := func() string {
		t.Helper()
		a, err := c.GetActiveByKey(ctx, proj.ID, "support/greeting", prompts.Production)
		is.NoErr(err)
		return a.ActiveVersion.Content
	}
	readQ := func() string {
		t.Helper()
		a, err := c.GetActive(ctx, q.ID, prompts.Production)
		is.NoErr(err)
		return a.ActiveVersion.Content
	}
	is.Equal(readKey(), "Hello")
	promote := func(n int) {
		t.Helper()
		_, err := direct.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n)})
		is.NoErr(err) // through the other server
	}
	promote(2)
	waitUntil(t, "the promotion", func() bool { return readKey() == "Hi" }) // its event came
	is.Equal(readQ(), "Bye")

	cutProxy.Cut(true)
	waitUntil(t, "the loss", func() bool { return c.Stats().Lost })
	promote(1) // meanwhile
	cutProxy.Cut(false)
	waitUntil(t, "the resumption", func() bool { st := c.Stats(); return !st.Lost && st.Resumptions == 1 })
	waitUntil(t, "the promotion made while cut", func() bool { return readKey() == "Hello" }) // applied
	hits := c.Stats().Hits
	is.Equal(readQ(), "Bye")
	is.Equal(c.Stats().Hits, hits+1) // what did not change was kept across the cut
	st := c.Stats()
	is.Equal(st.Recoveries, int64(1)) // resumed, never started afresh
}
