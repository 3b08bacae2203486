package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/promptkit/prompts"
)

// The ops of the writes that take a prompts.Idempotency.
const (
	opCreatePrompt  = "create_prompt"
	opCreateVersion = "create_version"
	opRollback      = "rollback"
)

// idempotent runs write, a write made with the key idem, in one
// transaction with its record: it first claims the key (waiting for a
// concurrent write of the same key to end), answers a live record's
// result, read again, instead of writing (or ErrIdempotencyKeyReused),
// and else writes and records what the write made in the same
// transaction, removing a few records past their retention on the way.
// uses are the statements write runs.
func idempotent[T prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](ctx context.Context, s *Store, op string, idem prompts.Idempotency,
	write func(ctx context.Context, tx *tx) (T, error), uses ...query) (T, error) {
	var zero T
	tx, err := s.begin(ctx, append(uses, qClaimIdempotency, qGetIdempotency, qSaveIdempotency, qExpireIdempotency, qGetPrompt, qGetVersion, qGetActive)...)
	if err != nil {
		return zero, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	now := s.clock.Now()
	cutoff := now.Add(-prompts.IdempotencyRetention)
	key := idem.RecordKey()
	claim, err := tx.stmt(ctx, qClaimIdempotency)
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	var claimed bool
	err = claim.QueryRowContext(ctx, key[:], op, idem.RequestDigest(), now, cutoff).Scan(&claimed)
	if errors.Is(err, sql.ErrNoRows) {
		return replayRecord[T](ctx, s, tx, op, idem)
	}
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	v, err := write(ctx, tx)
	if err != nil {
		return zero, s.fail(ctx, err) // rolled back: no record
	}
	rec := prompts.NewIdempotencyRecord(op, idem, now, v)
	for _, step := range []struct {
		q    query
		args []any
	}{
		{qSaveIdempotency, []any{key[:], rec.PromptID, nullIfZero(rec.VersionID), nullIfZero(rec.VersionNumber), nullIfZero(string(rec.Environment))}},
		{qExpireIdempotency, []any{cutoff}},
	} {
		st, err := tx.stmt(ctx, step.q)
		if err != nil {
			return zero, s.fail(ctx, err)
		}
		if _, err := st.ExecContext(ctx, step.args...); err != nil {
			return zero, s.fail(ctx, err)
		}
	}
	if err := tx.commit(ctx); err != nil {
		return zero, s.fail(ctx, err)
	}
	return v, nil
}

// nullIfZero is v, or NULL for its zero value.
func nullIfZero[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// replayRecord answers a write whose key a live record holds.
func replayRecord[T prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](ctx context.Context, s *Store, tx *tx, op string, idem prompts.Idempotency) (T, error) {
	var zero T
	st, err := tx.stmt(ctx, qGetIdempotency)
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	key := idem.RecordKey()
	var (
		rec                          prompts.IdempotencyRecord
		promptID, versionID, envName sql.NullString
		versionNumber                sql.NullInt64
	)
	err = st.QueryRowContext(ctx, key[:]).Scan(&rec.Op, &rec.Request, &promptID, &versionID, &versionNumber, &envName, &rec.At)
	if errors.Is(err, sql.ErrNoRows) {
		// Removed since the claim: it expired in between, by the clock of
		// another process. A repeat now writes anew.
		return zero, prompts.Unavailable(fmt.Errorf("sqlstore: the record of idempotency key %q expired while read; retry", idem.Key))
	}
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	rec.PromptID, rec.VersionID, rec.VersionNumber = promptID.String, versionID.String, int(versionNumber.Int64)
	rec.Environment = prompts.Environment(envName.String)
	if rec.PromptID == "" && rec.Op == op && rec.Request == idem.RequestDigest() {
		return zero, prompts.Internal(fmt.Errorf("sqlstore: the record of idempotency key %q names no result", idem.Key))
	}
	v, err := prompts.Replay(rec, op, idem, func(r prompts.IdempotencyRecord) (T, error) { return reread[T](ctx, tx, r) })
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	return v, nil
}

// reread returns what the record r names, as it is now, read in tx: the
// prompt, the version, or the prompt with the version active in the
// environment (see prompts.Replay).
func reread[T prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](ctx context.Context, tx *tx, r prompts.IdempotencyRecord) (T, error) {
	var v T
	switch p := any(&v).(type) {
	case *prompts.Prompt:
		st, err := tx.stmt(ctx, qGetPrompt)
		if err != nil {
			return v, err
		}
		*p, err = scanPrompt(st.QueryRowContext(ctx, r.PromptID))
		if errors.Is(err, sql.ErrNoRows) {
			return v, prompts.NotFound("prompt")
		}
		return v, err
	case *prompts.PromptVersion:
		st, err := tx.stmt(ctx, qGetVersion)
		if err != nil {
			return v, err
		}
		var row versionRow
		err = st.QueryRowContext(ctx, r.PromptID, versionNumber(r.VersionNumber)).Scan(row.dest()...)
		if errors.Is(err, sql.ErrNoRows) {
			return v, prompts.NotFound("prompt")
		}
		if err != nil {
			return v, err
		}
		ver, ok := row.version(r.PromptID)
		if !ok || ver.ID != r.VersionID {
			return v, prompts.NotFound("version")
		}
		*p = ver
		return v, nil
	case *prompts.ActivePrompt:
		st, err := tx.stmt(ctx, qGetActive)
		if err != nil {
			return v, err
		}
		*p, err = scanActive(ctx, tx.stmt, st.QueryRowContext(ctx, r.PromptID, string(r.Environment)), r.Environment)
		return v, err
	}
	return v, nil
}
