package memstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// testClock is a clock that moves only when told.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func (c *testClock) jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A journal written before the event log opens with an empty log; the
// next write appends the first event.
func TestFileStoreOldJournalOpensWithAnEmptyLog(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old, err := os.ReadFile("testdata/journal-v1.data")
	is.NoErr(err)
	path := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.WriteFile(path, old, 0o600))
	s, err := memstore.Open(path)
	is.NoErr(err)
	defer func() { s.Close() }()
	last, err := s.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(last, int64(0)) // no event
	evs, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(evs), 0)
	p, err := s.CreateProject(ctx, prompts.NewProject{Name: "New"})
	is.NoErr(err)
	is.NoErr(s.Close())
	s, err = memstore.Open(path)
	is.NoErr(err)
	evs, _, err = s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(evs), 1) // the first event, kept
	is.Equal(evs[0].ID, int64(1))
	is.Equal(evs[0].Project.ID, p.ID)
}

// state is what a Store holds of its log and its webhooks, as text, for
// comparisons across a compaction and a reopen.
func state(t *testing.T, s *memstore.Store) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	evs, _, err := s.ListEvents(ctx, prompts.EventFilter{Limit: prompts.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	last, _ := s.LastEventID(ctx)
	fmt.Fprintf(&b, "last %d\n", last)
	for _, e := range evs {
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n", j)
	}
	ws, _, err := s.ListWebhooks(ctx, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		fmt.Fprintf(&b, "%+v\n", w)
		as, _, err := s.ListDeliveryAttempts(ctx, w.ID, prompts.Page{Limit: prompts.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			fmt.Fprintf(&b, "  %+v\n", a)
		}
	}
	return b.String()
}

// A compaction keeps the log (and the newest id the retention removed),
// the webhooks, the queued deliveries with their attempts, and the
// attempts; not the leases, which are kept in memory only.
func TestFileStoreCompactionKeepsEventsAndWebhooks(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	clock := newTestClock()
	var logs bytes.Buffer
	opts := []memstore.Option{memstore.WithClock(clock.Now), memstore.WithEventRetention(time.Hour),
		memstore.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}
	s, err := memstore.Open(path, opts...)
	is.NoErr(err)
	defer func() { s.Close() }()

	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	first, err := s.LastEventID(ctx)
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Q"})
	is.NoErr(err)
	clock.jump(2 * time.Hour) // the projects' events expire at the next write
	w, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	gone, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/gone", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
	is.NoErr(err)
	is.NoErr(s.DeleteWebhook(ctx, gone.ID))
	now := clock.Now()
	ds, err := s.ClaimDeliveries(ctx, now, 10, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 2) // the prompt's creation and its update
	is.NoErr(s.FinishDelivery(ctx, ds[0].ID, prompts.DeliveryAttempt{At: now, StatusCode: 500}, now.Add(time.Hour)))
	is.NoErr(s.FinishDelivery(ctx, ds[1].ID, prompts.DeliveryAttempt{At: now, StatusCode: 200}, time.Time{}))
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	leased, err := s.ClaimDeliveries(ctx, clock.Now(), 10, time.Hour) // the version's and its record's, leased until the restart
	is.NoErr(err)
	is.Equal(len(leased), 2)
	big := strings.Repeat("x", 2<<20)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: big}) // sets off a compaction
	is.NoErr(err)
	is.True(strings.Contains(logs.String(), "journal compacted"))
	before := state(t, s)

	is.NoErr(s.Close())
	s, err = memstore.Open(path, opts...)
	is.NoErr(err)
	is.Equal(state(t, s), before) // the same log, webhooks and attempts
	_, _, err = s.ListEvents(ctx, prompts.EventFilter{After: first})
	is.True(errors.Is(err, prompts.ErrEventsExpired)) // the retention's progress is kept
	_, err = s.GetWebhook(ctx, gone.ID)
	is.True(errors.Is(err, prompts.ErrNotFound)) // a deleted webhook stays deleted
	due, err := s.ClaimDeliveries(ctx, now.Add(30*time.Minute), 10, time.Minute)
	is.NoErr(err)
	is.Equal(deliveryIDs(due), append(deliveryIDs(leased), due[2].ID)) // the two leased before the restart, and the big version's: the retried one is not due
	due, err = s.ClaimDeliveries(ctx, now.Add(2*time.Hour), 10, time.Minute)
	is.NoErr(err)
	is.Equal(len(due), 4) // the retried one (its attempt counted), the two leased, the big version's again
	is.Equal(due[0].ID, ds[0].ID)
	is.Equal(due[0].Attempts, 1)
	is.Equal(due[1].ID, leased[0].ID)
	is.Equal(due[2].ID, leased[1].ID)
	is.Equal(due[0].Webhook.ID, w.ID)
	last, err := s.LastEventID(ctx)
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "R"})
	is.NoErr(err)
	next, err := s.LastEventID(ctx)
	is.NoErr(err)
	is.Equal(next, last+1) // ids go on where they were
}

// Attempts, and deliveries not ended, go with the event retention: memory
// stays bounded when no dispatcher runs or an endpoint stays down.
func TestRetentionRemovesAttemptsAndStaleDeliveries(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := newTestClock()
	s := memstore.New(memstore.WithClock(clock.Now), memstore.WithEventRetention(time.Hour))
	w, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Q"})
	is.NoErr(err)
	now := clock.Now()
	ds, err := s.ClaimDeliveries(ctx, now, 1, time.Minute)
	is.NoErr(err)
	is.NoErr(s.FinishDelivery(ctx, ds[0].ID, prompts.DeliveryAttempt{At: now, StatusCode: 500}, now.Add(time.Minute)))
	as, _, err := s.ListDeliveryAttempts(ctx, w.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(as), 1)

	clock.jump(2 * time.Hour)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "R"}) // a write: the retention applies
	is.NoErr(err)
	as, _, err = s.ListDeliveryAttempts(ctx, w.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(as), 0) // the attempt went
	ds, err = s.ClaimDeliveries(ctx, clock.Now(), 10, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 1) // the new event's only: those queued two hours ago went
	is.Equal(ds[0].Event.Project.Name, "R")
	evs, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	is.Equal(len(evs), 1) // and so did their events
}

// An event holds its version without a second copy of the content, in
// memory and in the file.
func TestEventsDoNotCopyContent(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	defer s.Close()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // twice: pools (encoding/json's buffers) keep what they hold for one GC
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	st, err := os.Stat(path)
	is.NoErr(err)
	size := st.Size()
	content := strings.Repeat("y", 1<<20)
	h := heap()
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	is.True(heap() < h+(1<<20)/2) // the content given is kept, once
	st, err = os.Stat(path)
	is.NoErr(err)
	t.Logf("a version of 1 MiB and its events: %d bytes of journal", st.Size()-size)
	is.True(st.Size()-size < 1<<20+4<<10) // once in the file, with a few hundred bytes of events
	runtime.KeepAlive(content)
}

// WaitEvents on a Store that writes no more returns at once, with the
// reason; a wait under way when the Store closes returns too.
func TestWaitEventsOnAClosedStore(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := memstore.Open(filepath.Join(t.TempDir(), "prompts.data"))
	is.NoErr(err)
	waiting := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(waiting)
		for {
			if err := s.WaitEvents(ctx, 0); err != nil {
				done <- err
				return
			}
		}
	}()
	<-waiting
	is.NoErr(s.Close())
	err = <-done
	is.Equal(prompts.ErrorCode(err), prompts.CodeUnavailable) // closed
	is.True(ctx.Err() == nil)                                 // not the deadline
}

func deliveryIDs(ds []prompts.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// An attempt to deliver to a receiver that never answers costs the data
// file one record, of under 512 bytes: the claim writes nothing (its lease
// is kept in memory), the attempt's record holds the attempt and the
// delivery's next try.
func TestFileStoreAttemptCostsOneSmallRecord(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	clock := newTestClock()
	s, err := memstore.Open(path, memstore.WithClock(clock.Now))
	is.NoErr(err)
	defer s.Close()
	_, err = s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/a/rather/long/path?token=0123456789abcdef0123456789abcdef", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	size := func() int64 {
		st, err := os.Stat(path)
		is.NoErr(err)
		return st.Size()
	}
	longest := strings.Repeat("e", 160) // the dispatcher clips its errors to 160 bytes
	for i := range 100 {
		now := clock.Now()
		before := size()
		ds, err := s.ClaimDeliveries(ctx, now, 1, 30*time.Second)
		is.NoErr(err)
		is.Equal(len(ds), 1)
		is.Equal(size(), before) // the claim wrote nothing
		a := prompts.DeliveryAttempt{At: now, Error: "no answer within 10s", Duration: 10 * time.Second}
		if i%2 == 1 {
			a.Error = longest
		}
		is.NoErr(s.FinishDelivery(ctx, ds[0].ID, a, now.Add(10*time.Minute)))
		grown := size() - before
		is.True(grown > 0)   // the attempt's record
		is.True(grown < 512) // under 512 bytes
		if i < 2 {
			t.Logf("an attempt with an error of %d bytes: %d bytes", len(a.Error), grown)
		}
		clock.jump(10 * time.Minute)
	}
}
