package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/promptkit/prompts"
)

// guardStore watches every call to the store under it, and gives each a
// deadline: a database call can wait (on a lock, on a slow database), and
// is cancelled at the request's deadline (or d after the call, outside a
// request), answered 503. It sits under the cache, so that a read the
// cache answers pays no timer. d 0 sets no deadline (memstore never
// waits).
type guardStore struct {
	next  prompts.Store
	d     time.Duration
	watch *storeWatch
}

var _ prompts.Store = guardStore{}

// guarded runs f, a call to the store under s, with its deadline: the
// request's (or d from now, outside a request). At the deadline it
// answers unavailable even when f has not returned: a database gone
// silent can hold a call past its context (the connection's own deadline,
// sqlstore.Dialer, ends it later). The result tells s.watch.
func guarded[T any](s guardStore, ctx context.Context, f func(ctx context.Context) (T, error)) (v T, err error) {
	started := time.Now()
	if s.d <= 0 {
		v, err = f(ctx)
		s.watch.observe(ctx, started, err)
		return v, err
	}
	var cancel context.CancelFunc
	call := ctx
	if info := infoFrom(ctx); info != nil {
		call, cancel = context.WithDeadline(ctx, info.start.Add(s.d))
	} else {
		call, cancel = context.WithTimeout(ctx, s.d)
	}
	defer cancel()
	v, err = within(call, f)
	s.watch.observe(ctx, started, err)
	return v, err
}

// within runs f on a goroutine of its own and returns its result, or,
// when ctx ends first, an error at once: unavailable at a deadline, the
// context's error when the caller left. f's result, if it comes later,
// is dropped.
func within[T any](ctx context.Context, f func(ctx context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return zero, prompts.Unavailable(errors.New("the store did not answer within the deadline"))
		}
		return zero, prompts.ContextDone(ctx.Err())
	}
}

// listed is a page of a list, as one value.
type listed[T any] struct {
	items []T
	more  bool
}

func (s guardStore) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.Project, error) { return s.next.CreateProject(ctx, in) })
}

func (s guardStore) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.Project, error) { return s.next.GetProject(ctx, id) })
}

func (s guardStore) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	l, err := guarded(s, ctx, func(ctx context.Context) (listed[prompts.Project], error) {
		items, more, err := s.next.ListProjects(ctx, f)
		return listed[prompts.Project]{items, more}, err
	})
	return l.items, l.more, err
}

func (s guardStore) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.Prompt, error) { return s.next.CreatePrompt(ctx, in) })
}

func (s guardStore) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.Prompt, error) { return s.next.GetPrompt(ctx, id) })
}

func (s guardStore) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.Prompt, error) { return s.next.UpdatePrompt(ctx, id, in) })
}

func (s guardStore) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	l, err := guarded(s, ctx, func(ctx context.Context) (listed[prompts.Prompt], error) {
		items, more, err := s.next.ListPrompts(ctx, f)
		return listed[prompts.Prompt]{items, more}, err
	})
	return l.items, l.more, err
}

func (s guardStore) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.PromptVersion, error) { return s.next.CreateVersion(ctx, in) })
}

func (s guardStore) GetVersion(ctx context.Context, promptID string, n int) (prompts.PromptVersion, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.PromptVersion, error) { return s.next.GetVersion(ctx, promptID, n) })
}

func (s guardStore) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	l, err := guarded(s, ctx, func(ctx context.Context) (listed[prompts.PromptVersion], error) {
		items, more, err := s.next.ListVersions(ctx, promptID, p)
		return listed[prompts.PromptVersion]{items, more}, err
	})
	return l.items, l.more, err
}

func (s guardStore) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.ActivePrompt, error) { return s.next.GetActive(ctx, promptID, env) })
}

func (s guardStore) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.ActivePrompt, error) {
		return s.next.GetActiveByKey(ctx, projectID, key, env)
	})
}

func (s guardStore) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.ActivePrompt, error) { return s.next.Activate(ctx, in) })
}

func (s guardStore) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.ActivePrompt, error) { return s.next.Deactivate(ctx, in) })
}

func (s guardStore) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	return guarded(s, ctx, func(ctx context.Context) (prompts.ActivePrompt, error) { return s.next.Rollback(ctx, in) })
}

func (s guardStore) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	l, err := guarded(s, ctx, func(ctx context.Context) (listed[prompts.Deployment], error) {
		items, more, err := s.next.ListDeployments(ctx, f)
		return listed[prompts.Deployment]{items, more}, err
	})
	return l.items, l.more, err
}

// storeWatch follows the store's state from the results of its calls, and
// logs each change of state once: "store unavailable" at the first call
// that fails as unavailable, "store recovered" with the count of failed
// calls at the first that does not. An outage is two log lines, however
// many requests fail during it. A call's result speaks for the moment it
// started: a call that started before the store went down and succeeds
// after does not end the outage, and one that started before the store
// came back and fails does not start another. It counts every error by
// code. Until open, the store is not up.
type storeWatch struct {
	log    *slog.Logger
	errors func(code string) // counts an error of a call; may be nil

	mu       sync.Mutex
	open     bool      // the store opened
	down     bool      // the last state: unavailable
	since    time.Time // when it changed last
	failures int       // calls failed since it went down
}

// opened says the store is open, and up.
func (w *storeWatch) opened() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = true
}

// observe notes the result of a call made with ctx that started at
// started. A call that failed because its caller left (the client went
// away, the server stops) says nothing about the store.
func (w *storeWatch) observe(ctx context.Context, started time.Time, err error) {
	if w == nil {
		return
	}
	if err != nil && ctx.Err() != nil {
		return
	}
	code := prompts.ErrorCode(err)
	if err != nil && w.errors != nil {
		w.errors(string(code))
	}
	unavailable := code == prompts.CodeUnavailable
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case unavailable && w.down:
		w.failures++
	case unavailable && started.After(w.since):
		w.down, w.since, w.failures = true, time.Now(), 1
		w.log.Error("store unavailable; requests that need it are answered 503 until it is back", "err", err)
	case !unavailable && w.down && started.After(w.since):
		w.down = false
		w.log.Info("store recovered", "unavailable_for", time.Since(w.since).Round(time.Millisecond), "failed_calls", w.failures)
		w.since = time.Now()
	}
}

// isDown reports whether the store is not up: not open yet, or
// unavailable at its last call.
func (w *storeWatch) isDown() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down || !w.open
}
