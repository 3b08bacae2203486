package cache

import (
	"context"
	"time"

	"github.com/promptkit/prompts"
)

// The reads the cache answers.

var _ prompts.ActiveReader = (*Store)(nil)

// GetActive implements prompts.Store, from memory when it can.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, _, err := s.ReadActive(ctx, prompts.ActiveQuery{PromptID: promptID, Environment: env})
	return a, err
}

// GetActiveByKey implements prompts.Store, from memory when it can.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, k string, env prompts.Environment) (prompts.ActivePrompt, error) {
	a, _, err := s.ReadActive(ctx, prompts.ActiveQuery{ProjectID: projectID, Key: k, Environment: env})
	return a, err
}

// ReadActive implements prompts.ActiveReader, from memory when it can;
// stale reports the last value known, or a fallback's, given while the
// store is unavailable (see Outages). With q.Shared the answer is the
// value the cache holds. With q.Fresh the store under the cache answers,
// read with q, and the cache keeps nothing of it. The store is read with
// FailFast when q has it, and when the cache holds an answer to give.
//
// The cache holds an environment that holds a split with the versions of
// all its entries (prompts.ActivePrompt.SplitVersions), read from the
// store without a subject: a read with q.Subject is picked from memory
// (prompts.ActivePrompt.Pick), one entry for every subject.
func (s *Store) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	if err := q.Environment.Validate(); err != nil {
		return prompts.ActivePrompt{}, false, err
	}
	if q.Fresh {
		return prompts.ReadActive(ctx, s.next, q)
	}
	copyOut := copyActive
	if q.Shared {
		copyOut = shared
	}
	k := key{kind: kindActive, a: q.PromptID, env: q.Environment}
	if q.PromptID == "" {
		k = key{kind: kindActiveByKey, a: q.ProjectID, b: q.Key, env: q.Environment}
	}
	var stale, staleUnder bool
	v, err := read(s, ctx, k, func(ctx context.Context, failFast bool) (prompts.ActivePrompt, string, int64, error) {
		a, st, err := prompts.ReadActive(ctx, s.next, prompts.ActiveQuery{PromptID: q.PromptID, ProjectID: q.ProjectID, Key: q.Key,
			Environment: q.Environment, FailFast: failFast || q.FailFast})
		staleUnder = st // a cache under this one answered stale
		return a, a.ID, a.Revision, err
	}, copyOut, &stale)
	return v.Pick(q.Subject), stale || staleUnder, err
}

// shared hands out a value as the cache holds it (ActiveQuery.Shared).
func shared(a prompts.ActivePrompt) prompts.ActivePrompt { return a }

// GetPrompt implements prompts.Store, from memory when it can.
func (s *Store) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	v, err := read(s, ctx, key{kind: kindPrompt, a: id}, func(ctx context.Context, failFast bool) (prompts.Prompt, string, int64, error) {
		if r, ok := s.next.(prompts.ActiveReader); ok && failFast {
			// Only ReadActive takes FailFast; the prompt it answers is
			// the prompt GetPrompt answers.
			a, _, err := r.ReadActive(ctx, prompts.ActiveQuery{PromptID: id, Environment: prompts.Production, Shared: true, FailFast: true})
			return a.Prompt.Copy(), a.ID, a.Revision, err
		}
		p, err := s.next.GetPrompt(ctx, id)
		return p, p.ID, p.Revision, err
	}, prompts.Prompt.Copy, nil)
	return v, err
}

// GetVersion implements prompts.Store, from memory when it can. Versions
// never change.
func (s *Store) GetVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	v, err := read(s, ctx, key{kind: kindVersion, a: promptID, n: number}, func(ctx context.Context, _ bool) (prompts.PromptVersion, string, int64, error) {
		v, err := s.next.GetVersion(ctx, promptID, number)
		return v, v.PromptID, 0, err
	}, prompts.PromptVersion.Copy, nil)
	return v, err
}

// GetProject implements prompts.Store, from memory when it can. Projects
// never change.
func (s *Store) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	v, err := read(s, ctx, key{kind: kindProject, a: id}, func(ctx context.Context, _ bool) (prompts.Project, string, int64, error) {
		p, err := s.next.GetProject(ctx, id)
		return p, "", 0, err
	}, func(p prompts.Project) prompts.Project { return p }, nil)
	return v, err
}

// sizeOf estimates the bytes an entry holds.
func sizeOf(k key, v any) int64 {
	n := int64(256 + len(k.a) + len(k.b))
	switch x := v.(type) {
	case prompts.ActivePrompt:
		n += promptSize(x.Prompt)
		switch {
		case x.SplitVersions != nil:
			for _, v := range x.SplitVersions {
				n += 64 + versionSize(v)
			}
		case x.ActiveVersion != nil:
			n += versionSize(*x.ActiveVersion)
		}
	case prompts.Prompt:
		n += promptSize(x)
	case prompts.PromptVersion:
		n += versionSize(x)
	case prompts.Project:
		n += int64(len(x.ID) + len(x.Name) + len(x.Slug) + len(x.Description))
	}
	return n
}

func promptSize(p prompts.Prompt) int64 {
	n := int64(len(p.ID) + len(p.ProjectID) + len(p.Key) + len(p.Name) + len(p.LatestVersionID))
	if p.Description != nil {
		n += int64(len(*p.Description))
	}
	return n
}

func versionSize(v prompts.PromptVersion) int64 {
	n := int64(len(v.ID) + len(v.Content) + len(v.Metadata))
	if v.ChangeSummary != nil {
		n += int64(len(*v.ChangeSummary))
	}
	for _, name := range v.Variables {
		n += int64(16 + len(name))
	}
	return n
}

// The writes pass through. While one runs, the reads of its prompt (and
// by key, of its project) go to the store, and when it is done its
// prompt's entries are dropped: so the process that writes reads its
// write at once, and no read in it sees the store's state and then an
// older one. A write that failed may still have been done (a connection
// that broke as it committed), so it is treated the same.

// write begins a write to the prompt and returns what ends it.
func (s *Store) write(ctx context.Context, promptID string) (done func()) {
	s.mu.Lock()
	project, known := "", false
	for e := range s.byPrompt[promptID] {
		switch v := e.value.(type) {
		case prompts.ActivePrompt:
			project, known = v.ProjectID, true
		case prompts.Prompt:
			project, known = v.ProjectID, true
		}
	}
	s.mu.Unlock()
	if !known {
		// Its reads by key may be cached (or being filled) through
		// another prompt's entries: ask the store which project it is in.
		if p, err := s.next.GetPrompt(ctx, promptID); err == nil {
			project, known = p.ProjectID, true
		}
	}
	// A project unknown still (the store did not answer) is any project:
	// every read by key goes to the store, and every one cached goes.
	invalidate := func() {
		s.invalidate(prompts.Invalidation{PromptID: promptID, ProjectID: project})
		if !known {
			s.invalidateAllByKey()
		}
	}
	s.mu.Lock()
	s.writing[promptID]++
	s.writingProject[project]++
	if !known {
		s.writingAnyProject++
	}
	invalidate()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		invalidate()
		// The next read asks the store (it reads this write), whatever
		// a read found of it before.
		s.downAt = time.Time{}
		if s.writing[promptID]--; s.writing[promptID] == 0 {
			delete(s.writing, promptID)
		}
		if s.writingProject[project]--; s.writingProject[project] == 0 {
			delete(s.writingProject, project)
		}
		if !known {
			s.writingAnyProject--
		}
	}
}

// CreateProject implements prompts.Store.
func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	return s.next.CreateProject(ctx, in)
}

// ListProjects implements prompts.Store; lists pass through.
func (s *Store) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	return s.next.ListProjects(ctx, f)
}

// CreatePrompt implements prompts.Store. Only answers are cached, never
// "not found", so a new prompt invalidates nothing but its project's reads
// by key, for safety.
func (s *Store) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	p, err := s.next.CreatePrompt(ctx, in)
	if err == nil {
		s.Invalidate(prompts.Invalidation{PromptID: p.ID, ProjectID: p.ProjectID})
	}
	return p, err
}

// UpdatePrompt implements prompts.Store.
func (s *Store) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	defer s.write(ctx, id)()
	return s.next.UpdatePrompt(ctx, id, in)
}

// ListPrompts implements prompts.Store; lists pass through.
func (s *Store) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	return s.next.ListPrompts(ctx, f)
}

// CreateVersion implements prompts.Store.
func (s *Store) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	defer s.write(ctx, in.PromptID)()
	return s.next.CreateVersion(ctx, in)
}

// ListVersions implements prompts.Store; lists pass through.
func (s *Store) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	return s.next.ListVersions(ctx, promptID, p)
}

// Activate implements prompts.Store.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	defer s.write(ctx, in.PromptID)()
	return s.next.Activate(ctx, in)
}

// Deactivate implements prompts.Store.
func (s *Store) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	defer s.write(ctx, in.PromptID)()
	return s.next.Deactivate(ctx, in)
}

// Rollback implements prompts.Store.
func (s *Store) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	defer s.write(ctx, in.PromptID)()
	return s.next.Rollback(ctx, in)
}

// ListDeployments implements prompts.Store; lists pass through.
func (s *Store) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	return s.next.ListDeployments(ctx, f)
}

// PutEnvironment implements prompts.Store; it passes through. A new
// environment needs nothing dropped: the cache never keeps an answer
// that an environment is unknown.
func (s *Store) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	return s.next.PutEnvironment(ctx, in)
}

// ListEnvironments implements prompts.Store; lists pass through.
func (s *Store) ListEnvironments(ctx context.Context, projectID string) ([]prompts.ProjectEnvironment, error) {
	return s.next.ListEnvironments(ctx, projectID)
}

// DeleteEnvironment implements prompts.Store. Once it is done (or failed:
// it may have been done), the cache holds no read of the environment in
// the project, whose reads the store now refuses.
func (s *Store) DeleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	defer s.Invalidate(prompts.Invalidation{ProjectID: projectID, Environment: name})
	return s.next.DeleteEnvironment(ctx, projectID, name)
}
