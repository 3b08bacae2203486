package memstore

import (
	"context"
	"slices"

	"github.com/promptkit/prompts"
)

// CreatePrompt implements prompts.Store.
func (s *Store) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.Prompt{}, err
	}
	return write(s, opCreatePrompt, in.Idempotency, func() (prompts.Prompt, error) {
		if _, ok := s.projects[in.ProjectID]; !ok {
			return prompts.Prompt{}, prompts.NotFound("project")
		}
		k := projectKey{in.ProjectID, in.Key}
		if _, taken := s.byKey[k]; taken {
			return prompts.Prompt{}, prompts.KeyTaken(in.Key)
		}
		now := s.clock.Now()
		rec := &prompt{p: prompts.Prompt{
			ID:          prompts.NewID(now),
			ProjectID:   in.ProjectID,
			Key:         in.Key,
			Name:        in.Name,
			Description: copyString(in.Description),
			CreatedAt:   now,
			Revision:    prompts.NextRevision(0, now),
		}}
		id := rec.p.ID
		s.prompts[id] = rec
		s.byKey[k] = id
		s.promptOrder = insertSorted(s.promptOrder, id)
		s.byProject[in.ProjectID] = insertSorted(s.byProject[in.ProjectID], id)
		s.emitPrompt(prompts.EventPromptCreated, rec.p, now)
		return rec.p.Copy(), nil
	})
}

// GetPrompt implements prompts.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return prompts.Prompt{}, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.prompts[id]
	if !ok {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	return rec.p.Copy(), nil
}

// UpdatePrompt implements prompts.Store.
func (s *Store) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.Prompt{}, err
	}
	return write(s, "", prompts.Idempotency{}, func() (prompts.Prompt, error) {
		rec, ok := s.prompts[id]
		if !ok {
			return prompts.Prompt{}, prompts.NotFound("prompt")
		}
		next, changed := in.Apply(rec.p) // Apply copies a new description
		if !changed {
			return rec.p.Copy(), nil
		}
		if next.Key != rec.p.Key {
			k := projectKey{rec.p.ProjectID, next.Key}
			if _, taken := s.byKey[k]; taken {
				return prompts.Prompt{}, prompts.KeyTaken(next.Key)
			}
			delete(s.byKey, projectKey{rec.p.ProjectID, rec.p.Key})
			s.byKey[k] = id
		}
		now := s.clock.Now()
		next.Revision = prompts.NextRevision(rec.p.Revision, now)
		rec.p = next
		s.emitPrompt(prompts.EventPromptUpdated, rec.p, now)
		return rec.p.Copy(), nil
	})
}

// ListPrompts implements prompts.Store.
func (s *Store) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	if err := s.rlock(ctx, f.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	var ids []string
	switch {
	case f.Key != "":
		ids = s.idsByKey(f)
	case f.ProjectIDs == nil:
		ids = s.promptOrder
	case len(f.ProjectIDs) == 1:
		ids = s.byProject[f.ProjectIDs[0]]
	default:
		var all []string
		for _, pid := range slices.Compact(slices.Sorted(slices.Values(f.ProjectIDs))) {
			all = append(all, s.byProject[pid]...)
		}
		slices.Sort(all)
		ids = all
	}
	page, more := pageAfter(ids, f.Page)
	out := make([]prompts.Prompt, len(page))
	for i, id := range page {
		out[i] = s.prompts[id].p.Copy()
	}
	return out, more, nil
}

// idsByKey returns the sorted ids of the prompts with f.Key in f's projects.
func (s *Store) idsByKey(f prompts.PromptFilter) []string {
	var ids []string
	if f.ProjectIDs != nil {
		for _, pid := range f.ProjectIDs {
			if id, ok := s.byKey[projectKey{pid, f.Key}]; ok {
				ids = append(ids, id)
			}
		}
	} else {
		for k, id := range s.byKey {
			if k.key == f.Key {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
