package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/promptkit/prompts"
)

// A project's environments: s.envs holds the list of each project whose
// environments changed since its creation (built-in ones first); a
// project missing from it has the built-in ones only, unprotected.

// environments returns the project's environments, shared; the project
// exists. The caller holds s.mu.
func (s *Store) environments(projectID string) []prompts.ProjectEnvironment {
	if l, ok := s.envs[projectID]; ok {
		return l
	}
	var created time.Time
	if p := s.projects[projectID]; p != nil {
		created = p.CreatedAt
	}
	return prompts.BuiltinEnvironments(created)
}

// environment returns the project's environment env, or
// UnknownEnvironment's error for field. The caller holds s.mu.
func (s *Store) environment(projectID string, env prompts.Environment, field string) (prompts.ProjectEnvironment, error) {
	l, ok := s.envs[projectID]
	if !ok && env.Builtin() {
		return prompts.ProjectEnvironment{Name: env}, nil // the reads' common case, without allocating
	}
	if !ok {
		l = s.environments(projectID)
	}
	for _, e := range l {
		if e.Name == env {
			return e, nil
		}
	}
	return prompts.ProjectEnvironment{}, prompts.UnknownEnvironment(field, prompts.EnvironmentNames(l))
}

// changeable checks that a change may point env of the prompt elsewhere:
// env is one of its project's environments, and allow is set when env is
// protected. The caller holds s.mu.
func (s *Store) changeable(rec *prompt, env prompts.Environment, field string, allow bool) error {
	e, err := s.environment(rec.p.ProjectID, env, field)
	if err != nil {
		return err
	}
	if e.Protected && !allow {
		return prompts.ProtectedEnvironment(env)
	}
	return nil
}

// PutEnvironment implements prompts.Store.
func (s *Store) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.ProjectEnvironment{}, err
	}
	var out prompts.ProjectEnvironment
	// The write's result is the project (write takes no other), which its
	// journal record holds again beside the environments.
	_, err := write(s, "", prompts.Idempotency{}, func() (prompts.Project, error) {
		p, ok := s.projects[in.ProjectID]
		if !ok {
			return prompts.Project{}, prompts.NotFound("project")
		}
		l := slices.Clone(s.environments(in.ProjectID))
		i := slices.IndexFunc(l, func(e prompts.ProjectEnvironment) bool { return e.Name == in.Name })
		now := s.clock.Now()
		typ := prompts.EventEnvironmentUpdated
		switch {
		case i >= 0 && l[i].Protected == in.Protected:
			out = l[i]
			return *p, nil // nothing changes
		case i >= 0:
			l[i].Protected = in.Protected
		default:
			i, typ = len(l), prompts.EventEnvironmentCreated
			l = append(l, prompts.ProjectEnvironment{Name: in.Name, Protected: in.Protected, CreatedAt: now})
		}
		s.setEnvironments(in.ProjectID, l)
		out = l[i]
		e := out
		s.emit(prompts.Event{Type: typ, ProjectID: p.ID, CreatedAt: now, Environment: &e})
		return *p, nil
	})
	if err != nil {
		return prompts.ProjectEnvironment{}, err
	}
	return out, nil
}

// setEnvironments sets the project's list, for the journal too. The
// caller holds s.mu.
func (s *Store) setEnvironments(projectID string, l []prompts.ProjectEnvironment) {
	s.envs[projectID] = l
	s.step.envProject = projectID
}

// ListEnvironments implements prompts.Store.
func (s *Store) ListEnvironments(ctx context.Context, projectID string) ([]prompts.ProjectEnvironment, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if _, ok := s.projects[projectID]; !ok {
		return nil, prompts.NotFound("project")
	}
	return slices.Clone(s.environments(projectID)), nil
}

// DeleteEnvironment implements prompts.Store. It runs under the write
// lock, as every change of what an environment points at does: no
// activation can come between its check and the removal.
func (s *Store) DeleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	if err := begin(ctx, name.Validate()); err != nil {
		return err
	}
	_, err := write(s, "", prompts.Idempotency{}, func() (prompts.Project, error) {
		p, ok := s.projects[projectID]
		if !ok {
			return prompts.Project{}, prompts.NotFound("project")
		}
		if name.Builtin() {
			return prompts.Project{}, prompts.BuiltinEnvironment(name)
		}
		l := s.environments(projectID)
		i := slices.IndexFunc(l, func(e prompts.ProjectEnvironment) bool { return e.Name == name })
		if i < 0 {
			return prompts.Project{}, prompts.NotFound("environment")
		}
		for _, id := range s.byProject[projectID] {
			if s.prompts[id].activeIn(name) != 0 {
				return prompts.Project{}, prompts.EnvironmentInUse(name)
			}
		}
		removed := l[i]
		s.setEnvironments(projectID, slices.Delete(slices.Clone(l), i, i+1))
		s.emit(prompts.Event{Type: prompts.EventEnvironmentDeleted, ProjectID: p.ID, CreatedAt: s.clock.Now(), Environment: &removed})
		return *p, nil
	})
	return err
}

// activeIn returns the number of the version env serves without a
// subject (a split's first entry's), 0 for none.
func (rec *prompt) activeIn(env prompts.Environment) int { return rec.at(env).n }

// at returns what env points at.
func (rec *prompt) at(env prompts.Environment) pointer {
	switch env {
	case prompts.Production:
		return rec.active[0]
	case prompts.Staging:
		return rec.active[1]
	}
	return rec.others[env]
}

// setAt points env at p.
func (rec *prompt) setAt(env prompts.Environment, p pointer) {
	switch {
	case env == prompts.Production:
		rec.active[0] = p
	case env == prompts.Staging:
		rec.active[1] = p
	case p.n == 0:
		delete(rec.others, env)
	default:
		if rec.others == nil {
			rec.others = make(map[prompts.Environment]pointer)
		}
		rec.others[env] = p
	}
}
