package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/promptkit/prompts"
)

// A project's environments: the table project_environments (migration
// 0012). production and staging have no row until they are first
// protected; every other environment has one. A change of what an
// environment points at reads its row FOR SHARE in its transaction, under
// the prompt's lock, and a removal locks it FOR UPDATE before it checks
// that nothing is active there: the two take turns, so that nothing is
// ever active in a removed environment.

// PutEnvironment implements prompts.Store.
func (s *Store) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	return bounded(ctx, func() (prompts.ProjectEnvironment, error) {
		if err := in.Validate(); err != nil {
			return prompts.ProjectEnvironment{}, err
		}
		if !prompts.ValidID(in.ProjectID) {
			return prompts.ProjectEnvironment{}, prompts.NotFound("project")
		}
		st, err := s.stmt(ctx, qPutEnvironment)
		if err != nil {
			return prompts.ProjectEnvironment{}, s.fail(ctx, err)
		}
		var e prompts.ProjectEnvironment
		err = st.QueryRowContext(ctx, in.ProjectID, string(in.Name), in.Protected, s.clock.Now()).Scan(&e.Name, &e.Protected, &e.CreatedAt)
		if errors.Is(err, sql.ErrNoRows) {
			return prompts.ProjectEnvironment{}, prompts.NotFound("project")
		}
		if err != nil {
			return prompts.ProjectEnvironment{}, s.fail(ctx, err)
		}
		e.CreatedAt = e.CreatedAt.UTC()
		return e, nil
	})
}

// ListEnvironments implements prompts.Store.
func (s *Store) ListEnvironments(ctx context.Context, projectID string) ([]prompts.ProjectEnvironment, error) {
	return bounded(ctx, func() ([]prompts.ProjectEnvironment, error) {
		if !prompts.ValidID(projectID) {
			return nil, prompts.NotFound("project")
		}
		st, err := s.stmt(ctx, qListEnvironments)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		l, err := listEnvironments(ctx, st.QueryContext, projectID)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		return l, nil
	})
}

// listEnvironments reads the project's environments with query (of
// qListEnvironments, on the Store or a transaction); an unknown project
// is ErrNotFound.
func listEnvironments(ctx context.Context, query func(context.Context, ...any) (*sql.Rows, error), projectID string) ([]prompts.ProjectEnvironment, error) {
	rows, err := query(ctx, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []prompts.ProjectEnvironment
	for rows.Next() {
		var (
			e   prompts.ProjectEnvironment
			ord int
		)
		if err := rows.Scan(&e.Name, &e.Protected, &e.CreatedAt, &ord); err != nil {
			return nil, err
		}
		e.CreatedAt = e.CreatedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, prompts.NotFound("project")
	}
	return out, nil
}

// unknownEnvironment returns UnknownEnvironment's error for field, listing
// the project's environments as they are now.
func (s *Store) unknownEnvironment(ctx context.Context, projectID, field string) error {
	st, err := s.stmt(ctx, qListEnvironments)
	if err != nil {
		return err
	}
	l, err := listEnvironments(ctx, st.QueryContext, projectID)
	if err != nil {
		return err
	}
	return prompts.UnknownEnvironment(field, prompts.EnvironmentNames(l))
}

// DeleteEnvironment implements prompts.Store. In one transaction it locks
// the environment's row, checks that no prompt of the project has a
// version active there, and removes it, telling the caches.
func (s *Store) DeleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.deleteEnvironment(ctx, projectID, name) })
	return err
}

func (s *Store) deleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	if err := name.Validate(); err != nil {
		return err
	}
	if !prompts.ValidID(projectID) {
		return prompts.NotFound("project")
	}
	if name.Builtin() {
		// Built in: a conflict once the project is known.
		st, err := s.stmt(ctx, qListEnvironments)
		if err != nil {
			return s.fail(ctx, err)
		}
		if _, err := listEnvironments(ctx, st.QueryContext, projectID); err != nil {
			return s.fail(ctx, err)
		}
		return prompts.BuiltinEnvironment(name)
	}
	tx, err := s.begin(ctx, qLockEnvironment, qEnvironmentInUse, qDeleteEnvironment, qListEnvironments)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	err = func() error {
		lock, err := tx.stmt(ctx, qLockEnvironment)
		if err != nil {
			return err
		}
		var ok bool
		err = lock.QueryRowContext(ctx, projectID, string(name)).Scan(&ok)
		if errors.Is(err, sql.ErrNoRows) {
			list, err := tx.stmt(ctx, qListEnvironments)
			if err != nil {
				return err
			}
			if _, err := listEnvironments(ctx, list.QueryContext, projectID); err != nil {
				return err // the project is unknown
			}
			return prompts.NotFound("environment")
		}
		if err != nil {
			return err
		}
		use, err := tx.stmt(ctx, qEnvironmentInUse)
		if err != nil {
			return err
		}
		var inUse bool
		if err := use.QueryRowContext(ctx, projectID, string(name)).Scan(&inUse); err != nil {
			return err
		}
		if inUse {
			return prompts.EnvironmentInUse(name)
		}
		del, err := tx.stmt(ctx, qDeleteEnvironment)
		if err != nil {
			return err
		}
		_, err = del.ExecContext(ctx, projectID, string(name))
		return err
	}()
	if err != nil {
		return s.fail(ctx, err)
	}
	return s.fail(ctx, tx.commit(ctx))
}

// checkEnvironment checks, in a change's transaction, that env is one of
// the project's environments (else UnknownEnvironment's error for field)
// and that the change may change it: allow, when it is protected. rows are
// the project's rows of the environments the change names, as envRows has
// them, read FOR SHARE under the prompt's lock: a removal of env waits for
// tx. A built-in environment without a row was never protected.
func checkEnvironment(ctx context.Context, tx *tx, projectID string, env prompts.Environment, rows []string, field string, allow bool) error {
	for _, r := range rows {
		name, protected := strings.CutSuffix(r, ":protected")
		if name != string(env) {
			continue
		}
		if protected && !allow {
			return prompts.ProtectedEnvironment(env)
		}
		return nil
	}
	if env.Builtin() {
		return nil
	}
	list, err := tx.stmt(ctx, qListEnvironments)
	if err != nil {
		return err
	}
	l, err := listEnvironments(ctx, list.QueryContext, projectID)
	if err != nil {
		return err
	}
	return prompts.UnknownEnvironment(field, prompts.EnvironmentNames(l))
}

// knownForPrompt checks, for a read of the prompt in env, that env is one
// of its project's environments; an unknown prompt is ErrNotFound. A
// built-in environment needs no statement.
func (s *Store) knownForPrompt(ctx context.Context, promptID string, env prompts.Environment) error {
	if env.Builtin() {
		return nil
	}
	st, err := s.stmt(ctx, qEnvironmentOfPrompt)
	if err != nil {
		return err
	}
	var (
		projectID string
		known     bool
	)
	err = st.QueryRowContext(ctx, promptID, string(env)).Scan(&projectID, &known)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return prompts.NotFound("prompt")
	case err != nil:
		return err
	case !known:
		return s.unknownEnvironment(ctx, projectID, "environment")
	}
	return nil
}

// knownForProject checks, for a read in the project, that env is one of
// its environments; an unknown project is ErrNotFound.
func (s *Store) knownForProject(ctx context.Context, projectID string, env prompts.Environment) error {
	if env.Builtin() {
		return nil
	}
	st, err := s.stmt(ctx, qEnvironmentOfProject)
	if err != nil {
		return err
	}
	var known bool
	err = st.QueryRowContext(ctx, projectID, string(env)).Scan(&known)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return prompts.NotFound("project")
	case err != nil:
		return err
	case !known:
		return s.unknownEnvironment(ctx, projectID, "environment")
	}
	return nil
}
