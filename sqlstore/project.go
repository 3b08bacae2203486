package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// CreateProject implements prompts.Store. One statement inserts the
// project and appends its event.
func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	p, err := bounded(ctx, func() (prompts.Project, error) { return s.createProject(ctx, in) })
	return woke(s, p, err)
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
	err := s.single(ctx, qCreateProject, func(st *sqlx.Stmt) error {
		_, err := st.ExecContext(ctx, p.ID, p.Name, p.Slug, p.Description, p.IsPrivate, p.CreatedAt, s.cutoff())
		return err
	})
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

// GetProject implements prompts.Store.
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

// ListProjects implements prompts.Store. It pages on the primary key.
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

// projectRow receives the columns projectCols, which an outer join may
// leave NULL.
type projectRow struct {
	id, name, slug, description sql.NullString
	private                     sql.NullBool
	created                     sql.NullTime
}

func (r *projectRow) dest() []any {
	return []any{&r.id, &r.name, &r.slug, &r.description, &r.private, &r.created}
}

// project returns the project, or false when the columns were NULL.
func (r *projectRow) project() (prompts.Project, bool) {
	if !r.id.Valid {
		return prompts.Project{}, false
	}
	return prompts.Project{ID: r.id.String, Name: r.name.String, Slug: r.slug.String, Description: r.description.String,
		IsPrivate: r.private.Bool, CreatedAt: r.created.Time.UTC()}, true
}

// single runs a write of one statement, q: run executes it on the
// statement it is given. When the database's default isolation is above
// READ COMMITTED, writers racing for a row (the event counter's, which
// every write that appends events takes) fail to serialize; then single
// runs q again in a READ COMMITTED transaction of its own, where a writer
// waits for the lock instead. Its errors are run's, or the domain's.
func (s *Store) single(ctx context.Context, q query, run func(*sqlx.Stmt) error) error {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return s.fail(ctx, err)
	}
	if err := run(st); !isSerializationFailure(err) {
		return err
	}
	tx, err := s.begin(ctx, q)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	if st, err = tx.stmt(ctx, q); err != nil {
		return s.fail(ctx, err)
	}
	if err := run(st); err != nil {
		return err
	}
	return s.fail(ctx, tx.Commit())
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
