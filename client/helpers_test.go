package client_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/storetest"
)

// The secrets of the test server's keys: an admin key for every project,
// and a read key.
const (
	adminKey  = "admin-key-0123456789"
	readKey   = "read-key-0123456789"
	deployKey = "deploy-key-0123456789"
)

// server is httpapi over a fresh memstore, behind a real HTTP server that
// records the requests it gets.
type server struct {
	store *memstore.Store
	h     *httpapi.Handler
	srv   *httptest.Server
	URL   string

	mu   sync.Mutex
	seen []seen
}

// seen is a request a server got.
type seen struct {
	method, path string
	header       http.Header
}

// setup says how to build a server.
type setup struct {
	store   []memstore.Option
	handler []httpapi.Option
	wrap    func(http.Handler) http.Handler // in front of the handler
}

// newServer starts a server over a memstore made with opts.
func newServer(t testing.TB, opts ...memstore.Option) *server {
	return newServerWith(t, setup{store: opts})
}

// newServerWith starts a server as su says; it stops with the test (its
// streams first, so that Close does not wait for them).
func newServerWith(t testing.TB, su setup) *server {
	t.Helper()
	ms := memstore.New(su.store...)
	keys := httpapi.NewKeys()
	for _, k := range []httpapi.Key{
		{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey},
		{Name: "reader", Role: httpapi.RoleRead, Secret: readKey},
		{Name: "deployer", Role: httpapi.RoleDeploy, Secret: deployKey},
	} {
		if err := keys.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	// A body limit above the default: the suite writes versions of 1 MiB.
	h := httpapi.New(ms, append([]httpapi.Option{httpapi.WithAuthenticator(keys), httpapi.WithBodyLimit(8 << 20)}, su.handler...)...)
	s := &server{store: ms, h: h}
	var root http.Handler = h
	if su.wrap != nil {
		root = su.wrap(h)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, seen{r.Method, r.URL.Path, r.Header.Clone()})
		s.mu.Unlock()
		root.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	t.Cleanup(h.CloseStreams)
	return s
}

// requests returns the requests the server got, and forgets them.
func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// client returns a client of the server with the admin key.
func (s *server) client(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	return newClient(t, s.srv.URL, adminKey, opts...)
}

func newClient(t testing.TB, base, key string, opts ...client.Option) *client.Client {
	t.Helper()
	cl, err := client.New(base, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestStore runs the conformance suite over a client of a server over
// memstore: code written against a Store runs against a server. The
// client differs from a local Store in the two ways its package doc
// says, which it declares to the suite (overHTTP).
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		srv := newServer(t, memstore.WithClock(clock))
		return overHTTP{srv.client(t), newClient(t, srv.URL, deployKey)}
	})
}

// overHTTP is a client as the suite sees it. The server records the API
// key's name as the actor of every change (a caller cannot claim to be
// someone else: Change.Actor and NewVersion.Actor are not sent), and an
// event sends its prompt with the prompt list's fields, which hold no
// revision.
// Its changes of protected environments are the admin key's; Deployer
// is a client of the same server with a deploy key.
type overHTTP struct {
	*client.Client
	deployer *client.Client
}

var (
	_ storetest.RecordedActor               = overHTTP{}
	_ storetest.EventPromptsWithoutRevision = overHTTP{}
	_ storetest.ProtectionByRole            = overHTTP{}
)

func (o overHTTP) Deployer() prompts.Store { return o.deployer }

func (overHTTP) RecordedActor() string        { return "admin" } // the name of the key of server.client
func (overHTTP) EventPromptsWithoutRevision() {}
