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
		got, gerr := s.GetProject(ctx, p.ID)
		switch {
		case gerr == nil:
			return got, nil
		case errors.Is(gerr, prompts.ErrNotFound):
			return prompts.Project{}, prompts.Conflict("a project with slug " + p.Slug + " exists")
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
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	defer rows.Close()
	out := make([]prompts.Project, 0, min(n+1, 16))
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, false, s.fail(ctx, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

type scanner interface{ Scan(dest ...any) error }

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
