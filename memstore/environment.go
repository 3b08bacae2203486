package memstore

import (
	"context"

	"github.com/promptkit/prompts"
)

// What each environment of a prompt points at: prompt.active, by
// envIndex.

func envIndex(e prompts.Environment) int {
	if e == prompts.Staging {
		return 1
	}
	return 0
}

// GetActive implements prompts.Store.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return rec.activeCopy(env), nil
}

// GetActiveByKey implements prompts.Store.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, ok := s.byKey[projectKey{projectID, key}]
	if !ok {
		if _, ok := s.projects[projectID]; !ok {
			return prompts.ActivePrompt{}, prompts.NotFound("project")
		}
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return s.prompts[id].activeCopy(env), nil
}

// activeCopy returns the prompt with its version active in env, copied in
// one allocation: the description, the version and its change summary share
// one block, so that the read path stays cheap.
func (rec *prompt) activeCopy(env prompts.Environment) prompts.ActivePrompt {
	out := prompts.ActivePrompt{Prompt: rec.p, Environment: env}
	n := rec.active[envIndex(env)]
	if n == 0 && rec.p.Description == nil {
		return out
	}
	blk := new(struct {
		v             prompts.PromptVersion
		desc, summary string
	})
	if rec.p.Description != nil {
		blk.desc = *rec.p.Description
		out.Description = &blk.desc
	}
	if n != 0 {
		blk.v = rec.versions[n-1]
		if blk.v.ChangeSummary != nil {
			blk.summary = *blk.v.ChangeSummary
			blk.v.ChangeSummary = &blk.summary
		}
		out.ActiveVersion = &blk.v
	}
	return out
}

// Activate implements prompts.Store.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if err := done(ctx); err != nil {
		return prompts.ActivePrompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[in.PromptID]
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	n := rec.number(in)
	if n == 0 {
		return prompts.ActivePrompt{}, prompts.NotFound("version")
	}
	rec.point(in.Environment, n, s.clock)
	return rec.activeCopy(in.Environment), nil
}

// number returns the number of the version that in names, 0 when the prompt
// has no such version.
func (rec *prompt) number(in prompts.Activation) int {
	if in.VersionID.HasValue() {
		for i := range rec.versions {
			if rec.versions[i].ID == in.VersionID.Value {
				return i + 1
			}
		}
		return 0
	}
	if n := in.VersionNumber.Value; n >= 1 && n <= len(rec.versions) {
		return n
	}
	return 0
}

// point points env at version number n (0 for none), moving the revision
// on when that changes what env points at.
func (rec *prompt) point(env prompts.Environment, n int, clock prompts.Clock) {
	i := envIndex(env)
	if rec.active[i] == n {
		return
	}
	rec.active[i] = n
	rec.p.Revision = prompts.NextRevision(rec.p.Revision, clock.Now())
}

// Deactivate implements prompts.Store.
func (s *Store) Deactivate(ctx context.Context, promptID string, env prompts.Environment) error {
	if err := env.Validate(); err != nil {
		return err
	}
	if err := done(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.NotFound("prompt")
	}
	rec.point(env, 0, s.clock)
	return nil
}
