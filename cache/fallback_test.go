package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// down is a store whose reads and writes fail as unavailable while it is
// down, as a database that cannot be reached. (A cache sees only the
// Store interface; the HTTP tests and the test on PostgreSQL below cut a
// real connection.)
type down struct {
	prompts.Store
	isDown atomic.Bool
	reads  atomic.Int64
	fast   atomic.Int64 // reads asked with prompts.ActiveQuery.FailFast
}

// read counts a read and says whether it fails.
func (d *down) read(context.Context) bool {
	d.reads.Add(1)
	return d.isDown.Load()
}

// ReadActive counts a read, and whether it was asked to fail fast.
func (d *down) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	if q.FailFast {
		d.fast.Add(1)
	}
	if d.read(ctx) {
		return prompts.ActivePrompt{}, false, errDown
	}
	return prompts.ReadActive(ctx, d.Store, q)
}

var errDown = prompts.Unavailable(errors.New("connection refused"))

func (d *down) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if d.read(ctx) {
		return prompts.ActivePrompt{}, errDown
	}
	return d.Store.GetActive(ctx, id, env)
}

func (d *down) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if d.read(ctx) {
		return prompts.ActivePrompt{}, errDown
	}
	return d.Store.GetActiveByKey(ctx, projectID, key, env)
}

func (d *down) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	if d.read(ctx) {
		return prompts.Prompt{}, errDown
	}
	return d.Store.GetPrompt(ctx, id)
}

func (d *down) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	if d.read(ctx) {
		return prompts.Project{}, errDown
	}
	return d.Store.GetProject(ctx, id)
}

func (d *down) GetVersion(ctx context.Context, id string, n int) (prompts.PromptVersion, error) {
	if d.read(ctx) {
		return prompts.PromptVersion{}, errDown
	}
	return d.Store.GetVersion(ctx, id, n)
}

// embedded returns the snapshot of the project as an application embeds
// it: written out and parsed back.
func embedded(t *testing.T, store prompts.Store, projectID string) *cache.Snapshot {
	t.Helper()
	s, err := cache.TakeSnapshot(context.Background(), store, projectID)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	s, err = cache.ParseSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A cold cache over a store that cannot be reached answers from its
// snapshot, marked stale; what the snapshot does not hold fails as the
// store does. Once the store answers, its values answer, and they, not
// the snapshot's, are what the cache falls back on next.
func TestFallbackAnswersWhileTheStoreIsDown(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	snap := embedded(t, ms, proj.ID)
	greeting := list[0]
	_, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: greeting.ID, Content: "Hey {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // a change after the snapshot was taken

	d := &down{Store: ms}
	d.isDown.Store(true)
	c := cache.New(d, cache.WithFallback(snap)) // a feed that never connected: every read asks the store
	clock := newFakeNow()
	cache.SetNow(c, clock.now)

	a, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: greeting.ID, Environment: prompts.Production})
	is.NoErr(err)                                    // from the snapshot
	is.Equal(a.ActiveVersion.Content, "Hi {{name}}") // as it was when taken
	is.True(stale)                                   // marked
	is.Equal(a.Revision, snap.Prompts[0].Prompt.Revision)
	a.ActiveVersion.Content = "changed by the caller"
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "support/greeting", Environment: prompts.Staging})
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "Hello {{name}}") // by key, in the other environment
	a, _, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: greeting.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "Hi {{name}}") // a copy was handed out
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[2].ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale)
	is.True(a.ActiveVersion == nil) // nothing active there, as the snapshot says
	p, err := c.GetPrompt(ctx, greeting.ID)
	is.NoErr(err)
	is.Equal(p.Key, "support/greeting")
	pr, err := c.GetProject(ctx, proj.ID)
	is.NoErr(err)
	is.Equal(pr, proj)
	is.Equal(c.Stats().Stale, int64(6))
	is.Equal(c.Stats().Entries, int64(0)) // nothing of it kept

	for name, read := range map[string]func() error{
		"another project's prompt": func() error { _, err := c.GetActive(ctx, list[3].ID, prompts.Production); return err },
		"an unknown key":           func() error { _, err := c.GetActiveByKey(ctx, proj.ID, "nope", prompts.Production); return err },
		"a version":                func() error { _, err := c.GetVersion(ctx, greeting.ID, 1); return err },
		"an unknown project":       func() error { _, err := c.GetProject(ctx, list[3].ProjectID); return err },
	} {
		if err := read(); !errors.Is(err, prompts.ErrUnavailable) {
			t.Errorf("%s: %v, want the store's unavailable: not in the snapshot", name, err)
		}
	}
	_, err = c.GetActive(ctx, greeting.ID, "Dev") // malformed
	is.True(errors.Is(err, prompts.ErrInvalid))   // checked before any of it

	d.isDown.Store(false)
	clock.add(time.Second) // a read asks again (TestAStoreFoundDownIsNotWaitedFor)
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: greeting.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(!stale)
	is.Equal(a.ActiveVersion.Content, "Hey {{name}}") // the store's, as soon as it answers
	d.isDown.Store(true)
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: greeting.ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.ActiveVersion.Content, "Hey {{name}}") // the last value the store gave, not the snapshot's
}

// A store's value wins over the snapshot's whatever their revisions: a
// snapshot from another database, or with a revision from a clock ahead,
// never hides what the store answers; and the snapshot never answers what
// the store answers, not found included.
func TestFallbackNeverOverridesTheStore(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	snap := embedded(t, ms, proj.ID)
	snap.Prompts[0].Prompt.Revision = 1 << 62 // far ahead of the store's
	d := &down{Store: ms}
	c := cache.New(d, cache.Standalone(), cache.WithFallback(snap))
	_, err := ms.UpdatePrompt(ctx, list[0].ID, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
	is.NoErr(err)
	a, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[0].ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(!stale)
	is.Equal(a.Name, "Renamed") // the store's, though its revision is lower
	c.Lost()
	d.isDown.Store(true)
	a, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[0].ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale)
	is.Equal(a.Name, "Renamed") // the last value known wins over the snapshot

	other, oproj, _ := project(t) // another database: the snapshot's prompts are unknown to the store
	c = cache.New(ms, cache.Standalone(), cache.WithFallback(embedded(t, other, oproj.ID)))
	_, err = c.GetActive(ctx, embedded(t, other, oproj.ID).Prompts[0].Prompt.ID, prompts.Production)
	is.True(errors.Is(err, prompts.ErrNotFound)) // the store said so
	_, err = c.GetProject(ctx, oproj.ID)
	is.True(errors.Is(err, prompts.ErrNotFound))
	is.Equal(c.Stats().Stale, int64(0))

	c = cache.New(ms, cache.WithFallback(nil)) // adds nothing
	_, err = c.GetActive(ctx, list[0].ID, prompts.Production)
	is.NoErr(err)
}

// Several snapshots, one a project, answer together.
func TestFallbackFromSeveralSnapshots(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	d := &down{Store: ms}
	c := cache.New(d, cache.WithFallback(embedded(t, ms, proj.ID)), cache.WithFallback(embedded(t, ms, list[3].ProjectID)))
	d.isDown.Store(true)
	a, err := c.GetActiveByKey(ctx, proj.ID, "farewell", prompts.Staging)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "Bye")
	a, err = c.GetActiveByKey(ctx, list[3].ProjectID, "elsewhere", prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "x")
}

// Reads that joined a read in flight get its fallback answer marked
// stale too; but when the read they joined gave up (its context ended),
// they read again on their own rather than take its fallback answer.
// (In a synctest bubble: synctest.Wait returns once the second read
// joined the first, and waits for it.)
func TestFallbackAndReadsInFlight(t *testing.T) { synctest.Test(t, testFallbackAndReadsInFlight) }

func testFallbackAndReadsInFlight(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	h := &hooked{Store: ms}
	c := cache.New(h, cache.Standalone(), cache.WithFallback(embedded(t, ms, proj.ID)))
	id := list[0].ID

	inRead, release := make(chan struct{}), make(chan struct{})
	h.set(func(h *hooked) {
		h.failing = errDown
		h.before = func() { close(inRead); <-release }
	})
	type answer struct {
		a     prompts.ActivePrompt
		stale bool
		err   error
	}
	read := func(ctx context.Context, out chan<- answer) {
		a, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: id, Environment: prompts.Production})
		out <- answer{a, stale, err}
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	go read(ctx, first)
	<-inRead
	go read(ctx, second)
	synctest.Wait() // it joins the read in flight
	h.set(func(h *hooked) { h.before = nil })
	close(release)
	for _, ch := range []chan answer{first, second} {
		got := <-ch
		is.NoErr(got.err)
		is.True(got.stale) // both marked
		is.Equal(got.a.ActiveVersion.Content, "Hi {{name}}")
	}
	is.Equal(c.Stats().Stale, int64(2))

	c = cache.New(h, cache.Standalone(), cache.WithFallback(embedded(t, ms, proj.ID)))
	inRead, release = make(chan struct{}), make(chan struct{})
	h.set(func(h *hooked) { h.before = func() { close(inRead); <-release } })
	leaderCtx, cancel := context.WithCancel(ctx)
	go read(leaderCtx, first)
	<-inRead
	go read(ctx, second)
	synctest.Wait()
	cancel() // the first reader gives up; the store is back
	h.set(func(h *hooked) { h.before, h.failing = nil, nil })
	close(release)
	<-first
	got := <-second
	is.NoErr(got.err)
	is.True(!got.stale) // read again: the store's answer
}
