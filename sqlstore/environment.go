package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/promptkit/prompts"
)

// What each environment of a prompt points at: the table environments,
// one row per prompt and environment that has an active version.

// activeRow receives the columns promptCols and versionCols.
type activeRow struct {
	id, projectID, key, name, description, latest sql.NullString
	created                                       sql.NullTime
	revision                                      sql.NullInt64
	v                                             versionRow
}

func (r *activeRow) dest() []any {
	return append([]any{&r.id, &r.projectID, &r.key, &r.name, &r.description, &r.latest, &r.created, &r.revision}, r.v.dest()...)
}

// active returns the prompt with its version in env, or false when the
// prompt's columns were NULL.
func (r *activeRow) active(env prompts.Environment) (prompts.ActivePrompt, bool) {
	if !r.id.Valid {
		return prompts.ActivePrompt{}, false
	}
	a := prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID:              r.id.String,
			ProjectID:       r.projectID.String,
			Key:             r.key.String,
			Name:            r.name.String,
			LatestVersionID: r.latest.String,
			CreatedAt:       r.created.Time.UTC(),
			Revision:        r.revision.Int64,
		},
		Environment: env,
	}
	if r.description.Valid {
		a.Description = &r.description.String
	}
	if v, ok := r.v.version(a.ID); ok {
		a.ActiveVersion = &v
	}
	return a, true
}

// GetActive implements prompts.Store. One round trip: one statement joins
// the prompt, the environment's pointer and the version.
func (s *Store) GetActive(ctx context.Context, promptID string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(promptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	st, err := s.stmt(ctx, qGetActive)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	a, err := scanActive(st.QueryRowContext(ctx, promptID, string(env)), env)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	return a, nil
}

// scanActive scans the row of qGetActive.
func scanActive(row *sql.Row, env prompts.Environment) (prompts.ActivePrompt, error) {
	var r activeRow
	err := row.Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	a, _ := r.active(env)
	return a, nil
}

// GetActiveByKey implements prompts.Store. One round trip, which also tells
// an unknown project from an unknown key.
func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if err := env.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(projectID) {
		return prompts.ActivePrompt{}, prompts.NotFound("project")
	}
	if !prompts.ValidKey(key) {
		// No prompt has it, but whether the project exists still decides
		// which is not found, as in every Store. The empty key finds no
		// prompt and, unlike a malformed one, is safe to send.
		key = ""
	}
	st, err := s.stmt(ctx, qGetActiveByKey)
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	var r activeRow
	err = st.QueryRowContext(ctx, projectID, key, string(env)).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.ActivePrompt{}, prompts.NotFound("project")
	}
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	a, ok := r.active(env)
	if !ok {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	return a, nil
}

// Activate implements prompts.Store. In one transaction: lock the prompt
// (one round trip), point the environment at the version unless it points
// there already and then move the revision on (one), and read the prompt
// as GetActive does (one); with BEGIN and COMMIT, five.
func (s *Store) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	if err := in.Validate(); err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !prompts.ValidID(in.PromptID) {
		return prompts.ActivePrompt{}, prompts.NotFound("prompt")
	}
	tx, err := s.begin(ctx, qLockEnvironments, qPointEnvironment, qGetActive)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	a, err := activate(ctx, tx, in, s.clock.Now())
	if err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return prompts.ActivePrompt{}, s.fail(ctx, err)
	}
	return a, nil
}

// activate points in.Environment at the version in names, in tx, and
// returns the prompt as it then is in that environment.
func activate(ctx context.Context, tx *tx, in prompts.Activation, now time.Time) (prompts.ActivePrompt, error) {
	if _, err := lockEnvironments(ctx, tx, in.PromptID); err != nil {
		return prompts.ActivePrompt{}, err
	}
	var number, id any // the version asked for: by number or, if well-formed, by id
	switch {
	case in.VersionNumber.HasValue():
		number = versionNumber(in.VersionNumber.Value)
	case prompts.ValidID(in.VersionID.Value):
		id = in.VersionID.Value
	}
	st, err := tx.stmt(ctx, qPointEnvironment)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	var found, changed bool
	err = st.QueryRowContext(ctx, in.PromptID, string(in.Environment), number, id, now.UnixMicro(), now).Scan(&found, &changed)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	if !found {
		return prompts.ActivePrompt{}, prompts.NotFound("version")
	}
	st, err = tx.stmt(ctx, qGetActive)
	if err != nil {
		return prompts.ActivePrompt{}, err
	}
	return scanActive(st.QueryRowContext(ctx, in.PromptID, string(in.Environment)), in.Environment)
}

// Deactivate implements prompts.Store. In one transaction: lock the prompt
// (one round trip), and point env at no version, moving the revision on
// when it pointed at one (one); with BEGIN and COMMIT, four.
func (s *Store) Deactivate(ctx context.Context, promptID string, env prompts.Environment) error {
	if err := env.Validate(); err != nil {
		return err
	}
	if !prompts.ValidID(promptID) {
		return prompts.NotFound("prompt")
	}
	tx, err := s.begin(ctx, qLockEnvironments, qClearEnvironment)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	if err := deactivate(ctx, tx, promptID, env, s.clock.Now()); err != nil {
		return s.fail(ctx, err)
	}
	return s.fail(ctx, tx.Commit())
}

// deactivate points env at no version, in tx.
func deactivate(ctx context.Context, tx *tx, promptID string, env prompts.Environment, now time.Time) error {
	if _, err := lockEnvironments(ctx, tx, promptID); err != nil {
		return err
	}
	st, err := tx.stmt(ctx, qClearEnvironment)
	if err != nil {
		return err
	}
	var changed bool
	return st.QueryRowContext(ctx, promptID, string(env), now.UnixMicro()).Scan(&changed)
}

// lockEnvironments locks the prompt's row for the rest of tx, which
// serializes the changes of what its environments point at, and returns
// its revision. An unknown prompt is ErrNotFound. What tx reads after it
// is what the writer it may have waited for committed.
func lockEnvironments(ctx context.Context, tx *tx, promptID string) (int64, error) {
	st, err := tx.stmt(ctx, qLockEnvironments)
	if err != nil {
		return 0, err
	}
	var revision int64
	err = st.QueryRowContext(ctx, promptID).Scan(&revision)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, prompts.NotFound("prompt")
	}
	return revision, err
}
