package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// A project's environments: the table project_environments (migration
// 0012). production and staging have no row until they are first
// protected; every other environment has one. A change of what an
// environment points at reads its row FOR SHARE in its transaction, under
// the prompt's lock, and a removal locks it FOR UPDATE before it checks
// that nothing is active there: the two take turns, so that nothing is
// ever active in a removed environment.

// PutEnvironment implements prompts.Store. In one transaction it locks
// the environment's row (when it has one), adds it or sets its protection,
// and appends the event of the change, if any.
func (s *Store) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	e, err := bounded(ctx, func() (prompts.ProjectEnvironment, error) {
		if err := in.Validate(); err != nil {
			return prompts.ProjectEnvironment{}, err
		}
		if !prompts.ValidID(in.ProjectID) {
			return prompts.ProjectEnvironment{}, prompts.NotFound("project")
		}
		// A writer that adds the same environment at the same time makes
		// the insert find it: then the transaction runs again, and locks it.
		for range 3 {
			e, done, err := s.putEnvironment(ctx, in)
			if err != nil || done {
				return e, err
			}
		}
		return prompts.ProjectEnvironment{}, prompts.Unavailable(errors.New("sqlstore: the environment kept changing while it was put"))
	})
	return woke(s, e, err)
}

// putEnvironment is one attempt of PutEnvironment; done is false when
// another writer added the environment after its lock found none.
func (s *Store) putEnvironment(ctx context.Context, in prompts.NewEnvironment) (e prompts.ProjectEnvironment, done bool, err error) {
	tx, err := s.begin(ctx, qLockEnvironment, qPutEnvironment, qSetEnvironment, qGetProject)
	if err != nil {
		return e, false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	e, done, err = func() (prompts.ProjectEnvironment, bool, error) {
		e := prompts.ProjectEnvironment{Name: in.Name, Protected: in.Protected}
		now := s.clock.Now()
		row, found, err := lockEnvironment(ctx, tx, in.ProjectID, in.Name)
		if err != nil {
			return e, false, err
		}
		typ := prompts.EventEnvironmentUpdated
		switch {
		case found && row.Protected == in.Protected:
			return row, true, nil // nothing changes
		case found:
			st, err := tx.stmt(ctx, qSetEnvironment)
			if err != nil {
				return e, false, err
			}
			if _, err := st.ExecContext(ctx, in.ProjectID, string(in.Name), in.Protected); err != nil {
				return e, false, err
			}
			e.CreatedAt = row.CreatedAt
		default:
			st, err := tx.stmt(ctx, qGetProject)
			if err != nil {
				return e, false, err
			}
			var p projectRow
			err = st.QueryRowContext(ctx, in.ProjectID).Scan(p.dest()...)
			if errors.Is(err, sql.ErrNoRows) {
				return e, false, prompts.NotFound("project")
			}
			if err != nil {
				return e, false, err
			}
			created := now
			if in.Name.Builtin() {
				// Built in: it has no row until first protected, and dates
				// from its project.
				created = p.created.Time
				if !in.Protected {
					return prompts.ProjectEnvironment{Name: in.Name, CreatedAt: created.UTC()}, true, nil
				}
			} else {
				typ = prompts.EventEnvironmentCreated
			}
			put, err := tx.stmt(ctx, qPutEnvironment)
			if err != nil {
				return e, false, err
			}
			err = put.QueryRowContext(ctx, in.ProjectID, string(in.Name), in.Protected, created).Scan(&e.Name, &e.Protected, &e.CreatedAt)
			if errors.Is(err, sql.ErrNoRows) {
				return e, false, nil // added meanwhile: again
			}
			if err != nil {
				return e, false, err
			}
		}
		e.CreatedAt = e.CreatedAt.UTC()
		ev, err := environmentEvent(typ, in.ProjectID, e, now)
		if err != nil {
			return e, false, err
		}
		tx.emit(ev)
		return e, true, nil
	}()
	if err != nil || !done {
		return e, done, s.fail(ctx, err)
	}
	return e, true, s.fail(ctx, tx.commit(ctx))
}

// lockEnvironment locks the row of the project's environment name, for
// the rest of tx, and returns it; found is false when there is none.
func lockEnvironment(ctx context.Context, tx *tx, projectID string, name prompts.Environment) (e prompts.ProjectEnvironment, found bool, err error) {
	st, err := tx.stmt(ctx, qLockEnvironment)
	if err != nil {
		return e, false, err
	}
	e.Name = name
	err = st.QueryRowContext(ctx, projectID, string(name)).Scan(&e.Protected, &e.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return e, false, nil
	}
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err == nil, err
}

// eventEnvironment is an environment as the data of its event's row holds
// it. It has the fields of prompts.ProjectEnvironment, so that a
// conversion moves one to the other.
type eventEnvironment struct {
	Name      prompts.Environment `json:"name"`
	Protected bool                `json:"protected"`
	CreatedAt time.Time           `json:"created_at"`
}

// environmentEvent is the event of a change of the project's environment e.
func environmentEvent(typ prompts.EventType, projectID string, e prompts.ProjectEnvironment, at time.Time) (pendingEvent, error) {
	b, err := json.Marshal(eventEnvironment(e))
	if err != nil {
		return pendingEvent{}, err
	}
	return pendingEvent{typ: typ, projectID: projectID, data: string(b), at: at}, nil
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
	v, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.deleteEnvironment(ctx, projectID, name) })
	_, err = woke(s, v, err)
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
		removed, found, err := lockEnvironment(ctx, tx, projectID, name)
		if err != nil {
			return err
		}
		if !found {
			list, err := tx.stmt(ctx, qListEnvironments)
			if err != nil {
				return err
			}
			if _, err := listEnvironments(ctx, list.QueryContext, projectID); err != nil {
				return err // the project is unknown
			}
			return prompts.NotFound("environment")
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
		if _, err = del.ExecContext(ctx, projectID, string(name)); err != nil {
			return err
		}
		ev, err := environmentEvent(prompts.EventEnvironmentDeleted, projectID, removed, s.clock.Now())
		if err != nil {
			return err
		}
		tx.emit(ev)
		return nil
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
