package client_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// split is a load balancer that sends writes to one replica and reads to
// another, and records whether each read asked for a fresh answer.
type split struct {
	writes, reads *url.URL
	mu            sync.Mutex
	noCache       []bool
}

func (s *split) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.Method == http.MethodGet {
		r.URL.Host = s.reads.Host
		s.mu.Lock()
		s.noCache = append(s.noCache, r.Header.Get("Cache-Control") == "no-cache")
		s.mu.Unlock()
	} else {
		r.URL.Host = s.writes.Host
	}
	return http.DefaultTransport.RoundTrip(r)
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
// write yet answers from the store.
func TestAProcessReadsItsOwnWritesThroughAnyReplica(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	ms := memstore.New()
	keys := httpapi.NewKeys()
	is.NoErr(keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}))
	replica := func() *url.URL {
		// A cache that no feed tells of the other replica's writes: the
		// worst lag there is.
		srv := httptest.NewServer(httpapi.New(cache.New(ms, cache.Standalone()), httpapi.WithAuthenticator(keys)))
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		return u
	}
	lb := &split{writes: replica(), reads: replica()}
	cl := newClient(t, "http://lb.invalid", adminKey, client.WithHTTPClient(&http.Client{Transport: lb}))
	client.SetFreshWindow(cl, 300*time.Millisecond)

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
	is.NoErr(err)                                                                      // written through the other replica
	is.Equal(content(cl.GetActive(ctx, p.ID, prompts.Production)), "two")              // read at once
	is.Equal(content(cl.GetActiveByKey(ctx, proj.ID, "k", prompts.Production)), "two") // by key too
	_, err = cl.GetActive(ctx, other.ID, prompts.Production)
	is.NoErr(err)
	asked := lb.asked()
	is.Equal(asked[0], true)             // fresh, by id
	is.Equal(asked[len(asked)-1], false) // another prompt: from the cache

	time.Sleep(400 * time.Millisecond)                                    // the window ends
	is.Equal(content(cl.GetActive(ctx, p.ID, prompts.Production)), "one") // this replica's cache, which no feed moved on
	is.Equal(lb.asked(), []bool{false})
}
