package sqlstore_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// TestRoundTrips counts the round trips each method makes to the
// database, through a proxy that counts the times the client speaks after
// the server did. (It needs PROMPTS_TEST_DATABASE_URL in URL form, TCP or
// ?host=/socket/dir.) Once the statements are prepared on the connection,
// every read is one round trip, and so are the writes of one statement,
// CreateVersion among them when it does not race (when it does, its retry
// under the lock costs four more), each with its event; the read of an
// environment that holds a split is two. Activate and
// Deactivate run in a transaction: BEGIN, lock, the change when there is
// one, the answer, the event when there is a change, COMMIT; a change to
// or from a split reads the versions and the state before it writes.
//
// The pool has one connection, so this also proves that a transaction
// never needs a second one (to prepare a statement, say): with every
// connection of the pool in a transaction, that would wait forever.
func TestRoundTrips(t *testing.T) {
	is := is.New(t)
	// A transaction waiting for a second connection would wait forever:
	// fail instead.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := newSQLStore(t)
	proxy := startProxy(t)
	db, err := sqlx.Open("postgres", proxy.url)
	is.NoErr(err) // a pool through the proxy
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: the statements get prepared on it once
	s, err := sqlstore.New(db, sqlstore.WithSchema(first.Schema()))
	is.NoErr(err) // a store on that pool
	defer s.Close()

	proj, p := fixture(t, s)
	v1, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // a version
	flip := 1
	// A prompt whose production holds a split.
	q, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "split", Name: "Split"})
	is.NoErr(err)
	for range 2 {
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: q.ID, Content: "c"})
		is.NoErr(err)
	}
	weight := 50
	_, err = s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Production, Split: split(1, weight, 2, 100-weight)})
	is.NoErr(err)
	calls := []struct {
		name  string
		trips int
		call  func() error
	}{
		{"GetActive", 1, func() error { _, err := s.GetActive(ctx, p.ID, prompts.Production); return err }},
		{"GetActiveByKey", 1, func() error {
			_, err := s.GetActiveByKey(ctx, proj.ID, p.Key, prompts.Production)
			return err
		}},
		{"GetPrompt", 1, func() error { _, err := s.GetPrompt(ctx, p.ID); return err }},
		{"GetProject", 1, func() error { _, err := s.GetProject(ctx, proj.ID); return err }},
		{"GetVersion", 1, func() error { _, err := s.GetVersion(ctx, p.ID, 1); return err }},
		{"ListVersions", 1, func() error { _, _, err := s.ListVersions(ctx, p.ID, prompts.Page{}); return err }},
		{"ListPrompts", 1, func() error {
			_, _, err := s.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{proj.ID}})
			return err
		}},
		{"ListProjects", 1, func() error { _, _, err := s.ListProjects(ctx, prompts.ProjectFilter{}); return err }},
		{"CreateProject", 1, func() error {
			_, err := s.CreateProject(ctx, prompts.NewProject{Name: "P " + prompts.NewID(time.Now())})
			return err
		}},
		{"CreatePrompt", 1, func() error {
			_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + prompts.NewID(time.Now()), Name: "n"})
			return err
		}},
		{"UpdatePrompt", 1, func() error {
			_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("renamed")})
			return err
		}},
		{"CreateVersion", 1, func() error {
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
			return err
		}},
		{"CreateVersion, active in environments", 7, func() error { // BEGIN, lock, insert, point twice, events, COMMIT
			_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Staging, prompts.Production}})
			return err
		}},
		{"ListEvents", 1, func() error { _, _, err := s.ListEvents(ctx, prompts.EventFilter{}); return err }},
		{"ListEvents, some projects", 1, func() error {
			_, _, err := s.ListEvents(ctx, prompts.EventFilter{ProjectIDs: []string{proj.ID}})
			return err
		}},
		{"LastEventID", 1, func() error { _, err := s.LastEventID(ctx); return err }},
		{"CreateWebhook", 1, func() error {
			_, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", ProjectIDs: []string{proj.ID}, Secret: prompts.NewWebhookSecret()})
			return err
		}},
		{"ClaimDeliveries", 1, func() error {
			_, err := s.ClaimDeliveries(ctx, time.Now(), 10, time.Minute)
			return err
		}},
		{"ListDeployments", 1, func() error {
			_, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
			return err
		}},
		{"Rollback", 7, func() error { // BEGIN, lock, target, point, read, event, COMMIT
			_, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
			return err
		}},
		{"Activate, a change", 6, func() error { // BEGIN, lock, point, read, event, COMMIT
			flip = 3 - flip // version 1, 2, 1, …
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(flip)})
			return err
		}},
		{"Activate, no change", 5, func() error { // the same, without event
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v1.ID)})
			return err
		}},
		{"Deactivate, a change", 6, func() error { // BEGIN, lock, clear, read, event, COMMIT
			if _, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(v1.ID)}); err != nil {
				return err
			}
			proxy.reset() // count only what follows
			return deactivate(ctx, s, p.ID, prompts.Staging)
		}},
		{"Deactivate, no change", 5, func() error { return deactivate(ctx, s, p.ID, prompts.Staging) }}, // the same, without event
		{"GetActive, a split", 2, func() error { // the read, then the versions of the split's entries
			_, err := s.GetActive(ctx, q.ID, prompts.Production)
			return err
		}},
		{"GetActiveByKey, a split", 2, func() error {
			_, err := s.GetActiveByKey(ctx, proj.ID, q.Key, prompts.Production)
			return err
		}},
		{"Activate, a split", 9, func() error { // BEGIN, lock, versions, state, hold, read (two), event, COMMIT
			weight = 110 - weight // 60/40, 50/50, …
			_, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Production, Split: split(1, weight, 2, 100-weight)})
			return err
		}},
		{"Activate, the same split", 7, func() error { // the same, without hold and event
			_, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Production, Split: split(1, weight, 2, 100-weight)})
			return err
		}},
		{"Activate, a version over a split", 9, func() error { // BEGIN, lock, point (which finds the split), version, state, hold, read, event, COMMIT
			if _, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, Split: split(1, 1, 2, 1)}); err != nil {
				return err
			}
			proxy.reset() // count only what follows
			_, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1)})
			return err
		}},
		{"Deactivate, a split", 6, func() error { // as for one version
			if _, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, Split: split(1, 1, 2, 1)}); err != nil {
				return err
			}
			proxy.reset()
			return deactivate(ctx, s, q.ID, prompts.Staging)
		}},
		{"Rollback, to a split", 10, func() error { // BEGIN, lock, target, versions, state, hold, read (two), event, COMMIT
			if _, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, Split: split(1, 1, 2, 1)}); err != nil {
				return err
			}
			if _, err := s.Activate(ctx, prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(2)}); err != nil {
				return err
			}
			proxy.reset()
			_, err := s.Rollback(ctx, prompts.Rollback{PromptID: q.ID, Environment: prompts.Staging})
			return err
		}},
	}
	for _, c := range calls {
		is.NoErr(c.call()) // first call: prepares the statement on the connection
		proxy.reset()
		err := c.call()
		is.NoErr(err) // call again
		if got := proxy.trips(); got != c.trips {
			t.Errorf("%s: %d round trips, want %d", c.name, got, c.trips)
		}
	}

	// Why the statements are prepared: lib/pq sends an unprepared query
	// with parameters in two round trips (parse and describe, then bind
	// and execute).
	proxy.reset()
	var one int
	is.NoErr(db.QueryRowContext(ctx, `SELECT $1::int`, 1).Scan(&one)) // unprepared query
	is.Equal(proxy.trips(), 2)                                        // two round trips

	// A version written from a clock an hour ahead makes the next one,
	// from this store, retry under the lock.
	ahead, err := sqlstore.New(database(t), sqlstore.WithSchema(first.Schema()), sqlstore.WithClock(skewedClock(time.Hour)))
	is.NoErr(err) // a store with a clock ahead
	defer ahead.Close()
	for i := range 2 { // the first time prepares the lock statement
		_, err = ahead.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "ahead"})
		is.NoErr(err) // a version with an id from the future
		proxy.reset()
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "behind"})
		is.NoErr(err) // a version from behind
		if i == 1 {
			is.Equal(proxy.trips(), 1+4) // the statement, then BEGIN, lock, insert (with its event), COMMIT
		}
	}
}

// countingProxy forwards TCP between the client and PostgreSQL and counts
// round trips: the times the client sends after the server has sent (or
// first).
type countingProxy struct {
	url string

	mu         sync.Mutex
	n          int
	answers    int  // the times the server spoke after the client
	clientTurn bool // the client spoke last
	frozen     bool // connections stay open, no byte goes through
	thawed     *sync.Cond
}

// freeze stops forwarding (or starts again): a database gone silent
// without closing its connections.
func (p *countingProxy) freeze(frozen bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = frozen
	p.thawed.Broadcast()
}

func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n, p.answers, p.clientTurn = 0, 0, false
}

// answered returns the times the server answered since reset: once it
// answered a query, the query ran, and its snapshot was taken.
func (p *countingProxy) answered() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answers
}

// trips returns the round trips since reset. A call that returned has
// read its last answer, which the proxy counted before it forwarded it
// (pump calls saw first): nothing of the call is left to count.
func (p *countingProxy) trips() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *countingProxy) saw(fromClient bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen {
		p.thawed.Wait()
	}
	if fromClient && !p.clientTurn {
		p.n++
	}
	if !fromClient && p.clientTurn {
		p.answers++
	}
	p.clientTurn = fromClient
}

// startProxy starts a proxy to the test database and returns it with the
// URL that goes through it (TLS turned off, so that bytes are messages).
func startProxy(t *testing.T) *countingProxy {
	t.Helper()
	database(t)
	u, err := url.Parse(os.Getenv(databaseURLVar))
	if err != nil || u.Scheme == "" {
		t.Fatalf("%s must be a postgres:// URL for this test: %v", databaseURLVar, err)
	}
	network, addr := "tcp", u.Host
	q := u.Query()
	if h := q.Get("host"); strings.HasPrefix(h, "/") { // a unix socket directory
		port := u.Port()
		if p := q.Get("port"); p != "" {
			port = p
		}
		if port == "" {
			port = "5432"
		}
		network, addr = "unix", filepath.Join(h, ".s.PGSQL."+port)
		q.Del("host")
	} else if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{}
	p.thawed = sync.NewCond(&p.mu)
	var wg sync.WaitGroup
	t.Cleanup(func() { p.freeze(false); _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial(network, addr)
			if err != nil {
				_ = client.Close()
				continue
			}
			wg.Add(2)
			go p.pump(&wg, server, client, true)
			go p.pump(&wg, client, server, false)
		}
	}()
	q.Set("sslmode", "disable")
	u.Host = ln.Addr().String()
	u.RawQuery = q.Encode()
	p.url = u.String()
	return p
}

func (p *countingProxy) pump(wg *sync.WaitGroup, dst, src net.Conn, fromClient bool) {
	defer wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.saw(fromClient)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = src.Close()
			}
			return
		}
	}
}
