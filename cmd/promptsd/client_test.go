package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
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
