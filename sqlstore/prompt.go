package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// CreatePrompt implements prompts.Store. One statement checks the
// project, inserts the prompt and appends its event.
func (s *Store) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	p, err := bounded(ctx, func() (prompts.Prompt, error) { return s.createPrompt(ctx, in) })
	return woke(s, p, err)
}

func (s *Store) createPrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.Prompt{}, err
	}
	if !prompts.ValidID(in.ProjectID) {
		return prompts.Prompt{}, prompts.NotFound("project")
	}
	now := s.clock.Now()
	p := prompts.Prompt{
		ID:          prompts.NewID(now),
		ProjectID:   in.ProjectID,
		Key:         in.Key,
		Name:        in.Name,
		Description: copyString(in.Description),
		CreatedAt:   now,
		Revision:    prompts.NextRevision(0, now),
	}
	event, err := promptEvent(prompts.EventPromptCreated, p, now)
	if err != nil {
		return prompts.Prompt{}, prompts.Internal(err)
	}
	insert := func(st *sqlx.Stmt, appendEvent bool, n *int) error {
		return st.QueryRowContext(ctx, p.ID, p.ProjectID, p.Key, p.Name, nullString(p.Description), p.CreatedAt, p.Revision,
			appendEvent, event.data, s.cutoff()).Scan(n)
	}
	if !in.Idempotency.IsZero() {
		return idempotent(ctx, s, opCreatePrompt, in.Idempotency, func(ctx context.Context, tx *tx) (prompts.Prompt, error) {
			st, err := tx.stmt(ctx, qCreatePrompt)
			if err != nil {
				return prompts.Prompt{}, err
			}
			var n int
			err = insert(st, false, &n)
			if isUniqueViolation(err, constraintPromptKey) {
				return prompts.Prompt{}, prompts.KeyTaken(p.Key)
			}
			if err != nil {
				return prompts.Prompt{}, err
			}
			if n == 0 {
				return prompts.Prompt{}, prompts.NotFound("project")
			}
			tx.emit(event)
			return p, nil
		}, qCreatePrompt)
	}
	var n int
	err = s.single(ctx, qCreatePrompt, func(st *sqlx.Stmt) error { return insert(st, true, &n) })
	if isUniqueViolation(err, constraintPromptKey) {
		// As in CreateProject: a run that database/sql repeated after a
		// broken connection may find its own first run's row.
		got, gerr := s.getPrompt(ctx, p.ID)
		switch {
		case gerr == nil:
			return got, nil
		case errors.Is(gerr, prompts.ErrNotFound):
			return prompts.Prompt{}, prompts.KeyTaken(p.Key)
		default:
			return prompts.Prompt{}, gerr
		}
	}
	if err != nil {
		return prompts.Prompt{}, s.fail(ctx, err)
	}
	if n == 0 {
		return prompts.Prompt{}, prompts.NotFound("project")
	}
	return p, nil
}

// GetPrompt implements prompts.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	return bounded(ctx, func() (prompts.Prompt, error) { return s.getPrompt(ctx, id) })
}

func (s *Store) getPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	if !prompts.ValidID(id) {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	st, err := s.stmt(ctx, qGetPrompt)
	if err != nil {
		return prompts.Prompt{}, s.fail(ctx, err)
	}
	p, err := scanPrompt(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	if err != nil {
		return prompts.Prompt{}, s.fail(ctx, err)
	}
	return p, nil
}

// UpdatePrompt implements prompts.Store. One statement updates the prompt
// and appends the event when a value changes; the zero update only reads.
// An update to the values the prompt has writes them again but keeps the
// revision, and appends no event.
func (s *Store) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	p, err := bounded(ctx, func() (prompts.Prompt, error) { return s.updatePrompt(ctx, id, in) })
	return woke(s, p, err)
}

func (s *Store) updatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.Prompt{}, err
	}
	if !in.Key.Set && !in.Name.Set && !in.Description.Set {
		return s.getPrompt(ctx, id)
	}
	if !prompts.ValidID(id) {
		return prompts.Prompt{}, prompts.NotFound("prompt")
	}
	var desc any
	if in.Description.Set && !in.Description.Null {
		desc = in.Description.Value
	}
	now := s.clock.Now()
	var p prompts.Prompt
	err := s.single(ctx, qUpdatePrompt, func(st *sqlx.Stmt) (err error) {
		p, err = scanPrompt(st.QueryRowContext(ctx, id,
			in.Key.Set, in.Key.Value, in.Name.Set, in.Name.Value, in.Description.Set, desc, now.UnixMicro(), now, s.cutoff()))
		return err
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return prompts.Prompt{}, prompts.NotFound("prompt")
	case isUniqueViolation(err, constraintPromptKey):
		return prompts.Prompt{}, prompts.KeyTaken(in.Key.Value)
	case err != nil:
		return prompts.Prompt{}, s.fail(ctx, err)
	}
	return p, nil
}

// ListPrompts implements prompts.Store. Each filter has a statement of its
// own that an index answers in id order from the page's position: the
// primary key for all prompts, (project_id, id) for one project and,
// merged, for several, (key, id) for a key, and the unique (project_id,
// key) for a key in some projects.
func (s *Store) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	return boundedPage(ctx, func() ([]prompts.Prompt, bool, error) { return s.listPrompts(ctx, f) })
}

func (s *Store) listPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	if err := f.Validate(); err != nil {
		return nil, false, err
	}
	n := f.Size()
	var projects []string
	if f.ProjectIDs != nil {
		projects = validIDs(f.ProjectIDs)
		if len(projects) == 0 {
			return []prompts.Prompt{}, false, nil
		}
	}
	var (
		q    query
		args []any
	)
	switch {
	case f.Key != "" && projects == nil:
		q, args = qListPromptsByKey, []any{f.Key, f.After, n + 1}
	case f.Key != "":
		q, args = qListPromptsByKeyInProjects, []any{f.Key, pq.StringArray(projects), f.After, n + 1}
	case projects == nil:
		q, args = qListPrompts, []any{f.After, n + 1}
	case len(projects) == 1:
		q, args = qListPromptsByProject, []any{projects[0], f.After, n + 1}
	default:
		q, args = qListPromptsByProjects, []any{pq.StringArray(projects), f.After, n + 1}
	}
	return listPage(ctx, s, q, args, n, scanPrompt)
}

// scanPrompt scans the columns promptCols.
func scanPrompt(sc scanner) (prompts.Prompt, error) {
	var (
		p            prompts.Prompt
		desc, latest sql.NullString
	)
	if err := sc.Scan(&p.ID, &p.ProjectID, &p.Key, &p.Name, &desc, &latest, &p.CreatedAt, &p.Revision); err != nil {
		return prompts.Prompt{}, err
	}
	if desc.Valid {
		p.Description = &desc.String
	}
	p.LatestVersionID = latest.String
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// nullString returns *s, or nil (NULL) when s is nil.
func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
