package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math"
	"slices"

	"github.com/lib/pq"

	"github.com/promptkit/prompts"
)

// CreateVersion implements prompts.Store. Numbers are gapless and unique
// per prompt, and ids increase with them, however many processes write:
// the writers of one prompt take turns on its row lock. One call never
// stores two versions, even when database/sql runs its statement again on
// a new connection. A writer waiting for its turn gives up when ctx ends.
func (s *Store) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	v, err := bounded(ctx, func() (prompts.PromptVersion, error) { return s.createVersion(ctx, in) })
	return woke(s, v, err)
}

func (s *Store) createVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	if err := in.Validate(); err != nil {
		return prompts.PromptVersion{}, err
	}
	if !prompts.ValidID(in.PromptID) {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	// This process's writers of the prompt take turns before they make
	// their ids, so that they reach the row lock in the order of their ids
	// and none needs the retry below (see writeQueue).
	turn, err := s.writers.wait(ctx, in.PromptID)
	if err != nil {
		return prompts.PromptVersion{}, prompts.ContextDone(err)
	}
	defer s.writers.done(in.PromptID, turn)
	now := s.clock.Now()
	v := prompts.PromptVersion{
		ID:            prompts.NewID(now),
		PromptID:      in.PromptID,
		Content:       in.Content,
		ChangeSummary: copyString(in.ChangeSummary),
		Metadata:      in.Metadata.Normalize(),
		CreatedAt:     now,
		// "" until known: the prompt's latest version's format.
		TemplateFormat: in.TemplateFormat,
	}
	var inputs []string // the version's typed inputs (prompts.Signature)
	if in.TemplateFormat != "" {
		sig, err := prompts.VersionSignature(in.TemplateFormat, in.Content, v.Metadata)
		if err != nil {
			return prompts.PromptVersion{}, err
		}
		v.Variables, inputs = sig.Variables, sig.Inputs
		if v.Partials, err = prompts.TemplatePartials(in.TemplateFormat, in.Content); err != nil {
			return prompts.PromptVersion{}, err
		}
	}
	envs := environments(in.Environments)
	if !in.Idempotency.IsZero() {
		return idempotent(ctx, s, opCreateVersion, in.Idempotency, func(ctx context.Context, tx *tx) (prompts.PromptVersion, error) {
			return s.createVersionLocked(ctx, tx, v, inputs, envs, deploy(in))
		}, append(splitQueries, qLockPrompt, qCreateVersion, qPointEnvironment)...)
	}
	if len(envs) > 0 {
		return s.createVersionLocked(ctx, nil, v, inputs, envs, deploy(in))
	}
	// One statement counts the version on the prompt's row, which takes
	// the row's lock, inserts the version under that number, sets
	// latest_version_id and appends the event, all or nothing. It applies
	// only if the prompt's latest id is below v.ID: another process, whose
	// clock is ahead or whose id for the same millisecond came out larger,
	// may have stored a larger one first. Then it changes nothing, and the
	// version is stored under the lock, after the latest id.
	st, err := s.stmt(ctx, qCreateVersion)
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	// A version that names no format is plain as long as the latest
	// version is (else the statement stores nothing and the locked path
	// reads the latest format): the format of every part A client.
	fv, fvInputs, expect := v, inputs, any(nil)
	if fv.TemplateFormat == "" { // plain: no inputs
		fv.TemplateFormat, fv.Variables, fvInputs, fv.Partials, expect = prompts.FormatPlain, prompts.Variables(in.Content), nil, []string{}, string(prompts.FormatPlain)
	}
	var projectID string
	err = st.QueryRowContext(ctx, append(versionArgs(fv), true, s.cutoff(), string(fv.TemplateFormat), expect, inputsArg(fvInputs), pq.StringArray(fv.Partials))...).Scan(&fv.VersionNumber, &projectID)
	switch {
	case err == nil:
		return fv, nil
	case errors.Is(err, sql.ErrNoRows), // an unknown prompt, or a larger latest id
		isSerializationFailure(err): // a default isolation above READ COMMITTED
	default:
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	return s.createVersionLocked(ctx, nil, v, inputs, nil, prompts.Change{})
}

// createVersionLocked stores v as the prompt's next version, active in
// envs with ch's records (its actor and reason, under its promotion
// guard), in a transaction that holds the prompt's row lock from the
// start: tx, or one of its own when tx is nil. It reads the
// latest version id under the lock and makes v's id after it
// (prompts.NewIDAfter), which cannot fail. It also finds the version if
// CreateVersion's first statement did store it (database/sql runs a
// statement again on a new connection when the first broke without an
// answer), so that one call never stores two versions. The records' ids
// come after the prompt's latest record's, read under the lock; the
// events, the version's first, are appended before COMMIT.
func (s *Store) createVersionLocked(ctx context.Context, tx *tx, v prompts.PromptVersion, inputs []string, envs []prompts.Environment, ch prompts.Change) (prompts.PromptVersion, error) {
	own := tx == nil
	if own {
		var err error
		if tx, err = s.begin(ctx, append(splitQueries, qLockPrompt, qCreateVersion, qPointEnvironment, qLockPartials, qMissingPartials)...); err != nil {
			return prompts.PromptVersion{}, err
		}
		defer tx.Rollback() //nolint:errcheck // a no-op once committed
	}
	var (
		latest, latestDeployment   sql.NullString
		stored                     sql.NullInt64
		projectID                  string
		latestFormat, storedFormat sql.NullString
		envRows                    pq.StringArray
	)
	if len(envs) > 0 && !ch.AllowMissingPartials {
		// The partials guard's locks first, in their order: those of the
		// partials the content would have as a dotprompt template (its
		// format may be known only under the lock), the prompt's among them.
		guess := v.Partials
		if v.TemplateFormat == "" {
			guess, _ = prompts.TemplatePartials(prompts.FormatDotprompt, v.Content)
		}
		if len(guess) > 0 {
			if err := lockPartials(ctx, tx, v.PromptID, guess); err != nil {
				return prompts.PromptVersion{}, s.fail(ctx, err)
			}
		}
	}
	lock, err := tx.stmt(ctx, qLockPrompt)
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	names := make(pq.StringArray, len(envs))
	for i, e := range envs {
		names[i] = string(e)
	}
	err = lock.QueryRowContext(ctx, v.PromptID, v.ID, names).Scan(&latest, &latestDeployment, &stored, &projectID, &latestFormat, &storedFormat, &envRows)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	if stored.Valid {
		// The first statement did store the version, and its event.
		v.VersionNumber = int(stored.Int64)
		if v.TemplateFormat == "" {
			v.TemplateFormat = prompts.TemplateFormat(storedFormat.String)
			var sig prompts.Signature
			if sig, err = prompts.VersionSignature(v.TemplateFormat, v.Content, v.Metadata); err == nil {
				v.Variables = sig.Variables
				v.Partials, err = prompts.TemplatePartials(v.TemplateFormat, v.Content)
			}
		}
		return v, err // the deferred Rollback ends what only read
	}
	for _, env := range envs {
		if err := checkEnvironment(ctx, tx, projectID, env, envRows, "environments", ch.AllowProtected); err != nil {
			return prompts.PromptVersion{}, s.fail(ctx, err)
		}
	}
	if v.TemplateFormat == "" { // the latest version's, plain for the first
		v.TemplateFormat = prompts.TemplateFormat(latestFormat.String).Or(prompts.FormatPlain)
		sig, err := prompts.VersionSignature(v.TemplateFormat, v.Content, v.Metadata)
		if err != nil {
			return prompts.PromptVersion{}, err
		}
		v.Variables, inputs = sig.Variables, sig.Inputs
		if v.Partials, err = prompts.TemplatePartials(v.TemplateFormat, v.Content); err != nil {
			return prompts.PromptVersion{}, err
		}
	}
	first := v.ID
	v.ID = prompts.NewIDAfter(v.CreatedAt, latest.String)
	if latest.Valid && first <= latest.String { // the clock was behind the latest id
		s.log.LogAttrs(ctx, slog.LevelDebug, "sqlstore: version id behind the latest; stored under the prompt's lock",
			slog.String("prompt_id", v.PromptID), slog.String("id", first),
			slog.String("latest_version_id", latest.String), slog.String("new_id", v.ID))
	}
	create, err := tx.stmt(ctx, qCreateVersion)
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	// The event: appended by this statement when it is the transaction's
	// last, else at the commit, after the records.
	inline := own && len(envs) == 0
	err = create.QueryRowContext(ctx, append(versionArgs(v), inline, s.cutoff(), string(v.TemplateFormat), nil, inputsArg(inputs), pq.StringArray(v.Partials))...).Scan(&v.VersionNumber, &projectID)
	if errors.Is(err, sql.ErrNoRows) {
		// Cannot happen while the lock is held and the id is after the latest.
		err = errors.New("sqlstore: version not stored under the prompt's lock")
		return prompts.PromptVersion{}, prompts.Internal(err)
	}
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	if !inline {
		tx.emit(pendingEvent{typ: prompts.EventVersionCreated, projectID: projectID, promptID: v.PromptID, versionNumber: v.VersionNumber, at: v.CreatedAt})
	}
	record := latestDeployment.String
	for _, env := range envs {
		// The insert moved the revision on: the records do not again.
		record = prompts.NewIDAfter(v.CreatedAt, record)
		c := change{promptID: v.PromptID, projectID: projectID, env: env, Change: ch, now: v.CreatedAt, recordID: record, holds: true}
		if err := c.partialGuard(ctx, tx, v.Partials); err != nil { // locked first, above
			return prompts.PromptVersion{}, s.fail(ctx, err)
		}
		if _, err := c.point(ctx, tx, v.VersionNumber, nil, prompts.ActionActivate); err != nil {
			return prompts.PromptVersion{}, s.fail(ctx, err)
		}
	}
	if own {
		if err := tx.commit(ctx); err != nil {
			return prompts.PromptVersion{}, s.fail(ctx, err)
		}
	}
	return v, nil
}

// deploy is the change that in's Environments make: its actor, reason
// and promotion guard.
func deploy(in prompts.NewVersion) prompts.Change {
	return prompts.Change{Actor: in.Actor, Reason: in.Reason, AllowVariableChange: in.AllowVariableChange, AllowMissingPartials: in.AllowMissingPartials,
		AllowProtected: in.AllowProtected}
}

func versionArgs(v prompts.PromptVersion) []any {
	var md any
	if v.Metadata != "" {
		md = string(v.Metadata)
	}
	return []any{v.PromptID, v.ID, v.Content, nullString(v.ChangeSummary), md, v.CreatedAt, v.CreatedAt.UnixMicro(), pq.StringArray(v.Variables)}
}

// inputsArg is the argument of a version's typed inputs: '{}' for none.
func inputsArg(inputs []string) pq.StringArray {
	if inputs == nil {
		return pq.StringArray{}
	}
	return pq.StringArray(inputs)
}

// environments returns envs without duplicates.
func environments(envs []prompts.Environment) []prompts.Environment {
	var out []prompts.Environment
	for _, e := range envs {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// GetVersion implements prompts.Store.
func (s *Store) GetVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	return bounded(ctx, func() (prompts.PromptVersion, error) { return s.getVersion(ctx, promptID, number) })
}

func (s *Store) getVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	if !prompts.ValidID(promptID) {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	st, err := s.stmt(ctx, qGetVersion)
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	var r versionRow
	err = st.QueryRowContext(ctx, promptID, versionNumber(number)).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	if err != nil {
		return prompts.PromptVersion{}, s.fail(ctx, err)
	}
	v, ok := r.version(promptID)
	if !ok {
		return prompts.PromptVersion{}, prompts.NotFound("version")
	}
	return v, nil
}

// versionNumber returns n, or 0 (which no version has) when n is out of the
// column's range.
func versionNumber(n int) int {
	if n < 1 || n > math.MaxInt32 {
		return 0
	}
	return n
}

// afterAll is a position above every id: ids are ULIDs, whose characters
// all sort below '~' in the "C" collation.
const afterAll = "~"

// ListVersions implements prompts.Store. It reads the index (prompt_id,
// id) backwards from the page's position.
func (s *Store) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	return boundedPage(ctx, func() ([]prompts.PromptVersion, bool, error) { return s.listVersions(ctx, promptID, p) })
}

func (s *Store) listVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	if !prompts.ValidID(promptID) {
		return nil, false, prompts.NotFound("prompt")
	}
	before := p.After
	if before == "" {
		before = afterAll
	}
	n := p.Size()
	st, err := s.stmt(ctx, qListVersions)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	rows, err := st.QueryContext(ctx, promptID, before, n+1)
	if err != nil {
		return nil, false, s.fail(ctx, err)
	}
	defer rows.Close()
	found := false
	out := make([]prompts.PromptVersion, 0, min(n+1, 16))
	for rows.Next() {
		found = true
		var r versionRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, false, s.fail(ctx, err)
		}
		if v, ok := r.version(promptID); ok {
			out = append(out, v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.fail(ctx, err)
	}
	if !found {
		return nil, false, prompts.NotFound("prompt")
	}
	if len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

// versionRow receives the columns versionCols, which an outer join may
// leave NULL.
type versionRow struct {
	id, content, summary, metadata sql.NullString
	number                         sql.NullInt64
	created                        sql.NullTime
	variables                      pq.StringArray
	format                         sql.NullString
	partials                       pq.StringArray
}

func (r *versionRow) dest() []any {
	return []any{&r.id, &r.number, &r.content, &r.summary, &r.metadata, &r.created, &r.variables, &r.format, &r.partials}
}

// version returns the version, or false when the columns were NULL.
func (r *versionRow) version(promptID string) (prompts.PromptVersion, bool) {
	if !r.id.Valid {
		return prompts.PromptVersion{}, false
	}
	v := prompts.PromptVersion{
		ID:             r.id.String,
		PromptID:       promptID,
		VersionNumber:  int(r.number.Int64),
		Content:        r.content.String,
		Metadata:       prompts.Metadata(r.metadata.String),
		CreatedAt:      r.created.Time.UTC(),
		Variables:      []string(r.variables),
		TemplateFormat: prompts.TemplateFormat(r.format.String).Or(prompts.FormatPlain),
	}
	if v.Variables == nil {
		v.Variables = []string{}
	}
	if v.Partials = []string(r.partials); v.Partials == nil {
		v.Partials = []string{}
	}
	if r.summary.Valid {
		v.ChangeSummary = &r.summary.String
	}
	return v, true
}
