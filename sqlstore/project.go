package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// CreateProject implements prompts.Store. One round trip.
func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	return bounded(ctx, func() (prompts.Project, error) { return s.createProject(ctx, in) })
}

func (s *Store) createProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	if err := in.Validate(); err != nil {
		return prompts.Project{}, err
	}
	now := s.clock.Now()
	p := prompts.Project{
		ID:          prompts.NewID(now),
		Name:        in.Name,
		Slug:        in.ProjectSlug(),
		Description: in.Description,
		IsPrivate:   in.IsPrivate,
		CreatedAt:   now,
	}
	st, err := s.stmt(ctx, qCreateProject)
	if err != nil {
		return prompts.Project{}, s.fail(ctx, err)
	}
	_, err = st.ExecContext(ctx, p.ID, p.Name, p.Slug, p.Description, p.IsPrivate, p.CreatedAt)
	if isUniqueViolation(err, constraintSlug) {
		// database/sql runs a statement again on a fresh connection when
		// the first one broke without an answer; the first run may have
		// stored the project. If so, this call succeeded.
		got, gerr := s.getProject(ctx, p.ID)
		switch {
		case gerr == nil:
			return got, nil
		case errors.Is(gerr, prompts.ErrNotFound):
			return prompts.Project{}, prompts.SlugTaken(p.Slug)
		default:
			return prompts.Project{}, gerr
		}
	}
	if err != nil {
		return prompts.Project{}, s.fail(ctx, err)
	}
	return p, nil
}

// GetProject implements prompts.Store. One round trip.
func (s *Store) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	return bounded(ctx, func() (prompts.Project, error) { return s.getProject(ctx, id) })
}

func (s *Store) getProject(ctx context.Context, id string) (prompts.Project, error) {
	if !prompts.ValidID(id) {
		return prompts.Project{}, prompts.NotFound("project")
	}
	st, err := s.stmt(ctx, qGetProject)
	if err != nil {
		return prompts.Project{}, s.fail(ctx, err)
	}
	p, err := scanProject(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.Project{}, prompts.NotFound("project")
	}
	if err != nil {
		return prompts.Project{}, s.fail(ctx, err)
	}
	return p, nil
}

// ListProjects implements prompts.Store. One round trip, on the primary key.
func (s *Store) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	return boundedPage(ctx, func() ([]prompts.Project, bool, error) { return s.listProjects(ctx, f) })
}

func (s *Store) listProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	n := f.Size()
	q, args := qListProjects, []any{f.After, n + 1}
	if f.IDs != nil {
		ids := validIDs(f.IDs)
		if len(ids) == 0 {
			return []prompts.Project{}, false, nil
		}
		q, args = qListProjectsByIDs, []any{pq.StringArray(ids), f.After, n + 1}
	}
	return listPage(ctx, s, q, args, n, scanProject)
}

type scanner interface{ Scan(dest ...any) error }

// listPage runs the list statement q, which asks for n+1 rows, and returns
// at most n items and whether more follow.
func listPage[T any](ctx context.Context, s *Store, q query, args []any, n int, scan func(scanner) (T, error)) ([]T, bool, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	defer rows.Close()
	out := make([]T, 0, min(n+1, 16))
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, false, s.fail(ctx, err)
		}
		out = append(out, item)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

func scanProject(sc scanner) (prompts.Project, error) {
	var p prompts.Project
	err := sc.Scan(&p.ID, &p.Name, &p.Slug, &p.Description, &p.IsPrivate, &p.CreatedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}

// validIDs returns the well-formed ids among ids, sorted, without
// duplicates: the others name nothing.
func validIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if prompts.ValidID(id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
