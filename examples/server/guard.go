package main

import (
	"context"
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

// begin returns the context of a call made with ctx.
func (s guardStore) begin(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.d <= 0 {
		return ctx, func() {}
	}
	if info := infoFrom(ctx); info != nil {
		return context.WithDeadline(ctx, info.start.Add(s.d))
	}
	return context.WithTimeout(ctx, s.d)
}

// end ends a call made with ctx that returned *err.
func (s guardStore) end(ctx context.Context, cancel context.CancelFunc, err *error) {
	cancel()
	s.watch.observe(ctx, *err)
}

func (s guardStore) CreateProject(ctx context.Context, in prompts.NewProject) (_ prompts.Project, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.CreateProject(call, in)
}

func (s guardStore) GetProject(ctx context.Context, id string) (_ prompts.Project, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.GetProject(call, id)
}

func (s guardStore) ListProjects(ctx context.Context, f prompts.ProjectFilter) (_ []prompts.Project, _ bool, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.ListProjects(call, f)
}

func (s guardStore) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (_ prompts.Prompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.CreatePrompt(call, in)
}

func (s guardStore) GetPrompt(ctx context.Context, id string) (_ prompts.Prompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.GetPrompt(call, id)
}

func (s guardStore) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (_ prompts.Prompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.UpdatePrompt(call, id, in)
}

func (s guardStore) ListPrompts(ctx context.Context, f prompts.PromptFilter) (_ []prompts.Prompt, _ bool, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.ListPrompts(call, f)
}

func (s guardStore) CreateVersion(ctx context.Context, in prompts.NewVersion) (_ prompts.PromptVersion, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.CreateVersion(call, in)
}

func (s guardStore) GetVersion(ctx context.Context, promptID string, n int) (_ prompts.PromptVersion, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.GetVersion(call, promptID, n)
}

func (s guardStore) ListVersions(ctx context.Context, promptID string, p prompts.Page) (_ []prompts.PromptVersion, _ bool, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.ListVersions(call, promptID, p)
}

func (s guardStore) GetActive(ctx context.Context, promptID string, env prompts.Environment) (_ prompts.ActivePrompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.GetActive(call, promptID, env)
}

func (s guardStore) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (_ prompts.ActivePrompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.GetActiveByKey(call, projectID, key, env)
}

func (s guardStore) Activate(ctx context.Context, in prompts.Activation) (_ prompts.ActivePrompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.Activate(call, in)
}

func (s guardStore) Deactivate(ctx context.Context, in prompts.Deactivation) (_ prompts.ActivePrompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.Deactivate(call, in)
}

func (s guardStore) Rollback(ctx context.Context, in prompts.Rollback) (_ prompts.ActivePrompt, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.Rollback(call, in)
}

func (s guardStore) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) (_ []prompts.Deployment, _ bool, err error) {
	call, cancel := s.begin(ctx)
	defer s.end(ctx, cancel, &err)
	return s.next.ListDeployments(call, f)
}

// storeWatch follows the store's state from the results of its calls, and
// logs each change of state once: "store unavailable" at the first call
// that fails as unavailable, "store recovered" with the count of failed
// calls at the first that does not. An outage is two log lines, however
// many requests fail during it. It counts every error by code.
type storeWatch struct {
	log    *slog.Logger
	errors func(code string) // counts an error of a call; may be nil

	mu       sync.Mutex
	down     bool
	since    time.Time
	failures int
}

// observe notes the result of a call made with ctx. A call that failed
// because its caller left (the client went away, the server stops) says
// nothing about the store.
func (w *storeWatch) observe(ctx context.Context, err error) {
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
	case unavailable && !w.down:
		w.down, w.since, w.failures = true, time.Now(), 1
		w.log.Error("store unavailable; requests that need it are answered 503 until it is back", "err", err)
	case unavailable:
		w.failures++
	case w.down:
		w.down = false
		w.log.Info("store recovered", "unavailable_for", time.Since(w.since).Round(time.Millisecond), "failed_calls", w.failures)
	}
}

func (w *storeWatch) isDown() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down
}
