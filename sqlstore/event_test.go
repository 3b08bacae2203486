package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/sqlstore"
)

// TestEventsInCommitOrderAcrossProcesses: writer processes, each with
// several goroutines, make every kind of change at once (single
// statements and transactions, on prompts of their own and on a shared
// one), while a reader follows the log page by page, each page after the
// last id it saw. The reader must see exactly the log as it stands at the
// end: an id handed to a write that commits after a write holding a
// larger one would be skipped by a reader that saw the larger one first.
func TestEventsInCommitOrderAcrossProcesses(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	proj, shared := fixture(t, s)
	_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: shared.ID, Content: "shared"})
	is.NoErr(err)
	before, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(before), 3) // the fixture's
	start := before[2].ID

	// A pool of its own: the reader waits for no writer's connection.
	reader, err := sqlstore.New(openDB(t, 1, ""), sqlstore.WithSchema(s.Schema()))
	is.NoErr(err)
	defer reader.Close()
	done := make(chan struct{})
	followed := make(chan []int64, 1)
	go func() {
		var seen []int64
		after := start
		for {
			finished := false
			select {
			case <-done:
				finished = true // read to the end once more
			default:
			}
			page, more, err := reader.ListEvents(ctx, prompts.EventFilter{After: after, Limit: 5})
			if err != nil {
				t.Errorf("following the log: %v", err)
				break
			}
			for _, e := range page {
				seen = append(seen, e.ID)
				after = e.ID
			}
			if finished && !more {
				break
			}
		}
		followed <- seen
	}()

	const processes, writers, each = 4, 3, 12
	outs := runChildren(t, "events", s.Schema(), shared.ID, processes, writers, func(i int) []string {
		return []string{"SQLSTORE_TEST_PROJECT=" + proj.ID, "SQLSTORE_TEST_EACH=" + strconv.Itoa(each), "SQLSTORE_TEST_NAME=p" + strconv.Itoa(i)}
	})
	close(done)
	made := 0
	for i, out := range outs {
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("writer process %d: %q", i, out)
		}
		made += n
	}
	seen := <-followed

	var all []int64
	for after := start; ; {
		page, more, err := s.ListEvents(ctx, prompts.EventFilter{After: after, Limit: prompts.MaxLimit})
		is.NoErr(err)
		for _, e := range page {
			all = append(all, e.ID)
			after = e.ID
		}
		if !more {
			break
		}
	}
	is.Equal(len(all), made) // every change appended its events
	for i := 1; i < len(all); i++ {
		is.True(all[i] > all[i-1]) // ids increase
	}
	if len(seen) != len(all) {
		t.Fatalf("the reader saw %d events of %d", len(seen), len(all))
	}
	for i := range all {
		if seen[i] != all[i] {
			t.Fatalf("the reader's event %d is %d, the log's %d: it skipped one", i, seen[i], all[i])
		}
	}
	t.Logf("%d processes appended %d events; the reader missed none", processes, made)
}

// runEventsChild is a process of TestEventsInCommitOrderAcrossProcesses:
// each goroutine makes a prompt of its own and changes it, and versions
// the shared prompt, in every way a Store writes; it prints the number of
// events its writes appended.
func runEventsChild() int {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	each, err := strconv.Atoi(env("EACH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, writers, closeAll, err := openChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer closeAll()
	var (
		wg     sync.WaitGroup
		events atomic.Int64
		failed atomic.Bool
	)
	ctx := context.Background()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) bool {
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Store(true)
				}
				return err != nil
			}
			key := fmt.Sprintf("%s-%d", env("NAME"), w)
			p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: env("PROJECT"), Key: key, Name: key})
			if fail(err) {
				return
			}
			events.Add(1)
			for i := range each {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}})
				if fail(err) {
					return
				}
				_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "d"})
				if fail(err) {
					return
				}
				_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(2 * (i + 1))})
				if fail(err) {
					return
				}
				_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some(fmt.Sprintf("%s %d", key, i))})
				if fail(err) {
					return
				}
				_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: env("PROMPT"), Content: key, Idempotency: prompts.Idempotency{Scope: "t", Key: fmt.Sprintf("%s-%d", key, i)}})
				if fail(err) {
					return
				}
				_, err = s.CreateProject(ctx, prompts.NewProject{Name: fmt.Sprintf("%s %d", key, i)})
				if fail(err) {
					return
				}
				events.Add(7) // version + record, version, record, prompt, version, project
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		return 1
	}
	fmt.Println(events.Load())
	return 0
}

// setClock is a clock a test moves.
type setClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *setClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *setClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestEventRetention: events older than the retention, by the Store's
// clock, are removed by later writes, at most 16 at each, from the
// oldest; a reader after a removed one gets ErrEventsExpired, and the
// deliveries of removed events go with them. Attempts older than the
// retention are removed by later attempts, 16 at a time.
func TestEventRetention(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := &setClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := newSQLStore(t, sqlstore.WithClock(clock.Now), sqlstore.WithEventRetention(time.Hour))
	w, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	for i := range 40 {
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: fmt.Sprintf("P%d", i)})
		is.NoErr(err) // events 1 to 40
	}
	// 20 attempts, made now.
	ds, err := s.ClaimDeliveries(ctx, clock.Now(), 20, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 20)
	for _, d := range ds {
		is.NoErr(s.FinishDelivery(ctx, d.ID, prompts.DeliveryAttempt{StatusCode: 500}, clock.Now().Add(time.Minute)))
	}
	project := func(name string) {
		t.Helper()
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: name + " " + prompts.NewID(time.Now())})
		is.NoErr(err)
	}
	expired := func(after int64) bool {
		t.Helper()
		_, _, err := s.ListEvents(ctx, prompts.EventFilter{After: after})
		if err != nil && !errors.Is(err, prompts.ErrEventsExpired) {
			t.Fatal(err)
		}
		return err != nil
	}
	oldest := func() int64 {
		t.Helper()
		page, _, err := s.ListEvents(ctx, prompts.EventFilter{Limit: 1})
		is.NoErr(err)
		return page[0].ID
	}

	clock.add(59 * time.Minute)
	project("Kept") // event 41: nothing is old enough yet
	is.Equal(oldest(), int64(1))
	is.True(!expired(1))

	clock.add(2 * time.Minute)
	project("Later") // event 42, which removes events 1 to 16
	is.Equal(oldest(), int64(17))
	is.True(expired(15)) // 16 is gone
	is.True(!expired(16))
	project("Later") // event 43: 17 to 32
	is.Equal(oldest(), int64(33))
	project("Later") // event 44: 33 to 40; 41 is younger
	is.Equal(oldest(), int64(41))
	is.True(expired(39))
	is.True(!expired(40))
	is.True(!expired(0)) // 0 reads from the oldest kept
	last, err := s.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(last, int64(44))

	// Of the deliveries, only those of the events kept are left (the
	// retried ones went with their events).
	ds, err = s.ClaimDeliveries(ctx, clock.Now(), prompts.MaxLimit, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 4)
	is.Equal(ds[0].Event.ID, int64(41))

	// The 20 attempts are past the retention: each new one removes 16.
	is.Equal(len(attempts(t, s, w.ID)), 20)
	is.NoErr(s.FinishDelivery(ctx, ds[0].ID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{}))
	is.Equal(len(attempts(t, s, w.ID)), 20-16+1)
	is.NoErr(s.FinishDelivery(ctx, ds[1].ID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{}))
	is.Equal(len(attempts(t, s, w.ID)), 2) // only the new ones
}

// attempts returns all of a webhook's attempts.
func attempts(t *testing.T, s *sqlstore.Store, webhookID string) []prompts.DeliveryAttempt {
	t.Helper()
	as, _, err := s.ListDeliveryAttempts(context.Background(), webhookID, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// TestWaitEventsWokenByTheFeed: a waiter of one Store returns soon after
// another Store on its own pool (another process, as far as PostgreSQL
// can tell) appends an event, when a Feed reports to its Store; without
// a Feed, within EventPoll. Its own writes wake it at once.
//
// The waiting Store reads the database through a proxy, on one
// connection: once the database answered the waiter's read of the newest
// event, a write comes after that read.
func TestWaitEventsWokenByTheFeed(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	schema := newSQLStore(t).Schema()
	proxy := startProxy(t)
	db, err := sqlx.Open("postgres", proxy.url)
	is.NoErr(err) // a pool through the proxy
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: the waiter's read is the only thing on it
	here, err := sqlstore.New(db, sqlstore.WithSchema(schema))
	is.NoErr(err)
	defer here.Close()
	there, err := sqlstore.New(openDB(t, 2, ""), sqlstore.WithSchema(schema))
	is.NoErr(err)
	defer there.Close()

	// wait waits for the events after the newest while write runs, and
	// returns how long it took.
	wait := func(write func()) time.Duration {
		t.Helper()
		last, err := here.LastEventID(ctx) // (which also prepares the waiter's read on the connection)
		is.NoErr(err)
		waited := make(chan error, 1)
		proxy.reset()
		begin := time.Now()
		go func() { waited <- here.WaitEvents(ctx, last) }()
		poll.For(t, 10*time.Second, "the waiter reads the newest event", func() bool { return proxy.answered() > 0 })
		write()
		is.NoErr(<-waited)
		return time.Since(begin)
	}
	project := func(s *sqlstore.Store) func() {
		return func() {
			_, err := s.CreateProject(ctx, prompts.NewProject{Name: "P " + prompts.NewID(time.Now())})
			is.NoErr(err)
		}
	}

	took := wait(project(here))
	is.True(took < sqlstore.EventPoll/2) // woken by its own write
	took = wait(project(there))
	is.True(took >= sqlstore.EventPoll-100*time.Millisecond) // no feed: another's write is seen at the poll
	is.True(took < 2*sqlstore.EventPoll)

	dsn, _ := feedDSN(t)
	listening := make(chan struct{}, 1)
	feed := sqlstore.NewFeed(dsn, sqlstore.WithSchema(here.Schema()))
	go func() { _ = feed.Run(ctx, prompts.Sinks(here, recoveredSink(listening))) }()
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not listen")
	}
	took = wait(project(there))
	is.True(took < sqlstore.EventPoll/2) // woken by the feed: a project's event notifies too
	took = wait(func() {
		p, err := there.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: mustProject(t, here), Key: "k", Name: "K"})
		is.NoErr(err)
		_, err = there.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("L")})
		is.NoErr(err)
	})
	is.True(took < sqlstore.EventPoll/2) // and a prompt's

	// ctx's end ends a wait.
	last, err := here.LastEventID(ctx)
	is.NoErr(err)
	short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	for err == nil { // a wait may end early (the feed woke it): the caller waits again
		err = here.WaitEvents(short, last)
	}
	is.True(errors.Is(err, context.DeadlineExceeded)) // ctx's error
}

// recoveredSink signals on c when a feed reports Recovered.
type recoveredSink chan struct{}

func (c recoveredSink) Invalidate(prompts.Invalidation) {}
func (c recoveredSink) Lost()                           {}
func (c recoveredSink) Recovered() {
	select {
	case c <- struct{}{}:
	default:
	}
}

// mustProject returns the id of a new project of s.
func mustProject(t *testing.T, s prompts.Store) string {
	t.Helper()
	p, err := s.CreateProject(context.Background(), prompts.NewProject{Name: "P " + prompts.NewID(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// TestWritesSerializableDefault: on a database whose default isolation is
// SERIALIZABLE, writers racing for the event counter get serialization
// failures where READ COMMITTED waits; the Store then runs the write again
// in a READ COMMITTED transaction, and every write succeeds with its
// event.
func TestWritesSerializableDefault(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	first := newSQLStore(t)
	db := openDB(t, 8, "default_transaction_isolation=serializable")
	s, err := sqlstore.New(db, sqlstore.WithSchema(first.Schema()))
	is.NoErr(err)
	defer s.Close()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("k%d-%d", w, i)
				p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: key, Name: key})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("renamed")}); err != nil {
					t.Error(err)
				}
				if _, err := s.CreateProject(ctx, prompts.NewProject{Name: key}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	for after := int64(0); ; {
		page, more, err := s.ListEvents(ctx, prompts.EventFilter{After: after, Limit: prompts.MaxLimit})
		is.NoErr(err)
		n += len(page)
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	is.Equal(n, 1+3*writers*each) // every write appended its event
}
