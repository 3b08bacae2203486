package sqlstore

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// A write that needs more than one statement runs them in a transaction,
// in the shape every such write of the Store takes:
//
//	tx, err := s.begin(ctx, qLockSomething, qWriteSomething)
//	if err != nil {
//		return err
//	}
//	defer tx.Rollback() // a no-op once committed
//	if err := doTheWork(ctx, tx, ...); err != nil { // lower-case helpers taking tx
//		return s.fail(ctx, err)
//	}
//	return s.fail(ctx, tx.commit(ctx)) // appends the events tx.emit made, then commits
//
// The reads stay single statements outside any transaction: a statement
// reads one snapshot, and needs no BEGIN or COMMIT.

// tx is a transaction of the Store.
type tx struct {
	*sqlx.Tx
	s      *Store
	events []pendingEvent // appended by commit
}

// begin prepares the statements the transaction uses (and qAppendEvents,
// for its commit), then starts it
// READ COMMITTED, whatever the database's default isolation: the writes
// lock what they change (the prompt's row first), and under READ
// COMMITTED a writer that waited for a lock sees the row as the writer
// before it left it, rather than failing to serialize. Its error is
// already the domain's.
//
// The statements are prepared first because preparing takes a connection
// of its own from the pool: inside the transaction, with every connection
// held by a transaction, it would wait forever.
func (s *Store) begin(ctx context.Context, uses ...query) (*tx, error) {
	for _, q := range append(uses, qAppendEvents) {
		if _, err := s.stmt(ctx, q); err != nil {
			return nil, s.fail(ctx, err)
		}
	}
	t, err := s.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &tx{Tx: t, s: s}, nil
}

// stmt returns the Store's prepared statement q, bound to the transaction.
// q must be among the statements begin prepared; one that is not (or that
// Close took away since) is prepared on the transaction's own connection,
// for this transaction only.
func (t *tx) stmt(ctx context.Context, q query) (*sqlx.Stmt, error) {
	if st := t.s.stmts[q].Load(); st != nil {
		return t.StmtxContext(ctx, st), nil
	}
	return t.PreparexContext(ctx, t.s.queries[q])
}
