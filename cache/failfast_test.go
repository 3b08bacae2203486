package cache_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// fakeNow is a clock the test moves (cache.SetNow).
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeNow() *fakeNow { return &fakeNow{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (f *fakeNow) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

// A read with an answer at hand (a fallback's, or the last value known
// while the feed is lost) asks the store with FailFast (prompts.ActiveQuery), so that a
// store with retries fails at once; and once the store was found down,
// such reads answer without asking it, but for one read a second, until
// the store answers, a write goes through, or the feed is back. Reads
// with nothing to answer always ask, without FailFast.
func TestAStoreFoundDownIsNotWaitedFor(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	greeting := list[0]
	d := &down{Store: ms}
	d.isDown.Store(true)
	c := cache.New(d, cache.WithFallback(embedded(t, ms, proj.ID))) // never fed: dark
	clock := newFakeNow()
	cache.SetNow(c, clock.now)
	read := func(id string) (prompts.ActivePrompt, bool, error) {
		return c.ReadActive(ctx, prompts.ActiveQuery{PromptID: id, Environment: prompts.Production})
	}

	a, stale, err := read(greeting.ID)
	is.NoErr(err)
	is.True(stale)
	is.Equal(d.reads.Load(), int64(1)) // the store was asked
	is.Equal(d.fast.Load(), int64(1))  // to fail fast: the cache had an answer
	for range 10 {
		a, stale, err = read(greeting.ID)
		is.NoErr(err)
		is.True(stale)
		is.Equal(a.ActiveVersion.Content, "Hi {{name}}")
		_, err = c.GetActiveByKey(ctx, proj.ID, "farewell", prompts.Staging)
		is.NoErr(err)
	}
	is.Equal(d.reads.Load(), int64(1)) // found down: not asked again
	is.Equal(c.Stats().Stale, int64(21))

	_, _, err = read(list[3].ID) // not in the snapshot: nothing to answer
	is.True(errors.Is(err, prompts.ErrUnavailable))
	is.Equal(d.reads.Load(), int64(2)) // asked
	is.Equal(d.fast.Load(), int64(1))  // with its retries

	d.isDown.Store(false) // back, but nothing said so yet
	clock.add(999 * time.Millisecond)
	_, stale, _ = read(greeting.ID)
	is.True(stale)
	is.Equal(d.reads.Load(), int64(2)) // within the second: not asked
	clock.add(time.Millisecond)
	_, stale, _ = read(greeting.ID)
	is.True(!stale) // a second on: this read probes, and the store answers
	is.Equal(d.reads.Load(), int64(3))
	_, stale, _ = read(greeting.ID)
	is.True(!stale)
	is.Equal(d.reads.Load(), int64(4)) // and is asked from then on (the cache is dark)

	// A probe that fails: the others answer for a second more.
	d.isDown.Store(true)
	_, stale, _ = read(greeting.ID) // found down
	is.True(stale)
	clock.add(time.Second)
	_, stale, _ = read(greeting.ID) // probes, fails
	is.True(stale)
	is.Equal(d.reads.Load(), int64(6))
	clock.add(999 * time.Millisecond)
	_, _, _ = read(greeting.ID)
	is.Equal(d.reads.Load(), int64(6))

	// The feed reached the store: reads ask it at once.
	d.isDown.Store(false)
	c.Recovered()
	_, stale, _ = read(greeting.ID)
	is.True(!stale)
	is.Equal(d.reads.Load(), int64(7))

	// So does a feed that resumed (a read by key the store never answered,
	// so that no entry held answers it).
	c.Lost()
	d.isDown.Store(true)
	_, _, _ = read(greeting.ID) // found down
	d.isDown.Store(false)
	c.Resumed()
	_, stale, err = c.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "farewell", Environment: prompts.Staging})
	is.NoErr(err)
	is.True(!stale) // the store's
	is.Equal(d.reads.Load(), int64(9))

	// A write through the cache: its prompt's reads ask the store, which
	// answers the write.
	c.Lost()
	d.isDown.Store(true)
	_, stale, _ = read(greeting.ID) // the last value known, while lost
	is.True(stale)
	_, err = c.CreateVersion(ctx, prompts.NewVersion{PromptID: greeting.ID, Content: "Yo {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // (the test's store fails reads only)
	d.isDown.Store(false)
	a, stale, _ = read(greeting.ID)
	is.True(!stale)
	is.Equal(a.ActiveVersion.Content, "Yo {{name}}") // its own write, at once
	is.Equal(d.reads.Load(), int64(11))
	is.Equal(d.fast.Load(), int64(10)) // every read but the one of a prompt not in the snapshot asked to fail fast
}

// A read whose own context ended while the store failed says nothing of
// the store: the next read asks it.
func TestAReadThatGaveUpDoesNotMarkTheStoreDown(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	h := &hooked{Store: ms}
	c := cache.New(h, cache.WithFallback(embedded(t, ms, proj.ID)))
	rctx, cancel := context.WithCancel(ctx)
	h.set(func(h *hooked) {
		h.failing = errDown
		h.before = cancel // the caller goes away as the store fails
	})
	_, _ = c.GetActive(rctx, list[0].ID, prompts.Production) // (the snapshot answers it)
	h.set(func(h *hooked) { h.before = nil })
	_, stale, err := c.ReadActive(ctx, prompts.ActiveQuery{PromptID: list[0].ID, Environment: prompts.Production})
	is.NoErr(err)
	is.True(stale)
	is.Equal(h.calls.Load(), int64(2)) // asked again
}
