package memstore

import (
	"context"

	"github.com/promptkit/prompts"
)

// CreateProject implements prompts.Store.
func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.Project{}, err
	}
	return write(s, "", prompts.Idempotency{}, func() (prompts.Project, error) {
		slug := in.ProjectSlug()
		if _, taken := s.slugs[slug]; taken {
			return prompts.Project{}, prompts.SlugTaken(slug)
		}
		now := s.clock.Now()
		p := &prompts.Project{
			ID:          prompts.NewID(now),
			Name:        in.Name,
			Slug:        slug,
			Description: in.Description,
			IsPrivate:   in.IsPrivate,
			CreatedAt:   now,
		}
		s.projects[p.ID] = p
		s.slugs[slug] = p.ID
		s.projectOrder = insertSorted(s.projectOrder, p.ID)
		c := *p
		s.emit(prompts.Event{Type: prompts.EventProjectCreated, ProjectID: p.ID, CreatedAt: now, Project: &c})
		return *p, nil
	})
}

// GetProject implements prompts.Store.
func (s *Store) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return prompts.Project{}, err
	}
	defer s.mu.RUnlock()
	p, ok := s.projects[id]
	if !ok {
		return prompts.Project{}, prompts.NotFound("project")
	}
	return *p, nil
}

// ListProjects implements prompts.Store.
func (s *Store) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	ids := s.projectOrder
	if f.IDs != nil {
		ids = sortedKnown(f.IDs, func(id string) bool { _, ok := s.projects[id]; return ok })
	}
	page, more := pageAfter(ids, f.Page)
	out := make([]prompts.Project, len(page))
	for i, id := range page {
		out[i] = *s.projects[id]
	}
	return out, more, nil
}
