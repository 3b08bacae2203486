package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
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
// result instead of writing (or ErrIdempotencyKeyReused), and else writes
// and keeps the result in the same transaction, removing a few records
// past their retention on the way. uses are the statements write runs.
func idempotent[T prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](ctx context.Context, s *Store, op string, idem prompts.Idempotency,
	write func(ctx context.Context, tx *tx) (T, error), uses ...query) (T, error) {
	var zero T
	tx, err := s.begin(ctx, append(uses, qClaimIdempotency, qGetIdempotency, qSaveIdempotency, qExpireIdempotency)...)
	if err != nil {
		return zero, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op once committed
	now := s.clock.Now()
	cutoff := now.Add(-prompts.IdempotencyRetention)
	claim, err := tx.stmt(ctx, qClaimIdempotency)
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	var claimed bool
	err = claim.QueryRowContext(ctx, idem.Scope, idem.Key, op, idem.Request, now, cutoff).Scan(&claimed)
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
	b, err := wire.JSON(v)
	if err != nil {
		return zero, prompts.Internal(err)
	}
	for _, step := range []struct {
		q    query
		args []any
	}{
		{qSaveIdempotency, []any{idem.Scope, idem.Key, b}},
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
	if err := tx.Commit(); err != nil {
		return zero, s.fail(ctx, err)
	}
	return v, nil
}

// replayRecord answers a write whose key a live record holds.
func replayRecord[T prompts.Prompt | prompts.PromptVersion | prompts.ActivePrompt](ctx context.Context, s *Store, tx *tx, op string, idem prompts.Idempotency) (T, error) {
	var zero T
	st, err := tx.stmt(ctx, qGetIdempotency)
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	var rec prompts.IdempotencyRecord
	err = st.QueryRowContext(ctx, idem.Scope, idem.Key).Scan(&rec.Op, &rec.Request, &rec.Result, &rec.At)
	if errors.Is(err, sql.ErrNoRows) {
		// Removed since the claim: it expired in between, by the clock of
		// another process. A repeat now writes anew.
		return zero, prompts.Unavailable(fmt.Errorf("sqlstore: the record of idempotency key %q expired while read; retry", idem.Key))
	}
	if err != nil {
		return zero, s.fail(ctx, err)
	}
	if rec.Result == nil && rec.Op == op && rec.Request == idem.Request {
		return zero, prompts.Internal(fmt.Errorf("sqlstore: the record of idempotency key %q has no result", idem.Key))
	}
	return prompts.Replay[T](rec, op, idem)
}
