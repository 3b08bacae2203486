package main

import (
	"context"
	"time"

	"github.com/promptkit/prompts"
)

// deadlineStore gives every call to the store under it a deadline d from
// the call, unless the caller's is sooner: a database call can wait (on a
// lock, on a slow database), and is cancelled then, answered 503. It sits
// under the cache, so that a read the cache answers pays no timer.
type deadlineStore struct {
	next prompts.Store
	d    time.Duration
}

var _ prompts.Store = deadlineStore{}

func (s deadlineStore) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.d)
}

func (s deadlineStore) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.CreateProject(ctx, in)
}

func (s deadlineStore) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.GetProject(ctx, id)
}

func (s deadlineStore) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.ListProjects(ctx, f)
}

func (s deadlineStore) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.CreatePrompt(ctx, in)
}

func (s deadlineStore) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.GetPrompt(ctx, id)
}

func (s deadlineStore) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.UpdatePrompt(ctx, id, in)
}

func (s deadlineStore) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.ListPrompts(ctx, f)
}

func (s deadlineStore) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.CreateVersion(ctx, in)
}

func (s deadlineStore) GetVersion(ctx context.Context, promptID string, n int) (prompts.PromptVersion, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.GetVersion(ctx, promptID, n)
}

func (s deadlineStore) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.ListVersions(ctx, promptID, p)
}

func (s deadlineStore) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.GetActive(ctx, promptID, env)
}

func (s deadlineStore) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.GetActiveByKey(ctx, projectID, key, env)
}

func (s deadlineStore) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.Activate(ctx, in)
}

func (s deadlineStore) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.Deactivate(ctx, in)
}

func (s deadlineStore) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.Rollback(ctx, in)
}

func (s deadlineStore) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return s.next.ListDeployments(ctx, f)
}
