package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/promptkit/prompts"
)

// ensureProjects makes sure a project of each name exists; with no names
// and no projects at all, it creates one named Demo. It logs every
// project's id, which clients need to create prompts.
func ensureProjects(ctx context.Context, store prompts.Store, names []string, logger *slog.Logger) error {
	existing, err := allProjects(ctx, store)
	if err != nil {
		return err
	}
	if len(names) == 0 && len(existing) == 0 {
		names = []string{"Demo"}
	}
	byName := make(map[string]prompts.Project, len(existing))
	for _, p := range existing {
		byName[p.Name] = p
	}
	for _, name := range names {
		if _, ok := byName[name]; ok {
			continue
		}
		p, err := createProject(ctx, store, name)
		if err != nil {
			return fmt.Errorf("project %q: %w", name, err)
		}
		byName[name] = p
		existing = append(existing, p)
	}
	for _, p := range existing {
		logger.Info("project", "id", p.ID, "name", p.Name)
	}
	return nil
}

// createProject creates a project named name, or finds the one another
// replica created at the same moment. When another project already has the
// slug the name gives ("Demo" and "demo"), it takes the slug with a number
// after it.
func createProject(ctx context.Context, store prompts.Store, name string) (prompts.Project, error) {
	slug := prompts.Slugify(name)
	for i := 1; i <= 20; i++ {
		in := prompts.NewProject{Name: name}
		if i > 1 {
			in.Slug = fmt.Sprintf("%s-%d", slug, i)
		}
		p, err := store.CreateProject(ctx, in)
		if !errors.Is(err, prompts.ErrConflict) {
			return p, err
		}
		all, err := allProjects(ctx, store)
		if err != nil {
			return prompts.Project{}, err
		}
		for _, p := range all {
			if p.Name == name {
				return p, nil // created by another replica
			}
		}
	}
	return prompts.Project{}, fmt.Errorf("no free slug for %q", name)
}

func allProjects(ctx context.Context, store prompts.Store) ([]prompts.Project, error) {
	var all []prompts.Project
	page := prompts.ProjectFilter{Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		ps, more, err := store.ListProjects(ctx, page)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
		if !more || len(ps) == 0 {
			return all, nil
		}
		page.After = ps[len(ps)-1].ID
	}
}
