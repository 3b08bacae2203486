package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/storetest"
)

// The cache is a Store: the whole conformance suite holds over it.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		return cache.New(memstore.New(memstore.WithClock(clock)), cache.Standalone())
	})
}

// hooked is a store whose GetActive calls can be counted, held and failed.
type hooked struct {
	prompts.Store
	calls   atomic.Int64
	mu      sync.Mutex
	before  func() // called inside GetActive, before it reads
	failing error  // GetActive fails with it when not nil
	older   *prompts.ActivePrompt
}

func (h *hooked) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	h.calls.Add(1)
	h.mu.Lock()
	before, failing, older := h.before, h.failing, h.older
	h.mu.Unlock()
	if before != nil {
		before()
	}
	if failing != nil {
		return prompts.ActivePrompt{}, failing
	}
	if older != nil {
		return *older, nil
	}
	return h.Store.GetActive(ctx, id, env)
}

func (h *hooked) set(f func(h *hooked)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

// fixture returns a memstore with a prompt active in production, the
// store under the cache, and the prompt.
func fixture(t *testing.T) (*memstore.Store, *hooked, prompts.Prompt) {
	t.Helper()
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "N"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: []prompts.Environment{prompts.Production}}); err != nil {
		t.Fatal(err)
	}
	return ms, &hooked{Store: ms}, p
}

func TestHitsAndTheirCopies(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	_, h, p := fixture(t)
	c := cache.New(h, cache.Standalone())
	a, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	a.ActiveVersion.Content = "changed by the caller"
	b, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(b.ActiveVersion.Content, "one") // a hit hands out a copy
	is.Equal(h.calls.Load(), int64(1))       // one store read
	_, err = c.GetActiveByKey(ctx, p.ProjectID, "k", prompts.Production)
	is.NoErr(err)
	st := c.Stats()
	is.Equal(st.Hits, int64(1))
	is.Equal(st.Misses, int64(2))
	is.Equal(st.Entries, int64(2))
	is.True(st.Bytes > 0)
	_, err = c.GetActive(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", prompts.Production)
	is.True(errors.Is(err, prompts.ErrNotFound)) // errors pass, uncached
	is.Equal(c.Stats().Entries, int64(2))
}

// Without Standalone the cache waits for its feed: until Recovered every
// read goes to the store.
func TestDarkUntilTheFeedRecovers(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	_, h, p := fixture(t)
	c := cache.New(h)
	is.True(c.Stats().Lost)
	for range 3 {
		_, err := c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
	}
	is.Equal(h.calls.Load(), int64(3)) // no hit while lost
	c.Recovered()
	for range 3 {
		_, err := c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
	}
	is.Equal(h.calls.Load(), int64(4)) // then one read, and hits
}

// Stats count what the feed reported: a loss of a fed cache once however
// often it is repeated, every recovery.
func TestStatsCountLossesAndRecoveries(t *testing.T) {
	is := is.New(t)
	_, h, _ := fixture(t)
	c := cache.New(h)
	c.Lost()
	st := c.Stats()
	is.Equal(st.Losses, int64(0)) // not fed yet: nothing lost
	is.Equal(st.Recoveries, int64(0))
	c.Recovered()
	st = c.Stats()
	is.Equal(st.Recoveries, int64(1)) // the feed listens
	is.True(!st.Lost)
	c.Lost()
	c.Lost()
	st = c.Stats()
	is.Equal(st.Losses, int64(1)) // one loss, reported twice
	is.True(st.Lost)
	c.Recovered()
	c.Lost()
	c.Recovered()
	st = c.Stats()
	is.Equal(st.Losses, int64(2)) // a loss that came and went still shows
	is.Equal(st.Recoveries, int64(3))
	is.True(!st.Lost)

	c = cache.New(h, cache.Standalone())
	c.Lost()
	is.Equal(c.Stats().Losses, int64(1)) // a standalone cache is fed from the start
}

// A write made elsewhere (under the cache) is seen after its
// invalidation; a write through the cache at once.
func TestInvalidationAndReadYourWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, h, p := fixture(t)
	c := cache.New(h, cache.Standalone())
	_, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // another process
	a, _ := c.GetActive(ctx, p.ID, prompts.Production)
	is.Equal(a.ActiveVersion.Content, "one") // not known yet
	c.Invalidate(prompts.Invalidation{PromptID: p.ID, ProjectID: p.ProjectID})
	a, _ = c.GetActive(ctx, p.ID, prompts.Production)
	is.Equal(a.ActiveVersion.Content, "two") // the feed told it
	byKey, _ := c.GetActiveByKey(ctx, p.ProjectID, "k", prompts.Production)
	is.Equal(byKey.ActiveVersion.Content, "two")

	_, err = c.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err) // through the cache
	a, _ = c.GetActive(ctx, p.ID, prompts.Production)
	is.Equal(a.ActiveVersion.Content, "one") // read at once
	byKey, _ = c.GetActiveByKey(ctx, p.ProjectID, "k", prompts.Production)
	is.Equal(byKey.ActiveVersion.Content, "one")
	_, err = c.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("renamed")})
	is.NoErr(err)
	_, err = c.GetActiveByKey(ctx, p.ProjectID, "k", prompts.Production)
	is.True(errors.Is(err, prompts.ErrNotFound)) // the old key names nothing now
}

// The read that races with an invalidation: it fetched before the change,
// the invalidation came while it fetched; it answers what it read but
// keeps nothing, so the next read fetches the change. Deterministic: the
// store holds the read until the invalidation is in.
func TestAReadThatRacedAnInvalidationKeepsNothing(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, h, p := fixture(t)
	c := cache.New(h, cache.Standalone())
	old, err := ms.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	inRead, release := make(chan struct{}), make(chan struct{})
	h.set(func(h *hooked) {
		h.older = &old // what the read fetched before the change
		h.before = func() { close(inRead); <-release }
	})
	done := make(chan prompts.ActivePrompt)
	go func() {
		a, err := c.GetActive(ctx, p.ID, prompts.Production)
		if err != nil {
			t.Error(err)
		}
		done <- a
	}()
	<-inRead // the read is in the store
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	c.Invalidate(prompts.Invalidation{PromptID: p.ID, ProjectID: p.ProjectID})
	h.set(func(h *hooked) { h.older, h.before = nil, nil })
	close(release)
	is.Equal((<-done).ActiveVersion.Content, "one") // it answers what it read
	a, err := c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.Content, "two") // and kept nothing
}

// While the feed is lost, reads go to the store; one that comes back older
// than what was answered answers the newer; when the store is down, the
// last value known answers, marked stale; Recovered drops everything.
func TestLostNeverOlderAndStaleIfError(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, h, p := fixture(t)
	c := cache.New(h, cache.Standalone())
	old, _ := ms.GetActive(ctx, p.ID, prompts.Production)
	_, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	a, _ := c.GetActive(ctx, p.ID, prompts.Production)
	is.Equal(a.ActiveVersion.Content, "two") // answered: two
	c.Lost()
	is.True(c.Stats().Lost)
	h.set(func(h *hooked) { h.older = &old }) // a store that answers older (a lagging replica)
	a, _ = c.GetActive(ctx, p.ID, prompts.Production)
	is.Equal(a.ActiveVersion.Content, "two") // never older than what was answered
	h.set(func(h *hooked) { h.older, h.failing = nil, prompts.Unavailable(errors.New("down")) })
	a, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production})
	is.NoErr(err)                            // stale-if-error
	is.Equal(a.ActiveVersion.Content, "two") // the last value known
	is.True(stale)                           // reported
	is.Equal(c.Stats().Stale, int64(1))
	_, err = c.GetActiveByKey(ctx, p.ProjectID, "k", prompts.Production)
	is.NoErr(err) // GetActiveByKey is not hooked: the store answers it
	_, err = c.GetActive(ctx, "01ARZ3NDEKTSV4RRFFQ69G5FAV", prompts.Production)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // a read never seen fails
	h.set(func(h *hooked) { h.failing = nil })
	c.Recovered()
	is.Equal(c.Stats().Entries, int64(0)) // everything from before is dropped
	is.True(!c.Stats().Lost)
}

// Concurrent misses of one entry make one store read.
// (In a synctest bubble: synctest.Wait returns once every reader is
// blocked, the first in the store, the others on the read they joined.)
func TestConcurrentMissesReadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ctx := context.Background()
		_, h, p := fixture(t)
		c := cache.New(h, cache.Standalone())
		release := make(chan struct{})
		h.set(func(h *hooked) { h.before = func() { <-release } })
		const n = 16
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := c.GetActive(ctx, p.ID, prompts.Production); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // one reader holds the store's read, the others wait for it
		inFlight := h.calls.Load()
		close(release)
		wg.Wait()
		is.Equal(inFlight, int64(1))       // one store read in flight
		is.Equal(h.calls.Load(), int64(1)) // one store read for all
	})
}

// The byte budget holds, the least recently used going first.
func TestBudget(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	proj, _ := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	c := cache.New(ms, cache.Standalone(), cache.WithSize(4000))
	var ids []string
	for i := range 40 {
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Name: "N"})
		is.NoErr(err)
		ids = append(ids, p.ID)
		_, err = c.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		_, err = c.GetActive(ctx, ids[0], prompts.Production) // the first stays in use
		is.NoErr(err)
	}
	st := c.Stats()
	is.True(st.Bytes <= 4000) // within the budget
	is.True(st.Evictions > 0) // by evicting
	before := c.Stats().Hits
	_, _ = c.GetActive(ctx, ids[0], prompts.Production)
	is.Equal(c.Stats().Hits, before+1) // the one in use stayed
}

// BenchmarkHit is a read through the Go API answered from memory.
func BenchmarkHit(b *testing.B) {
	ctx := context.Background()
	ms := memstore.New()
	proj, _ := ms.CreateProject(ctx, prompts.NewProject{Name: "P"})
	desc := "what it is for"
	p, _ := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "N", Description: &desc})
	if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}}); err != nil {
		b.Fatal(err)
	}
	c := cache.New(ms, cache.Standalone())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetActive(ctx, p.ID, prompts.Production); err != nil {
			b.Fatal(err)
		}
	}
}

// A read that joins another in flight gets its own answer when the one it
// joined gives up (its context ended); and a read that starts after an
// invalidation does not join a read that began before it. (In a synctest
// bubble, so that the second read is known to have joined the first.)
func TestJoiningReadsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		ctx := context.Background()
		ms, h, p := fixture(t)
		c := cache.New(h, cache.Standalone())

		// The first reader gives up while the store holds its read.
		inRead, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		h.set(func(h *hooked) { h.before = func() { once.Do(func() { close(inRead) }); <-release } })
		firstCtx, cancelFirst := context.WithCancel(ctx)
		first := make(chan error, 1)
		go func() { _, err := c.GetActive(firstCtx, p.ID, prompts.Production); first <- err }()
		<-inRead
		second := make(chan error, 1)
		go func() { _, err := c.GetActive(ctx, p.ID, prompts.Production); second <- err }()
		synctest.Wait() // the second joined the first's read, and waits for it
		inFlight := h.calls.Load()
		cancelFirst()
		h.set(func(h *hooked) { h.before = nil })
		close(release)
		<-first
		is.NoErr(<-second)           // the second reads again, on its own context
		is.Equal(inFlight, int64(1)) // (after it joined the first's read)

		// A read held with the value from before a change; the change and
		// its invalidation; a read after them must not share the held one.
		c = cache.New(h, cache.Standalone())
		old, _ := ms.GetActive(ctx, p.ID, prompts.Production)
		inRead, release = make(chan struct{}), make(chan struct{})
		h.set(func(h *hooked) {
			h.older = &old
			h.before = func() { close(inRead); <-release }
		})
		held := make(chan prompts.ActivePrompt, 1)
		go func() { a, _ := c.GetActive(ctx, p.ID, prompts.Production); held <- a }()
		<-inRead
		_, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		c.Invalidate(prompts.Invalidation{PromptID: p.ID, ProjectID: p.ProjectID})
		h.set(func(h *hooked) { h.older, h.before = nil, nil })
		after, err := c.GetActive(ctx, p.ID, prompts.Production) // does not wait for the held read
		is.NoErr(err)
		is.Equal(after.ActiveVersion.Content, "two") // the change, not what the held read will answer
		close(release)
		is.Equal((<-held).ActiveVersion.Content, "two") // and the held read, finishing later, answers no older than that
	})
}
